// ConjugateGradient: solves to its tolerance, as Eigen's CG does with the same preconditioner,
// with the same bits on any thread count.

#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <random>
#include <vector>

#include <doctest/doctest.h>
#include <Eigen/IterativeLinearSolvers>

#include "bristle/integrator/conjugate_gradient.hpp"

using namespace bristle;

namespace {

/// `rods` banded blocks of `size` rows (half-bandwidth 4) coupled by random symmetric entries
/// between blocks, diagonally dominant (SPD): the shape of a brush's system with contact.
struct CoupledSystem {
  SparseMatrix matrix;
  std::vector<std::pair<int, int>> blocks;
  VecX rhs;
};

CoupledSystem coupled_system(int rods, int size, int couplings, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::uniform_int_distribution<int> row(0, rods * size - 1);
  const int n = rods * size;
  std::vector<Eigen::Triplet<double>> entries;
  VecX diagonal = VecX::Zero(n);
  auto add = [&](int i, int j, double value) {
    entries.emplace_back(i, j, value);
    entries.emplace_back(j, i, value);
    diagonal[i] += std::abs(value);
    diagonal[j] += std::abs(value);
  };
  CoupledSystem system;
  for (int r = 0; r < rods; ++r) {
    system.blocks.emplace_back(r * size, (r + 1) * size);
    for (int i = r * size; i < (r + 1) * size; ++i)
      for (int j = std::max(r * size, i - 4); j < i; ++j) add(i, j, u(rng));
  }
  for (int k = 0; k < couplings; ++k) {
    const int i = row(rng), j = row(rng);
    if (i / size != j / size) add(i, j, 3.0 * u(rng));
  }
  for (int i = 0; i < n; ++i) entries.emplace_back(i, i, diagonal[i] + 0.05 + 0.05 * std::abs(u(rng)));
  system.matrix.resize(n, n);
  system.matrix.setFromTriplets(entries.begin(), entries.end());
  system.rhs = VecX::NullaryExpr(n, [&]() { return u(rng); });
  return system;
}

}  // namespace

TEST_CASE("conjugate gradient: reaches its tolerance on a coupled system, as Eigen's CG does") {
  // 24000 rows: the vector passes run on threads (more than 16384 entries).
  const CoupledSystem system = coupled_system(240, 100, 20000, 4);
  const double tolerance = 1e-10;
  ConjugateGradient cg;
  cg.preconditioner().set_blocks(system.blocks);
  cg.set_tolerance(tolerance);
  cg.set_max_iterations(1000);
  cg.compute(system.matrix);
  const VecX x = cg.solve_with_guess(system.rhs, VecX::Zero(system.rhs.size()));
  CHECK(cg.info() == Eigen::Success);
  CHECK(cg.iterations() > 3);  // the coupling is CG's to resolve: not one iteration
  const double residual = (system.rhs - system.matrix * x).norm() / system.rhs.norm();
  CHECK(residual < 10.0 * tolerance);
  CHECK(cg.error() <= tolerance);
  CHECK(cg.residual_norm(system.matrix, system.rhs, x) == doctest::Approx(residual * system.rhs.norm()).epsilon(1e-6));

  Eigen::ConjugateGradient<SparseMatrix, Eigen::Lower | Eigen::Upper, RodBlockPreconditioner> eigen_cg;
  eigen_cg.preconditioner().set_blocks(system.blocks);
  eigen_cg.setTolerance(tolerance);
  eigen_cg.setMaxIterations(1000);
  eigen_cg.compute(system.matrix);
  const VecX eigen_x = eigen_cg.solve(system.rhs);
  CHECK(std::abs(static_cast<int>(eigen_cg.iterations()) - cg.iterations()) <= 1);
  CHECK((x - eigen_x).norm() <= 1e-8 * eigen_x.norm());
}

TEST_CASE("conjugate gradient: the same bits on one, two and three threads, from a guess") {
  const CoupledSystem system = coupled_system(240, 100, 20000, 8);
  std::mt19937 rng(2);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const VecX guess = VecX::NullaryExpr(system.rhs.size(), [&]() { return u(rng); });
  VecX first;
  int first_iterations = -1;
  for (const int threads : {1, 2, 3}) {
    CAPTURE(threads);
    ConjugateGradient cg;
    cg.preconditioner().set_blocks(system.blocks);
    cg.preconditioner().set_threads(threads);
    cg.set_threads(threads);
    cg.set_tolerance(1e-12);
    cg.set_max_iterations(1000);
    cg.compute(system.matrix);
    const VecX x = cg.solve_with_guess(system.rhs, guess);
    REQUIRE(cg.info() == Eigen::Success);
    if (threads == 1) {
      first = x;
      first_iterations = cg.iterations();
      continue;
    }
    CHECK(cg.iterations() == first_iterations);
    CHECK(std::memcmp(x.data(), first.data(), sizeof(double) * static_cast<std::size_t>(x.size())) == 0);
  }
}

TEST_CASE("conjugate gradient: a zero right-hand side, a start already within tolerance, too few iterations") {
  const CoupledSystem system = coupled_system(30, 50, 400, 5);
  const int n = static_cast<int>(system.rhs.size());
  ConjugateGradient cg;
  cg.preconditioner().set_blocks(system.blocks);
  cg.set_tolerance(1e-10);
  cg.set_max_iterations(1000);
  cg.compute(system.matrix);
  // b = 0: x = 0 whatever the guess, as Eigen's CG returns.
  const VecX zero = cg.solve_with_guess(VecX::Zero(n), VecX::Ones(n));
  CHECK(zero.isZero(0.0));
  CHECK(cg.info() == Eigen::Success);
  CHECK(cg.iterations() == 0);
  CHECK(cg.error() == 0.0);
  // The answer (to 1e-14) as the guess of a solve to 1e-10: no iteration, the guess returned.
  cg.set_tolerance(1e-14);
  const VecX solved = cg.solve_with_guess(system.rhs, VecX::Zero(n));
  REQUIRE(cg.info() == Eigen::Success);
  REQUIRE((system.rhs - system.matrix * solved).norm() < 1e-12 * system.rhs.norm());
  cg.set_tolerance(1e-10);
  const VecX again = cg.solve_with_guess(system.rhs, solved);
  CHECK(cg.iterations() == 0);
  CHECK(again == solved);
  // No iteration allowed: the guess back, not converged.
  cg.set_max_iterations(0);
  const VecX none = cg.solve_with_guess(system.rhs, VecX::Zero(n));
  CHECK(none.isZero(0.0));
  CHECK(cg.iterations() == 0);
  CHECK(cg.info() == Eigen::NoConvergence);
  CHECK(cg.error() == doctest::Approx(1.0));
  cg.set_max_iterations(1000);
  // A right-hand side of the wrong size is refused, not read past its end.
  CHECK_THROWS_AS(cg.solve_with_guess(VecX::Ones(n - 1), VecX::Zero(n - 1)), std::invalid_argument);
  CHECK_THROWS_AS(cg.solve_with_guess(system.rhs, VecX::Zero(n + 1)), std::invalid_argument);
  // Two iterations of a tight solve: not converged, and the error says by how much.
  cg.set_tolerance(1e-14);
  cg.set_max_iterations(2);
  const VecX short_x = cg.solve_with_guess(system.rhs, VecX::Zero(n));
  CHECK(cg.info() == Eigen::NoConvergence);
  CHECK(cg.iterations() == 2);
  const double residual = (system.rhs - system.matrix * short_x).norm() / system.rhs.norm();
  CHECK(cg.error() == doctest::Approx(residual).epsilon(1e-6));
  CHECK(cg.error() > 1e-14);
}

TEST_CASE("conjugate gradient: a NaN in the matrix stops the iteration, not converged") {
  CoupledSystem system = coupled_system(30, 50, 400, 6);
  system.matrix.coeffRef(7, 7) = std::numeric_limits<double>::quiet_NaN();
  ConjugateGradient cg;
  cg.preconditioner().set_blocks(system.blocks);
  cg.set_tolerance(1e-10);
  cg.set_max_iterations(1000);
  cg.compute(system.matrix);
  cg.solve_with_guess(system.rhs, VecX::Zero(system.rhs.size()));
  CHECK(cg.info() == Eigen::NoConvergence);
  CHECK(cg.iterations() < 1000);  // stopped at the NaN, not run to the limit
  CHECK(!std::isfinite(cg.error()));
}

TEST_CASE("conjugate gradient: on active ranges, only their rows are solved, with the same bits on any thread count") {
  // Three systems side by side, none coupled to another: the first and last active, the
  // middle one held. Its right-hand side is not zero here, so a CG that solved every row
  // would move it.
  const CoupledSystem first = coupled_system(40, 100, 3000, 11);
  const CoupledSystem held = coupled_system(60, 100, 3000, 12);
  const CoupledSystem last = coupled_system(50, 100, 3000, 13);
  const int n1 = static_cast<int>(first.rhs.size()), n2 = static_cast<int>(held.rhs.size());
  const int n = n1 + n2 + static_cast<int>(last.rhs.size());
  std::vector<Eigen::Triplet<double>> entries;
  std::vector<std::pair<int, int>> blocks;
  std::vector<char> active_blocks;
  VecX rhs(n);
  int offset = 0;
  for (const CoupledSystem* part : {&first, &held, &last}) {
    for (int k = 0; k < part->matrix.outerSize(); ++k)
      for (SparseMatrix::InnerIterator it(part->matrix, k); it; ++it)
        entries.emplace_back(offset + static_cast<int>(it.row()), offset + k, it.value());
    for (const auto& [begin, end] : part->blocks) {
      blocks.emplace_back(offset + begin, offset + end);
      active_blocks.push_back(part != &held);
    }
    rhs.segment(offset, part->rhs.size()) = part->rhs;
    offset += static_cast<int>(part->rhs.size());
  }
  SparseMatrix matrix(n, n);
  matrix.setFromTriplets(entries.begin(), entries.end());
  const std::vector<std::pair<int, int>> ranges = {{0, n1}, {n1 + n2, n}};
  const double tolerance = 1e-10;
  VecX first_x;
  int first_iterations = -1;
  for (const int threads : {1, 2, 3}) {
    CAPTURE(threads);
    ConjugateGradient cg;
    cg.preconditioner().set_blocks(blocks);
    cg.preconditioner().set_threads(threads);
    cg.set_threads(threads);
    cg.set_tolerance(tolerance);
    cg.set_max_iterations(1000);
    // A whole solve first: its work vectors hold the held rows' values when the ranges come.
    cg.compute(matrix);
    const VecX whole = cg.solve_with_guess(rhs, VecX::Zero(n));
    REQUIRE(cg.info() == Eigen::Success);
    REQUIRE(whole.segment(n1, n2).norm() > 0.0);

    cg.set_active_ranges(ranges);
    cg.preconditioner().set_active_blocks(active_blocks);
    cg.compute(matrix);
    const VecX x = cg.solve_with_guess(rhs, VecX::Zero(n));
    REQUIRE(cg.info() == Eigen::Success);
    CHECK(x.segment(n1, n2).isZero(0.0));  // held: left at the guess
    // Each active system solved to the tolerance, measured on the active rows' right-hand side.
    const double active_norm = std::sqrt(first.rhs.squaredNorm() + last.rhs.squaredNorm());
    const double residual = std::sqrt((first.rhs - first.matrix * x.head(n1)).squaredNorm() +
                                      (last.rhs - last.matrix * x.tail(n - n1 - n2)).squaredNorm());
    CHECK(residual <= 10.0 * tolerance * active_norm);
    CHECK((x.head(n1) - whole.head(n1)).norm() <= 1e-8 * whole.head(n1).norm());
    VecX active_rhs = rhs;
    active_rhs.segment(n1, n2).setZero();
    CHECK(cg.residual_norm(matrix, active_rhs, x) == doctest::Approx(residual).epsilon(1e-6));
    if (threads == 1) {
      first_x = x;
      first_iterations = cg.iterations();
    } else {
      CHECK(cg.iterations() == first_iterations);
      CHECK(std::memcmp(x.data(), first_x.data(), sizeof(double) * static_cast<std::size_t>(n)) == 0);
    }
    // A range of every row is the whole: the same bits as without ranges.
    cg.set_active_ranges({{0, n1}, {n1, n}});
    cg.preconditioner().clear_active_blocks();
    cg.compute(matrix);
    const VecX all = cg.solve_with_guess(rhs, VecX::Zero(n));
    CHECK(std::memcmp(all.data(), whole.data(), sizeof(double) * static_cast<std::size_t>(n)) == 0);
    cg.clear_active_ranges();
  }
}

TEST_CASE("conjugate gradient: rods the coupling leaves alone solved by their factors, CG on the others") {
  // ImplicitEuler::cg_over_coupled_rods: blocks with no entry outside them are solved by their
  // own factors (RodBlockPreconditioner::block_exact, solve_block), CG runs on the coupled
  // blocks' rows only and tests against the whole |b| (set_reference_b_norm2). Together: the
  // whole system's solution to the tolerance.
  const CoupledSystem coupled = coupled_system(20, 50, 400, 12);
  const CoupledSystem alone = coupled_system(20, 50, 0, 13);
  const int half = static_cast<int>(coupled.rhs.size()), n = 2 * half;
  std::vector<Eigen::Triplet<double>> entries;
  for (const auto* part : {&coupled, &alone}) {
    const int shift = part == &alone ? half : 0;
    for (int col = 0; col < part->matrix.outerSize(); ++col)
      for (SparseMatrix::InnerIterator it(part->matrix, col); it; ++it)
        entries.emplace_back(static_cast<int>(it.row()) + shift, col + shift, it.value());
  }
  SparseMatrix m(n, n);
  m.setFromTriplets(entries.begin(), entries.end());
  VecX b(n);
  b << coupled.rhs, alone.rhs;
  std::vector<std::pair<int, int>> blocks;
  for (int k = 0; k < 40; ++k) blocks.emplace_back(50 * k, 50 * (k + 1));
  const double tolerance = 1e-8;
  ConjugateGradient cg;
  cg.preconditioner().set_blocks(blocks);
  cg.set_tolerance(tolerance);
  cg.set_max_iterations(1000);
  cg.compute(m);
  std::vector<std::pair<int, int>> cg_ranges;
  std::vector<char> cg_blocks(40, 0);
  VecX cg_b = b;
  for (int k = 0; k < 40; ++k) {
    bool between = false;
    for (int col = blocks[k].first; col < blocks[k].second; ++col)
      for (SparseMatrix::InnerIterator it(m, col); it; ++it)
        between = between || it.row() < blocks[k].first || it.row() >= blocks[k].second;
    CAPTURE(k);
    CHECK(cg.preconditioner().block_exact(k) == !between);
    if (k >= 20) CHECK(!between);
    if (between) {
      cg_ranges.push_back(blocks[k]);
      cg_blocks[k] = 1;
    } else {
      cg_b.segment(blocks[k].first, 50).setZero();
    }
  }
  REQUIRE(cg_ranges.size() >= 10);
  cg.set_active_ranges(cg_ranges);
  cg.preconditioner().set_active_blocks(cg_blocks);
  const double b_norm2 = ConjugateGradient::squared_norm(b, 1);
  cg.set_reference_b_norm2(b_norm2);
  VecX x = cg.solve_with_guess(cg_b, VecX::Zero(n));
  CHECK(cg.info() == Eigen::Success);
  CHECK(cg.error() <= tolerance);
  const int split_iterations = cg.iterations();
  // b and the guess are read on the ranges only: the whole b, and a guess nonzero elsewhere,
  // give the same bits there, the guess's entries elsewhere.
  VecX guess = VecX::Zero(n);
  for (int k = 0; k < 40; ++k)
    if (!cg_blocks[k]) guess.segment(blocks[k].first, 50).setConstant(0.25);
  const VecX y = cg.solve_with_guess(b, guess);
  for (const auto& [begin, end] : cg_ranges)
    CHECK(std::memcmp(x.data() + begin, y.data() + begin, sizeof(double) * (end - begin)) == 0);
  for (int k = 0; k < 40; ++k)
    if (!cg_blocks[k]) CHECK(y.segment(blocks[k].first, 50).cwiseEqual(0.25).all());
  cg.set_reference_b_norm2(0.0);
  cg.clear_active_ranges();
  cg.preconditioner().clear_active_blocks();
  for (int k = 0; k < 40; ++k)
    if (!cg_blocks[k]) cg.preconditioner().solve_block(k, b, x);
  // The exact blocks' rows: their own solve, to round-off; the whole: CG's tolerance.
  for (int k = 0; k < 40; ++k)
    if (!cg_blocks[k]) {
      const VecX r = (b - m * x).segment(blocks[k].first, 50);
      CHECK(r.norm() <= 1e-12 * b.segment(blocks[k].first, 50).norm());
    }
  CHECK((b - m * x).norm() <= 2.0 * tolerance * std::sqrt(b_norm2));
  // Against its own b (the coupled rows' only) the test is stricter: as many iterations or more.
  cg.set_active_ranges(cg_ranges);
  cg.preconditioner().set_active_blocks(cg_blocks);
  cg.solve_with_guess(cg_b, VecX::Zero(n));
  CHECK(cg.iterations() >= split_iterations);
  CHECK(cg.error() <= tolerance);
  // A reference 1e4 times larger: the test stops where |r| is 1e4 times larger.
  cg.set_reference_b_norm2(1e8 * b_norm2);
  const VecX early = cg.solve_with_guess(cg_b, VecX::Zero(n));
  CHECK(cg.iterations() < split_iterations);
  CHECK(cg.error() <= tolerance);
  CHECK(cg.residual_norm(m, cg_b, early) <= 1e4 * tolerance * std::sqrt(b_norm2));
  // A block that is not positive definite is factored by no one: not exact.
  SparseMatrix indefinite = m;
  for (int i = blocks[30].first; i < blocks[30].second; ++i) indefinite.coeffRef(i, i) = -indefinite.coeffRef(i, i);
  ConjugateGradient other;
  other.preconditioner().set_blocks(blocks);
  other.compute(indefinite);
  CHECK(!other.preconditioner().block_exact(30));
  CHECK(other.preconditioner().block_exact(31));
  // A zero right-hand side on the coupled rows is a zero solution there, whatever the reference.
  cg.set_reference_b_norm2(b_norm2);
  const VecX zero = cg.solve_with_guess(VecX::Zero(n), VecX::Zero(n));
  CHECK(zero.cwiseAbs().maxCoeff() == 0.0);
}

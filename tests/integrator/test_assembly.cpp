// Whole-system checks of SystemAssembler: the assembled gradient and stiffness against finite
// differences of the assembled energy, definiteness of the matrix CG receives, and the
// invariance of the elastic energy under rigid motions.

#include <algorithm>
#include <cstring>
#include <random>

#include <doctest/doctest.h>
#include <Eigen/Eigenvalues>
#include <Eigen/SparseCholesky>

#include "bristle/integrator/assembly.hpp"
#include "support/finite_difference.hpp"
#include "support/rod_builders.hpp"

using namespace bristle;
using namespace bristle::test;

namespace {

/// x plus uniform noise of amplitude `amplitude` on every DOF.
VecX perturbed(const VecX& x, double amplitude, std::mt19937& rng) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  VecX y = x;
  for (int i = 0; i < y.size(); ++i) y[i] += amplitude * u(rng);
  return y;
}

/// A point load on rod 1's vertex 3, ramping in over 2 s.
void add_ramped_load(Model& model) {
  PointLoad load;
  load.rod = 1;
  load.vertex = 3;
  load.force = Vec3(0.3, -0.4, 0.7);
  load.ramp = 2.0;
  model.loads.push_back(load);
}

/// Two random curved rods (rest shape = their initial vertices), gravity along a direction
/// with every component nonzero, and a point load on the second rod, ramping in.
Model random_model(int dimension, std::mt19937& rng, std::vector<int> fixed0 = {}) {
  std::vector<Rod> rods;
  rods.push_back(rod_from_vertices(random_vertices(7, 0.1, 0.8, dimension, rng), dimension, std::move(fixed0),
                                   soft_material(), RestShape::Initial, "a"));
  rods.push_back(rod_from_vertices(random_vertices(5, 0.1, 1.2, dimension, rng), dimension, {},
                                   make_material(1200.0, 0.015, 3.0e5), RestShape::Initial, "b"));
  Model model = make_model(dimension, std::move(rods), Vec3(1.5, -9.81, 2.5));
  add_ramped_load(model);
  return model;
}

/// The free rows and columns of a matrix over all DOFs.
Eigen::MatrixXd free_block(const Model& model, const Eigen::MatrixXd& full) {
  const DofLayout& layout = model.layout;
  Eigen::MatrixXd out(layout.free_dof_count(), layout.free_dof_count());
  for (int i = 0; i < layout.dof_count(); ++i)
    for (int j = 0; j < layout.dof_count(); ++j)
      if (layout.free_index(i) >= 0 && layout.free_index(j) >= 0)
        out(layout.free_index(i), layout.free_index(j)) = full(i, j);
  return out;
}

void check_assembled_derivatives(int dimension, std::vector<int> fixed0, std::uint32_t seed) {
  std::mt19937 rng(seed);
  Model model = random_model(dimension, rng, std::move(fixed0));
  SystemAssembler assembler(model);
  const double time = 0.7;  // mid-ramp: the load is 0.35 of its full value
  const VecX x = perturbed(initial_state(model).positions, 0.01, rng);

  auto energy = [&](const VecX& p) { return assembler.potential_energies(p, time).potential(); };
  auto gradient = [&](const VecX& p) {
    VecX g;
    assembler.assemble(p, time, HessianProjection::Exact, 0.0, g);
    return g;
  };
  const double step = 1e-6;
  const VecX g = gradient(x);
  const Eigen::MatrixXd jacobian = fd_jacobian(gradient, x, step);

  const Comparison gc = compare_matrices(g, fd_gradient(energy, x, step), 1e-6, 1e-3);
  INFO("gradient: ", gc.message);
  CHECK(gc.ok);
  // The bending part must be visible at this tolerance, or a bending bug could hide behind
  // the (stiffer) stretching.
  CHECK(assembler.potential_energies(x, time).bend > 1e-4 * assembler.potential_energies(x, time).stretch);

  VecX w(x.size());
  for (int i = 0; i < w.size(); ++i) w[i] = std::uniform_real_distribution<double>(-1.0, 1.0)(rng);
  VecX g2, kw;
  assembler.assemble(x, time, HessianProjection::Exact, 1.0, g2, &w, &kw);
  CHECK((g2 - g).cwiseAbs().maxCoeff() == 0.0);  // the matrix does not change the gradient
  const Eigen::MatrixXd k = Eigen::MatrixXd(assembler.matrix());
  REQUIRE(k.rows() == model.layout.free_dof_count());

  const Comparison kc = compare_matrices(k, free_block(model, jacobian), 1e-6, 1.0);
  INFO("free-free stiffness: ", kc.message);
  CHECK(kc.ok);
  CHECK((k - k.transpose()).cwiseAbs().maxCoeff() <= 1e-12 * k.cwiseAbs().maxCoeff());

  // K w over all DOFs, fixed columns included (the prescribed-velocity coupling).
  const Comparison pc = compare_matrices(kw, jacobian * w, 1e-6, 1.0);
  INFO("K w: ", pc.message);
  CHECK(pc.ok);
  if (model.layout.free_dof_count() == model.layout.dof_count()) {
    const VecX matrix_w = assembler.matrix() * w;
    CHECK((kw - matrix_w).cwiseAbs().maxCoeff() <= 1e-10 * matrix_w.cwiseAbs().maxCoeff());
  }

  // matrix_scale multiplies the matrix and only the matrix.
  VecX g3, kw3;
  assembler.assemble(x, time, HessianProjection::Exact, 0.25, g3, &w, &kw3);
  CHECK((Eigen::MatrixXd(assembler.matrix()) - 0.25 * k).cwiseAbs().maxCoeff() <= 1e-14 * k.cwiseAbs().maxCoeff());
  CHECK((kw3 - kw).cwiseAbs().maxCoeff() == 0.0);
}

/// Lumped masses added on the diagonal of the free-free matrix, as ImplicitEuler does.
void add_masses(const Model& model, SystemAssembler& assembler) {
  const VecX mass = model.dof_masses();
  double* values = assembler.matrix().valuePtr();
  for (int dof = 0; dof < model.layout.dof_count(); ++dof) {
    const int f = model.layout.free_index(dof);
    if (f >= 0) values[assembler.diagonal_slots()[f]] += mass[dof];
  }
}

double smallest_eigenvalue(const SparseMatrix& m) {
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(Eigen::MatrixXd(m), Eigen::EigenvaluesOnly);
  return eig.eigenvalues().minCoeff();
}
double largest_eigenvalue(const SparseMatrix& m) {
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(Eigen::MatrixXd(m), Eigen::EigenvaluesOnly);
  return eig.eigenvalues().maxCoeff();
}

/// A stressed configuration of a small rod: the model (rest shape) and the deformed positions.
struct Stressed {
  Model model;
  VecX x;
};

Stressed compressed(int dimension) {
  // Straight rest shape, vertices squeezed to 60% of the length (with a little noise so that
  // the 3D bending stencils are not exactly straight).
  Stressed s{single_rod_model(dimension, straight_rod(8, Vec3::Zero(), Vec3(0.8, 0.0, 0.0), dimension)), {}};
  s.x = 0.6 * initial_state(s.model).positions;
  return s;
}

Stressed zigzag(int dimension, double turn, std::uint32_t seed) {
  // Rest shape straight; positions a zig-zag with the same edge lengths, and (3D) lifted out
  // of the plane a little.
  Stressed s{single_rod_model(dimension, straight_rod(8, Vec3::Zero(), Vec3(0.8, 0.0, 0.0), dimension)), {}};
  s.x = initial_state(s.model).positions;
  set_rod_positions(s.model, s.x, 0, zigzag_vertices(8, 0.1, turn));
  if (dimension == 3) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    for (int v = 0; v < 9; ++v) s.x[3 * v + 2] += 0.01 * u(rng);
  }
  return s;
}

Stressed curved_rest_bent_further(int dimension, std::uint32_t seed) {
  // Curved rest shape (nonzero rest angles), deformed strongly and randomly.
  std::mt19937 rng(seed);
  Stressed s{single_rod_model(dimension, rod_from_vertices(random_vertices(8, 0.1, 0.9, dimension, rng), dimension)),
             {}};
  s.x = perturbed(initial_state(s.model).positions, 0.04, rng);
  return s;
}

}  // namespace

TEST_CASE("integrator assembly: whole-rod gradient, stiffness and K w match finite differences") {
  for (int dimension : {2, 3}) {
    CAPTURE(dimension);
    for (std::uint32_t seed : {1u, 2u, 3u}) {
      CAPTURE(seed);
      SUBCASE("no fixed vertices") { check_assembled_derivatives(dimension, {}, seed); }
      SUBCASE("clamped root and a fixed interior vertex") {
        check_assembled_derivatives(dimension, {0, 1, 4}, seed);
      }
    }
  }
}

TEST_CASE("integrator assembly: each rod's share of the potential is its own energies, gravity and loads") {
  // rod_potentials is what ImplicitEuler::keep_best_contact_iterate ranks each rod's iterates
  // by: its shares must add up to the whole incremental potential, and each must change with
  // its own rod's positions only.
  for (int dimension : {2, 3}) {
    CAPTURE(dimension);
    std::mt19937 rng(5);
    Model model = random_model(dimension, rng, {0});
    SystemAssembler assembler(model);
    const VecX x = perturbed(initial_state(model).positions, 0.05, rng);
    const double time = 0.7;  // the load on rod "b" is partly ramped in
    std::vector<double> shares;
    assembler.rod_potentials(x, time, shares);
    REQUIRE(shares.size() == 2);
    const EnergyBreakdown whole = assembler.potential_energies(x, time);
    CHECK(shares[0] + shares[1] == doctest::Approx(whole.incremental()).epsilon(1e-12));
    CHECK(whole.load != 0.0);
    // Moving rod "b" leaves rod "a"'s share as it was, bit for bit, and changes its own by the
    // change of the whole.
    VecX moved = x;
    const auto [begin, end] = model.layout.rod_dof_range(1);
    for (int i = begin; i < end; ++i) moved[i] += 0.01 * (i - begin + 1);
    std::vector<double> moved_shares;
    assembler.rod_potentials(moved, time, moved_shares);
    CHECK(moved_shares[0] == shares[0]);
    CHECK(moved_shares[1] - shares[1] ==
          doctest::Approx(assembler.potential_energies(moved, time).incremental() - whole.incremental()).epsilon(1e-9));
    CHECK(moved_shares[1] != shares[1]);
  }
}

TEST_CASE("integrator assembly: diagonal slots point at the diagonal of the free-free matrix") {
  for (int dimension : {2, 3}) {
    std::mt19937 rng(11);
    Model model = random_model(dimension, rng, {2});
    SystemAssembler assembler(model);
    const int n = model.layout.free_dof_count();
    REQUIRE(static_cast<int>(assembler.diagonal_slots().size()) == n);
    for (int f = 0; f < n; ++f) {
      assembler.matrix().valuePtr()[assembler.diagonal_slots()[f]] = 1.0 + f;
      CHECK(assembler.matrix().coeff(f, f) == 1.0 + f);
    }
  }
}

TEST_CASE("integrator assembly: the system matrix M + h^2 K is SPD on stressed rods with projection") {
  const double h = 1.0;  // a large step: h^2 K dominates M, so an indefinite K shows
  for (int dimension : {2, 3}) {
    CAPTURE(dimension);
    std::vector<std::pair<std::string, Stressed>> cases;
    cases.emplace_back("compressed to 60%", compressed(dimension));
    cases.emplace_back("zig-zag, 2.5 rad turns", zigzag(dimension, 2.5, 5));
    cases.emplace_back("nearly folded, pi - 0.01 turns", zigzag(dimension, kPi - 0.01, 6));
    cases.emplace_back("curved rest, strongly deformed", curved_rest_bent_further(dimension, 7));
    for (auto& [name, s] : cases) {
      CAPTURE(name);
      for (HessianProjection projection :
           {HessianProjection::Projected, HessianProjection::GaussNewton, HessianProjection::BendingModes}) {
        CAPTURE(static_cast<int>(projection));
        SystemAssembler assembler(s.model);
        VecX g;
        // K alone is PSD (up to rounding).
        assembler.assemble(s.x, 0.0, projection, 1.0, g);
        const double k_max = largest_eigenvalue(assembler.matrix());
        CHECK(k_max > 0.0);
        CHECK(smallest_eigenvalue(assembler.matrix()) >= -1e-10 * k_max);
        // A = M + h^2 K is SPD: Cholesky succeeds and the smallest eigenvalue is positive.
        assembler.assemble(s.x, 0.0, projection, h * h, g);
        add_masses(s.model, assembler);
        Eigen::SimplicialLLT<SparseMatrix> llt(assembler.matrix());
        CHECK(llt.info() == Eigen::Success);
        CHECK(smallest_eigenvalue(assembler.matrix()) > 0.0);
      }
    }
  }
}

TEST_CASE("integrator assembly: without projection the stiffness of a compressed rod is indefinite") {
  // The counterpart of the test above: the configurations really are stressed enough to need
  // the projection, so that test fails if the projection is skipped.
  const double h = 1.0;
  for (int dimension : {2, 3}) {
    CAPTURE(dimension);
    for (int which : {0, 1}) {
      CAPTURE(which);  // 0: compressed (stretch), 1: zig-zag (bending)
      Stressed s = which == 0 ? compressed(dimension) : zigzag(dimension, 2.5, 5);
      SystemAssembler assembler(s.model);
      VecX g;
      assembler.assemble(s.x, 0.0, HessianProjection::Exact, 1.0, g);
      // Rounding alone would give eigenvalues of order -1e-13 of the largest.
      CHECK(smallest_eigenvalue(assembler.matrix()) < -1e-5 * largest_eigenvalue(assembler.matrix()));
      assembler.assemble(s.x, 0.0, HessianProjection::Exact, h * h, g);
      add_masses(s.model, assembler);
      Eigen::SimplicialLLT<SparseMatrix> llt(assembler.matrix());
      CHECK(llt.info() != Eigen::Success);
    }
  }
}

TEST_CASE("integrator assembly: rigid motions of a curved rod at rest give no elastic force") {
  for (int dimension : {2, 3}) {
    CAPTURE(dimension);
    for (std::uint32_t seed : {21u, 22u, 23u}) {
      CAPTURE(seed);
      std::mt19937 rng(seed);
      std::uniform_real_distribution<double> u(-1.0, 1.0);
      // Curved rest shape, no gravity, no load: the gradient is the elastic force alone.
      Model model = single_rod_model(dimension, rod_from_vertices(random_vertices(10, 0.1, 1.0, dimension, rng), dimension));
      SystemAssembler assembler(model);
      const VecX x0 = initial_state(model).positions;

      // The scale: the gradient of a small deformation (1e-4 of an edge).
      VecX g;
      const VecX deformed = perturbed(x0, 1e-5, rng);
      assembler.assemble(deformed, 0.0, HessianProjection::Exact, 0.0, g);
      const double scale = g.cwiseAbs().maxCoeff();
      const double energy_scale = assembler.potential_energies(deformed, 0.0).elastic();
      REQUIRE(scale > 0.0);
      REQUIRE(energy_scale > 0.0);

      Mat3 rotation;
      if (dimension == 2) {
        rotation = Eigen::AngleAxisd(kPi * u(rng), Vec3::UnitZ()).toRotationMatrix();
      } else {
        rotation = Eigen::Quaterniond(u(rng), u(rng), u(rng), u(rng)).normalized().toRotationMatrix();
      }
      const Vec3 translation = dimension == 2 ? Vec3(u(rng), u(rng), 0.0) : Vec3(u(rng), u(rng), u(rng));

      for (const VecX& x : {x0, rigid_motion(model, x0, Mat3::Identity(), translation),
                            rigid_motion(model, x0, rotation, Vec3::Zero()),
                            rigid_motion(model, x0, rotation, translation)}) {
        assembler.assemble(x, 0.0, HessianProjection::Exact, 0.0, g);
        CHECK(g.cwiseAbs().maxCoeff() <= 1e-9 * scale);
        CHECK(assembler.potential_energies(x, 0.0).elastic() <= 1e-9 * energy_scale);
      }
    }
  }
}

TEST_CASE("integrator assembly: each rod's band is the matrix's lower triangle, and the matrix is symmetric") {
  // The matrix is summed per rod in band storage and copied out; the band the callback gets
  // must be the rod's block exactly (what the preconditioner factors), with the diagonal added.
  for (int dimension : {2, 3}) {
    CAPTURE(dimension);
    for (HessianProjection projection :
         {HessianProjection::Exact, HessianProjection::Projected, HessianProjection::BendingModes}) {
      std::mt19937 rng(23);
      Model model = random_model(dimension, rng, {0, 1, 4});
      SystemAssembler assembler(model);
      const VecX x = perturbed(initial_state(model).positions, 0.05, rng);
      VecX diagonal(model.layout.dof_count());
      for (int i = 0; i < diagonal.size(); ++i) diagonal[i] = 10.0 + i;
      VecX g;
      std::vector<Eigen::MatrixXd> bands(model.rods.size());
      std::vector<int> widths(model.rods.size(), -1);
      assembler.assemble(x, 0.0, projection, 0.7, g, nullptr, nullptr, nullptr,
                         [&](int rod, const BandView& block) {
                           widths[rod] = block.half_bandwidth;
                           bands[rod] = Eigen::MatrixXd::Zero(block.size, block.size);
                           for (int i = 0; i < block.size; ++i)
                             for (int k = std::max(0, i - block.half_bandwidth); k <= i; ++k)
                               bands[rod](i, k) = block.values[band_index(i, k, block.half_bandwidth)];
                         },
                         &diagonal);
      const Eigen::MatrixXd full = Eigen::MatrixXd(assembler.matrix());
      CHECK((full - full.transpose()).cwiseAbs().maxCoeff() == 0.0);
      VecX g_plain;
      assembler.assemble(x, 0.0, projection, 0.7, g_plain);
      const Eigen::MatrixXd without_diagonal = Eigen::MatrixXd(assembler.matrix());
      for (int rod = 0; rod < static_cast<int>(model.rods.size()); ++rod) {
        const auto [begin, end] = model.layout.rod_free_range(rod);
        REQUIRE(widths[rod] >= 0);
        CHECK(widths[rod] <= 3 * dimension - 1);
        const Eigen::MatrixXd lower = full.block(begin, begin, end - begin, end - begin).triangularView<Eigen::Lower>();
        CHECK((bands[rod] - lower).cwiseAbs().maxCoeff() == 0.0);
        for (int dof = 0; dof < model.layout.dof_count(); ++dof) {
          const int f = model.layout.free_index(dof);
          if (f >= begin && f < end) CHECK(full(f, f) == without_diagonal(f, f) + diagonal[dof]);
        }
      }
      CHECK((g - g_plain).cwiseAbs().maxCoeff() == 0.0);
    }
  }
}

TEST_CASE("integrator assembly: add_sparse gives Eigen's sum bit for bit, on any threads") {
  // Random patterns over 6000 columns (more than the threads' threshold), overlapping in part,
  // with negative zeros among the values (Eigen forms an entry of one matrix only as a + 0 or
  // 0 + b, which turns -0 into +0) and empty columns.
  std::mt19937 rng(31);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::uniform_int_distribution<int> row(0, 5999);
  auto random_matrix = [&](int entries) {
    std::vector<Eigen::Triplet<double>> t;
    for (int k = 0; k < entries; ++k) {
      const int col = row(rng);
      if (col % 7 == 0) continue;  // empty columns
      t.emplace_back(row(rng), col, k % 11 == 0 ? -0.0 : u(rng));
    }
    SparseMatrix m(6000, 6000);
    m.setFromTriplets(t.begin(), t.end());
    m.makeCompressed();
    return m;
  };
  const SparseMatrix a = random_matrix(40000), b = random_matrix(20000);
  const SparseMatrix expected = a + b;
  for (const int threads : {1, 2, 3}) {
    CAPTURE(threads);
    SparseMatrix sum;
    add_sparse(a, b, sum, threads);
    REQUIRE(sum.isCompressed());
    REQUIRE(sum.nonZeros() == expected.nonZeros());
    CHECK(std::equal(expected.outerIndexPtr(), expected.outerIndexPtr() + 6001, sum.outerIndexPtr()));
    CHECK(std::equal(expected.innerIndexPtr(), expected.innerIndexPtr() + expected.nonZeros(), sum.innerIndexPtr()));
    CHECK(std::memcmp(expected.valuePtr(), sum.valuePtr(), sizeof(double) * expected.nonZeros()) == 0);
    // Formed again into the same matrix (the step reuses it): the same again.
    add_sparse(b, a, sum, threads);
    CHECK(sum.nonZeros() == expected.nonZeros());
    CHECK(std::equal(expected.innerIndexPtr(), expected.innerIndexPtr() + expected.nonZeros(), sum.innerIndexPtr()));
    // Over some columns only: those are the sum's, bit for bit, the others empty.
    std::vector<char> columns(6000, 0);
    for (int col = 0; col < 6000; ++col) columns[col] = (col / 500) % 2 == 0 ? 1 : 0;
    SparseMatrix part;
    add_sparse(a, b, part, threads, &columns);
    REQUIRE(part.isCompressed());
    Eigen::Index listed = 0;
    for (int col = 0; col < 6000; ++col) {
      const int count = part.outerIndexPtr()[col + 1] - part.outerIndexPtr()[col];
      if (!columns[col]) {
        CHECK(count == 0);
        continue;
      }
      const int from = expected.outerIndexPtr()[col];
      REQUIRE(count == expected.outerIndexPtr()[col + 1] - from);
      CHECK(std::equal(expected.innerIndexPtr() + from, expected.innerIndexPtr() + from + count,
                       part.innerIndexPtr() + part.outerIndexPtr()[col]));
      CHECK(std::memcmp(expected.valuePtr() + from, part.valuePtr() + part.outerIndexPtr()[col],
                        sizeof(double) * count) == 0);
      listed += count;
    }
    CHECK(listed == part.nonZeros());
    CHECK(listed > 0);
    CHECK(listed < expected.nonZeros());
  }
}

TEST_CASE("integrator assembly: sparse_from_triplets gives Eigen's setFromTriplets bit for bit") {
  // Duplicates in number, of mixed magnitudes (1e16 + 1 - 1e16 depends on the order of the
  // sum), negative zeros, empty columns and a last column with entries; a rectangular matrix.
  std::mt19937 rng(47);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const int rows = 300, cols = 2000;
  std::uniform_int_distribution<int> row(0, rows - 1), col(0, cols - 1), small(0, 9);
  std::vector<int> order;
  SparseMatrix built;
  // The same matrix and scratch throughout, last with fewer entries than before.
  for (const int count : {0, 1, 50, 4000, 30000, 60}) {
    CAPTURE(count);
    std::vector<Eigen::Triplet<double>> t;
    for (int k = 0; k < count; ++k) {
      // Few distinct rows per column, so that most entries have duplicates.
      const int c = k % 13 == 0 ? cols - 1 : col(rng);
      if (c % 5 == 0) continue;
      const int r = (c * 7 + small(rng)) % rows;
      const double scale = k % 3 == 0 ? 1e16 : 1.0;
      t.emplace_back(r, c, k % 11 == 0 ? -0.0 : scale * u(rng));
    }
    SparseMatrix expected(rows, cols);
    expected.setFromTriplets(t.begin(), t.end());
    sparse_from_triplets(rows, cols, t, built, order);
    REQUIRE(built.isCompressed());
    REQUIRE(built.rows() == rows);
    REQUIRE(built.cols() == cols);
    REQUIRE(built.nonZeros() == expected.nonZeros());
    CHECK(std::equal(expected.outerIndexPtr(), expected.outerIndexPtr() + cols + 1, built.outerIndexPtr()));
    CHECK(std::equal(expected.innerIndexPtr(), expected.innerIndexPtr() + expected.nonZeros(), built.innerIndexPtr()));
    // (memcmp only with entries: an empty matrix's arrays may be null.)
    CHECK((expected.nonZeros() == 0 ||
           std::memcmp(expected.valuePtr(), built.valuePtr(), sizeof(double) * expected.nonZeros()) == 0));
  }
}

TEST_CASE("integrator assembly: a pass that reuses unchanged rods gives a fresh pass's bits") {
  // SystemAssembler::set_reuse_unchanged_rods: rods whose DOFs and diagonal did not change
  // since the last pass are taken from it (their gradient, energies and block of the matrix),
  // the coupling elements and loads added anew. Checked against a fresh assembler, bit for bit:
  // after one rod moves, after energy evaluations elsewhere overwrote the kept energies, with
  // the loads' time changed, with a coupling element between the rods, and with each thing
  // that must make a rod be assembled again (its diagonal, the scale, the frames).
  for (int dimension : {2, 3}) {
    CAPTURE(dimension);
    std::mt19937 rng(41 + dimension);
    std::vector<Rod> rods;
    rods.push_back(rod_from_vertices(random_vertices(7, 0.1, 0.8, dimension, rng), dimension, {0, 1},
                                     soft_material(), RestShape::Initial, "a"));
    rods.push_back(rod_from_vertices(random_vertices(5, 0.1, 1.2, dimension, rng), dimension, {},
                                     make_material(1200.0, 0.015, 3.0e5), RestShape::Initial, "b"));
    rods.push_back(rod_from_vertices(random_vertices(6, 0.1, 0.9, dimension, rng), dimension, {},
                                     soft_material(), RestShape::Initial, "c"));
    if (dimension == 3) rods[0].twist = rods[2].twist = true;  // frames: advance() must forget
    Model model = make_model(dimension, std::move(rods), Vec3(1.5, -9.81, 2.5));
    add_ramped_load(model);
    const DofLayout& layout = model.layout;
    SystemAssembler kept(model);
    kept.set_threads(2);  // the fresh ones: one thread
    kept.set_reuse_unchanged_rods(true);
    // A spring between rods 1 and 2: their gradient entries change with either rod.
    const auto add_spring = [&](SystemAssembler& assembler) {
      assembler.table<StretchTerm>().add_coupling({layout.vertex_dof(1, 4), layout.vertex_dof(2, 0)}, {0.2, 30.0});
    };
    add_spring(kept);
    VecX diagonal(layout.dof_count());
    for (int i = 0; i < diagonal.size(); ++i) diagonal[i] = 10.0 + i;
    VecX last_advanced;  // the positions `kept` last advanced its frames to, if any
    HessianProjection projection = HessianProjection::Projected;
    const auto check_pass = [&](const VecX& x, double time, double scale, int reused) {
      VecX g_kept, g_fresh;
      EnergyBreakdown e_kept, e_fresh;
      kept.assemble(x, time, projection, scale, g_kept, nullptr, nullptr, &e_kept, {}, &diagonal);
      CHECK(kept.last_reused_rods() == reused);
      SystemAssembler fresh(model);
      add_spring(fresh);
      if (last_advanced.size() > 0) fresh.advance(last_advanced);  // the same frames as `kept`
      fresh.assemble(x, time, projection, scale, g_fresh, nullptr, nullptr, &e_fresh, {}, &diagonal);
      REQUIRE(g_kept.size() == g_fresh.size());
      CHECK(std::memcmp(g_kept.data(), g_fresh.data(), sizeof(double) * g_kept.size()) == 0);
      const SparseMatrix& a = kept.matrix();
      const SparseMatrix& b = fresh.matrix();
      REQUIRE(a.nonZeros() == b.nonZeros());
      CHECK(std::memcmp(a.valuePtr(), b.valuePtr(), sizeof(double) * a.nonZeros()) == 0);
      CHECK(std::memcmp(kept.coupling_matrix().valuePtr(), fresh.coupling_matrix().valuePtr(),
                        sizeof(double) * kept.coupling_matrix().nonZeros()) == 0);
      for (double EnergyBreakdown::*part : {&EnergyBreakdown::stretch, &EnergyBreakdown::bend, &EnergyBreakdown::twist,
                                            &EnergyBreakdown::gravity, &EnergyBreakdown::load})
        CHECK(std::memcmp(&(e_kept.*part), &(e_fresh.*part), sizeof(double)) == 0);
    };
    VecX x = perturbed(initial_state(model).positions, 0.03, rng);
    const auto move_rod = [&](int rod) {
      const auto [begin, end] = layout.rod_dof_range(rod);
      for (int dof = begin; dof < end; ++dof)
        if (layout.free_index(dof) >= 0) x[dof] += 0.01 * std::sin(1.0 + dof);
    };
    check_pass(x, 0.5, 0.7, 0);  // nothing kept yet
    check_pass(x, 0.5, 0.7, 3);  // nothing moved
    move_rod(1);
    check_pass(x, 0.5, 0.7, 2);
    // Energies at other positions overwrite each rod's last energies; a pass at a new time
    // changes rod 1's load.
    kept.potential_energies(perturbed(x, 0.02, rng), 0.1);
    check_pass(x, 1.5, 0.7, 3);
    move_rod(2);
    check_pass(x, 1.5, 0.7, 2);
    // Rod 0's diagonal changes: it is assembled again.
    const auto [begin0, end0] = layout.rod_dof_range(0);
    diagonal[(begin0 + end0) / 2] += 1.0;
    check_pass(x, 1.5, 0.7, 2);
    check_pass(x, 1.5, 0.9, 0);  // another scale
    check_pass(x, 1.5, 0.9, 3);
    // A gradient-only pass keeps what is kept; a pass with K w forgets it.
    VecX g;
    kept.assemble(perturbed(x, 0.02, rng), 0.0, HessianProjection::Projected, 0.0, g);
    check_pass(x, 1.5, 0.9, 3);
    VecX w = VecX::Constant(x.size(), 0.5), kw;
    kept.assemble(x, 1.5, HessianProjection::Projected, 0.9, g, &w, &kw, nullptr, {}, &diagonal);
    check_pass(x, 1.5, 0.9, 0);
    // Another projection: every rod again. The exact one forms no bending energy where none is
    // asked for: a pass without energies that assembles rod 2 again keeps none for it, and the
    // next pass with energies assembles every rod.
    projection = HessianProjection::Exact;
    check_pass(x, 1.5, 0.9, 0);
    move_rod(2);
    kept.assemble(x, 1.5, projection, 0.9, g, nullptr, nullptr, nullptr, {}, &diagonal);
    CHECK(kept.last_reused_rods() == 2);
    check_pass(x, 1.5, 0.9, 0);
    check_pass(x, 1.5, 0.9, 3);
    if (dimension == 3) {
      // New frames: every rod is assembled again; and again when the old ones are restored.
      const SystemAssembler::ElementState before = kept.element_state();
      last_advanced = x;
      kept.advance(x);
      check_pass(x, 1.5, 0.9, 0);
      check_pass(x, 1.5, 0.9, 3);
      kept.restore_element_state(before);
      last_advanced.resize(0);
      check_pass(x, 1.5, 0.9, 0);
    }
  }
}

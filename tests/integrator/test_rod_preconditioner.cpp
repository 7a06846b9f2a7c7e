// RodBlockPreconditioner: its banded Cholesky against dense solves, its Jacobi fallback, and
// one-iteration CG on systems of uncoupled rods.

#include <random>

#include <doctest/doctest.h>
#include <Eigen/Dense>
#include <Eigen/IterativeLinearSolvers>
#include <Eigen/SparseCholesky>

#include "bristle/integrator/assembly.hpp"
#include "bristle/integrator/implicit_euler.hpp"
#include "bristle/integrator/rod_preconditioner.hpp"
#include "support/rod_builders.hpp"

using namespace bristle;
using namespace bristle::test;

namespace {

/// A random symmetric matrix with half-bandwidth w on [begin, end), diagonally dominant
/// (SPD) unless `indefinite`.
void add_banded_block(Eigen::MatrixXd& a, int begin, int end, int w, bool indefinite, std::mt19937& rng) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (int i = begin; i < end; ++i)
    for (int j = std::max(begin, i - w); j < i; ++j) a(i, j) = a(j, i) = u(rng);
  for (int i = begin; i < end; ++i) a(i, i) = a.row(i).segment(begin, end - begin).cwiseAbs().sum() + 0.5 + u(rng) * 0.25;
  if (indefinite) a(begin + 1, begin + 1) = -3.0;
}

SparseMatrix to_sparse(const Eigen::MatrixXd& a) { return a.sparseView(0.0, 0.0); }

/// The system matrix M + h^2 K of `model` at its initial state plus a deformation, as
/// ImplicitEuler builds it.
SparseMatrix system_matrix(const Model& model, SystemAssembler& assembler, const VecX& x, double h) {
  VecX g;
  assembler.assemble(x, 0.0, HessianProjection::Projected, h * h, g);
  const VecX mass = model.dof_masses();
  for (int dof = 0; dof < model.layout.dof_count(); ++dof) {
    const int f = model.layout.free_index(dof);
    if (f >= 0) assembler.matrix().valuePtr()[assembler.diagonal_slots()[f]] += mass[dof];
  }
  return assembler.matrix();
}

Model three_rods(int dimension) {
  std::mt19937 rng(3);
  std::vector<Rod> rods;
  rods.push_back(rod_from_vertices(random_vertices(12, 0.05, 0.4, dimension, rng), dimension, {0, 1}, steel(), RestShape::Straight, "r0"));
  rods.push_back(rod_from_vertices(random_vertices(3, 0.05, 0.4, dimension, rng), dimension, {}, soft_material(), RestShape::Initial, "r1"));
  rods.push_back(rod_from_vertices(random_vertices(20, 0.02, 0.4, dimension, rng), dimension, {0, 1}, make_material(1100, 0.001, 3e9), RestShape::Straight, "r2"));
  return make_model(dimension, std::move(rods), earth_gravity());
}

}  // namespace

TEST_CASE("integrator preconditioner: banded Cholesky solves equal dense solves, Jacobi elsewhere") {
  std::mt19937 rng(17);
  const int n = 24;
  Eigen::MatrixXd a = Eigen::MatrixXd::Zero(n, n);
  // Blocks of different bandwidths and sizes; DOFs 22 and 23 belong to no block (Jacobi).
  add_banded_block(a, 0, 9, 2, false, rng);
  add_banded_block(a, 9, 10, 0, false, rng);
  add_banded_block(a, 10, 22, 5, false, rng);
  add_banded_block(a, 22, 24, 0, false, rng);
  // A coupling entry between two blocks: the preconditioner must ignore it.
  a(3, 15) = a(15, 3) = 0.1;
  const SparseMatrix sparse = to_sparse(a);

  RodBlockPreconditioner p;
  p.set_blocks({{0, 9}, {9, 10}, {10, 22}});
  p.compute(sparse);
  CHECK(p.failed_blocks() == 0);

  VecX b(n);
  for (int i = 0; i < n; ++i) b[i] = std::uniform_real_distribution<double>(-1.0, 1.0)(rng);
  VecX expected(n);
  for (auto [begin, end] : std::vector<std::pair<int, int>>{{0, 9}, {9, 10}, {10, 22}})
    expected.segment(begin, end - begin) =
        a.block(begin, begin, end - begin, end - begin).llt().solve(b.segment(begin, end - begin));
  for (int i : {22, 23}) expected[i] = b[i] / a(i, i);
  const VecX x = p.solve(b);
  CHECK((x - expected).cwiseAbs().maxCoeff() <= 1e-13 * expected.cwiseAbs().maxCoeff());
  CHECK(p.applications() == 1);

  SUBCASE("a block that is not positive definite falls back to Jacobi") {
    Eigen::MatrixXd c = a;
    c.block(10, 10, 12, 12).setZero();
    add_banded_block(c, 10, 22, 3, true, rng);
    RodBlockPreconditioner q;
    q.set_blocks({{0, 9}, {9, 10}, {10, 22}});
    q.compute(to_sparse(c));
    CHECK(q.failed_blocks() == 1);
    const VecX y = q.solve(b);
    CHECK((y.head(10) - expected.head(10)).cwiseAbs().maxCoeff() <= 1e-13 * expected.cwiseAbs().maxCoeff());
    for (int i = 10; i < n; ++i) CHECK(y[i] == doctest::Approx(b[i] / c(i, i)).epsilon(1e-15));
  }
  SUBCASE("refactoring a new matrix replaces the old factors") {
    Eigen::MatrixXd c = 2.0 * a;
    p.compute(to_sparse(c));
    const VecX y = p.solve(b);
    CHECK((y - 0.5 * expected).cwiseAbs().maxCoeff() <= 1e-13 * expected.cwiseAbs().maxCoeff());
  }
}

TEST_CASE("integrator preconditioner: a rod's self-contact far along it is left to CG, its band still factored") {
  // One block of 200 DOFs with half-bandwidth 4, and an entry 150 rows off the diagonal
  // inside it (a rod touching itself far along its length). The band stays the rod's: the
  // far entry is left out of the factor, as coupling between rods is. Before, the block's
  // band was taken as wide as that entry (more than the 64 a factorisation takes) and the
  // whole rod fell back to Jacobi (the overhand knot's CG: 570 iterations per solve).
  std::mt19937 rng(5);
  const int n = 200;
  Eigen::MatrixXd a = Eigen::MatrixXd::Zero(n, n);
  add_banded_block(a, 0, n, 4, false, rng);
  Eigen::MatrixXd band = a;
  a(170, 20) = a(20, 170) = 0.3;
  RodBlockPreconditioner p;
  p.set_blocks({{0, n}});
  p.compute(to_sparse(a));
  CHECK(p.failed_blocks() == 0);
  VecX b(n);
  for (int i = 0; i < n; ++i) b[i] = std::uniform_real_distribution<double>(-1.0, 1.0)(rng);
  const VecX expected = band.llt().solve(b);
  CHECK((p.solve(b) - expected).cwiseAbs().maxCoeff() <= 1e-13 * expected.cwiseAbs().maxCoeff());
  // An entry within 64 of the diagonal widens the band and is factored with it.
  Eigen::MatrixXd c = band;
  c(60, 20) = c(20, 60) = 0.3;
  p.compute(to_sparse(c));
  CHECK(p.failed_blocks() == 0);
  const VecX exact = c.llt().solve(b);
  CHECK((p.solve(b) - exact).cwiseAbs().maxCoeff() <= 1e-12 * exact.cwiseAbs().maxCoeff());

  SUBCASE("a stiff contact that straddles the cut keeps the band positive definite") {
    // A pair's rank-one stiffness k g g^T on DOFs 10, 11, 74, 75, g = (1, 1, 1, -1): of its
    // cross entries only (75, 10) lies beyond 64 from the diagonal. Left out alone, the rest
    // is indefinite (an eigenvalue near -0.56 k) and the factorisation fails; then its
    // magnitude is added to both diagonals, which makes the band positive definite.
    Eigen::MatrixXd d = band;
    const int dofs[4] = {10, 11, 74, 75};
    const double g[4] = {1.0, 1.0, 1.0, -1.0};
    const double k = 1e6;
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 4; ++j) d(dofs[i], dofs[j]) += k * g[i] * g[j];
    RodBlockPreconditioner q;
    q.set_blocks({{0, n}});
    q.compute(to_sparse(d));
    CHECK(q.failed_blocks() == 0);
    Eigen::MatrixXd kept = d;
    kept(75, 10) = kept(10, 75) = 0.0;
    kept(10, 10) += k;
    kept(75, 75) += k;
    const VecX expected_kept = kept.llt().solve(b);
    CHECK((q.solve(b) - expected_kept).cwiseAbs().maxCoeff() <= 1e-9 * expected_kept.cwiseAbs().maxCoeff());
  }
}

TEST_CASE("integrator preconditioner: compute() analyses a new pattern written into the arrays it last saw") {
  // factorize() takes a matrix in the arrays it last analysed (same addresses and sizes) as
  // the same pattern; Eigen's compute() must not: a freed matrix's successor can take its
  // arrays with another pattern of the same size (the self-contact test's temporaries did now
  // and then, and the stale analysis failed the block). Here the arrays are kept and a pattern
  // of the same size written into them: an entry 150 rows off the diagonal (left out of the
  // band), then one 40 rows off (factored with it).
  std::mt19937 rng(5);
  const int n = 200;
  Eigen::MatrixXd band = Eigen::MatrixXd::Zero(n, n);
  add_banded_block(band, 0, n, 4, false, rng);
  Eigen::MatrixXd far = band, near = band;
  far(170, 20) = far(20, 170) = 0.3;
  near(60, 20) = near(20, 60) = 0.3;
  SparseMatrix m = to_sparse(far);
  const SparseMatrix second = to_sparse(near);
  REQUIRE(second.nonZeros() == m.nonZeros());
  RodBlockPreconditioner p;
  p.set_blocks({{0, n}});
  p.compute(m);
  REQUIRE(p.failed_blocks() == 0);
  const int* outer = m.outerIndexPtr();
  std::copy(second.outerIndexPtr(), second.outerIndexPtr() + n + 1, m.outerIndexPtr());
  std::copy(second.innerIndexPtr(), second.innerIndexPtr() + second.nonZeros(), m.innerIndexPtr());
  std::copy(second.valuePtr(), second.valuePtr() + second.nonZeros(), m.valuePtr());
  REQUIRE(m.outerIndexPtr() == outer);
  p.compute(m);
  CHECK(p.failed_blocks() == 0);
  VecX b(n);
  for (int i = 0; i < n; ++i) b[i] = std::uniform_real_distribution<double>(-1.0, 1.0)(rng);
  const VecX exact = near.llt().solve(b);
  CHECK((p.solve(b) - exact).cwiseAbs().maxCoeff() <= 1e-12 * exact.cwiseAbs().maxCoeff());
}

TEST_CASE("integrator preconditioner: blocks of one shape, solved two at a time") {
  // Rods of one length give blocks of one shape, whose triangular solves run in pairs
  // (interleaved loops). Each must still equal its own dense solve, and a failed block must
  // fall back to Jacobi without spoiling its partner, wherever it sits.
  for (int failing : {0, 1, 2}) {  // block failing + 1 is indefinite: second of a pair, first of one, alone
    CAPTURE(failing);
    std::mt19937 rng(23 + failing);
    const int size = 12, blocks = 5, n = size * blocks;  // two pairs and one block alone
    Eigen::MatrixXd a = Eigen::MatrixXd::Zero(n, n);
    for (int k = 0; k < blocks; ++k) add_banded_block(a, k * size, (k + 1) * size, 8, k == failing + 1, rng);
    RodBlockPreconditioner p;
    std::vector<std::pair<int, int>> ranges;
    for (int k = 0; k < blocks; ++k) ranges.push_back({k * size, (k + 1) * size});
    p.set_blocks(ranges);
    p.compute(to_sparse(a));
    CHECK(p.failed_blocks() == 1);
    VecX b(n);
    for (int i = 0; i < n; ++i) b[i] = std::uniform_real_distribution<double>(-1.0, 1.0)(rng);
    const VecX x = p.solve(b);
    for (int k = 0; k < blocks; ++k) {
      CAPTURE(k);
      const VecX bk = b.segment(k * size, size);
      const Eigen::MatrixXd ak = a.block(k * size, k * size, size, size);
      const VecX expected = k == failing + 1 ? VecX(bk.cwiseQuotient(ak.diagonal())) : VecX(ak.llt().solve(bk));
      CHECK((x.segment(k * size, size) - expected).cwiseAbs().maxCoeff() <= 1e-13 * expected.cwiseAbs().maxCoeff());
    }
  }
}

TEST_CASE("integrator preconditioner: CG converges in one preconditioned iteration on uncoupled rods") {
  for (int dimension : {2, 3}) {
    CAPTURE(dimension);
    const Model model = three_rods(dimension);
    SystemAssembler assembler(model);
    std::mt19937 rng(5);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    VecX x = initial_state(model).positions;
    for (int i = 0; i < x.size(); ++i) x[i] += 0.002 * u(rng);
    const SparseMatrix a = system_matrix(model, assembler, x, 1.0 / 60.0);
    VecX b(a.rows());
    for (int i = 0; i < b.size(); ++i) b[i] = u(rng);

    Eigen::SimplicialLLT<SparseMatrix> llt(a);
    REQUIRE(llt.info() == Eigen::Success);
    const VecX reference = llt.solve(b);

    Eigen::ConjugateGradient<SparseMatrix, Eigen::Lower | Eigen::Upper, RodBlockPreconditioner> cg;
    cg.setTolerance(1e-10);
    cg.preconditioner().set_blocks(model.layout.rod_free_ranges());
    cg.compute(a);
    const VecX solution = cg.solve(b);
    CHECK(cg.info() == Eigen::Success);
    CHECK(cg.preconditioner().failed_blocks() == 0);
    CHECK(cg.preconditioner().applications() == 1);
    CHECK((solution - reference).norm() <= 1e-9 * reference.norm());

    // Without the rod blocks (Jacobi alone) the same system takes many iterations: the
    // one-iteration result above is the preconditioner's doing.
    Eigen::ConjugateGradient<SparseMatrix, Eigen::Lower | Eigen::Upper, RodBlockPreconditioner> jacobi;
    jacobi.setTolerance(1e-10);
    jacobi.compute(a);
    const VecX jacobi_solution = jacobi.solve(b);
    CHECK(jacobi.preconditioner().applications() > 10);

    // And through the integrator: one CG iteration per Newton iteration.
    SolverSettings settings;
    settings.newton_iterations = 2;
    ImplicitEuler integrator(model, settings);
    State state = initial_state(model);
    state.positions = x;
    const StepReport report = integrator.step(state, 1.0 / 60.0);
    REQUIRE(report.ok);
    CHECK(report.cg_iterations == 2);
  }
}

namespace {

/// Rows whose first stored column lies closer than w (a rod's band: a vertex's first DOF
/// reaches fewer columns back than its last). The factorisation skips the rows of a column
/// outside their envelope; the envelope is irregular here, and not monotone.
/// With `vertex_size` > 0, the envelope of a rod's band instead: D = vertex_size DOFs per
/// vertex, each coupled to the vertices two away.
void check_envelope_cholesky(int w, int vertex_size = 0) {
  CAPTURE(w);
  CAPTURE(vertex_size);
  std::mt19937 rng(29);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::uniform_int_distribution<int> reach(0, w);
  const int n = 40;
  Eigen::MatrixXd a = Eigen::MatrixXd::Zero(n, n);
  for (int i = 0; i < n; ++i) {
    const int first = vertex_size > 0 ? std::max(0, vertex_size * (i / vertex_size - 2))
                                      : std::max(0, i - (i % 7 == 3 ? w : reach(rng)));
    for (int j = first; j < i; ++j) a(i, j) = a(j, i) = u(rng);
  }
  for (int i = 0; i < n; ++i) a(i, i) = a.row(i).cwiseAbs().sum() + 0.5;
  const SparseMatrix sparse = to_sparse(a);
  VecX b(n);
  for (int i = 0; i < n; ++i) b[i] = u(rng);
  const VecX expected = a.llt().solve(b);

  RodBlockPreconditioner from_matrix;
  from_matrix.set_blocks({{0, n}});
  from_matrix.compute(sparse);
  REQUIRE(from_matrix.failed_blocks() == 0);
  const VecX x = from_matrix.solve(b);
  CHECK((x - expected).cwiseAbs().maxCoeff() <= 1e-13 * expected.cwiseAbs().maxCoeff());

  // The same block handed over in band storage and solved in place (as the integrator does):
  // the same bits, and no factor formed until a solve() asks for one.
  std::vector<double> band(band_length(n, w), 0.0);
  for (int i = 0; i < n; ++i)
    for (int k = std::max(0, i - w); k <= i; ++k) band[band_index(i, k, w)] = a(i, k);
  // One block over the whole matrix, analysed for block-by-block solving.
  auto prepared = [&] {
    RodBlockPreconditioner p;
    p.set_blocks({{0, n}});
    p.prepare_blocks(sparse);
    return p;
  };
  RodBlockPreconditioner in_place = prepared();
  VecX z = b;
  CHECK(in_place.solve_block_in_place(0, BandView{band.data(), n, w}, z.data()));
  in_place.declare_blocks_solved(sparse.valuePtr());
  CHECK(in_place.applications() == 1);
  CHECK((z - x).cwiseAbs().maxCoeff() == 0.0);
  in_place.compute(sparse);
  CHECK(in_place.factorization_pending());
  const VecX y = in_place.solve(b);  // CG's iterations: the factors are formed now
  CHECK_FALSE(in_place.factorization_pending());
  CHECK((y - x).cwiseAbs().maxCoeff() == 0.0);
  CHECK(in_place.applications() == 2);

  {  // a band of another shape is refused, and x left as it was
    RodBlockPreconditioner other = prepared();
    VecX u = b;
    CHECK_FALSE(other.solve_block_in_place(0, BandView{band.data(), n, w - 1}, u.data()));
    CHECK((u - b).cwiseAbs().maxCoeff() == 0.0);
  }
  {  // a block that is not positive definite is counted as failed
    std::vector<double> indefinite(band_length(n, w), 0.0);
    for (int i = 0; i < n; ++i) indefinite[band_index(i, i, w)] = i == 5 ? -1.0 : 1.0;
    RodBlockPreconditioner other = prepared();
    VecX u = b;
    CHECK_FALSE(other.solve_block_in_place(0, BandView{indefinite.data(), n, w}, u.data()));
    other.declare_blocks_solved(sparse.valuePtr());
    CHECK(other.failed_blocks() == 1);
  }
}

}  // namespace

TEST_CASE("integrator preconditioner: Cholesky inside each row's envelope equals dense, from the matrix and in place") {
  // Half-bandwidths 5 and 8 (2D and 3D rods, unrolled) and 3 (the generic loop), and the
  // envelopes of 2D and 3D rods.
  for (int w : {5, 8, 3}) check_envelope_cholesky(w);
  check_envelope_cholesky(5, 2);  // a 2D rod
  check_envelope_cholesky(8, 3);  // a 3D rod
}

TEST_CASE("integrator preconditioner: a block whose values keep their bits keeps its factor, a changed one is factored again") {
  // The contact solver refactors the same matrix after changing the rows of a few rods (its
  // active-set passes): blocks with the same bits keep their factor. Each solve must equal,
  // bit for bit, that of a preconditioner factoring the values anew.
  std::mt19937 rng(41);
  const int size = 10, blocks = 3, n = size * blocks;
  Eigen::MatrixXd a = Eigen::MatrixXd::Zero(n, n);
  for (int k = 0; k < blocks; ++k) add_banded_block(a, k * size, (k + 1) * size, 6, false, rng);
  SparseMatrix m = to_sparse(a);
  m.makeCompressed();
  std::vector<std::pair<int, int>> ranges;
  for (int k = 0; k < blocks; ++k) ranges.push_back({k * size, (k + 1) * size});
  VecX b(n);
  for (int i = 0; i < n; ++i) b[i] = std::uniform_real_distribution<double>(-1.0, 1.0)(rng);
  auto fresh_solve = [&](const SparseMatrix& values) {
    RodBlockPreconditioner p;
    p.set_blocks(ranges);
    const SparseMatrix copy = values;
    p.compute(copy);
    return VecX(p.solve(b));
  };

  RodBlockPreconditioner kept;
  kept.set_blocks(ranges);
  kept.compute(m);
  const VecX first = kept.solve(b);
  CHECK(first == fresh_solve(m));
  // Block 1's diagonal raised, in place: that block is factored again, the others kept.
  const VecX saved = Eigen::Map<const VecX>(m.valuePtr(), m.nonZeros());
  for (int i = size; i < 2 * size; ++i) m.coeffRef(i, i) *= 1.5;
  kept.compute(m);
  const VecX changed = kept.solve(b);
  CHECK(changed == fresh_solve(m));
  CHECK(changed.segment(size, size) != first.segment(size, size));
  CHECK(changed.head(size) == first.head(size));
  // Back to the first values: the first solve again, bit for bit.
  Eigen::Map<VecX>(m.valuePtr(), m.nonZeros()) = saved;
  kept.compute(m);
  CHECK(kept.solve(b) == first);
  // A block made indefinite fails (Jacobi there) and, restored, is factored again.
  m.coeffRef(2 * size + 1, 2 * size + 1) = -3.0;
  kept.compute(m);
  CHECK(kept.failed_blocks() == 1);
  CHECK(kept.solve(b) == fresh_solve(m));
  Eigen::Map<VecX>(m.valuePtr(), m.nonZeros()) = saved;
  kept.compute(m);
  CHECK(kept.failed_blocks() == 0);
  CHECK(kept.solve(b) == first);

  SUBCASE("a block solved in place between two factorisations is factored again") {
    // solve_block_in_place overwrites the block's kept band with the factor of the band it
    // was handed: the next compute of the first values must not take that for their factor.
    const int w = 6;
    std::vector<double> other(band_length(size, w), 0.0);
    for (int i = 0; i < size; ++i)
      for (int k = std::max(0, i - w); k <= i; ++k) other[band_index(i, k, w)] = (i == k ? 4.0 : 0.1);
    VecX x = b.segment(size, size);
    kept.prepare_blocks(m);
    for (bool keep_lower : {true, false}) {
      std::vector<double> copy = other;
      CHECK(kept.solve_block_in_place(1, BandView{copy.data(), size, w}, x.data(), true, keep_lower));
      kept.compute(m);
      CHECK(kept.solve(b) == first);
      kept.compute(m);  // and kept from here on
      CHECK(kept.solve(b) == first);
      kept.prepare_blocks(m);
    }
  }
}

TEST_CASE("integrator preconditioner: a changed entry left out of the band makes the block factored again") {
  // A stiff pair straddling the band's cut (DOFs 10, 11, 74, 75 of a 200-DOF rod, as in the
  // self-contact case above): the band without (75, 10) is indefinite, so the block is factored
  // with that entry's magnitude on two diagonals. Changing that entry alone changes the factor.
  std::mt19937 rng(7);
  const int n = 200;
  Eigen::MatrixXd a = Eigen::MatrixXd::Zero(n, n);
  add_banded_block(a, 0, n, 4, false, rng);
  const int dofs[4] = {10, 11, 74, 75};
  const double g[4] = {1.0, 1.0, 1.0, -1.0};
  const double k = 1e6;
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) a(dofs[i], dofs[j]) += k * g[i] * g[j];
  SparseMatrix m = to_sparse(a);
  m.makeCompressed();
  VecX b(n);
  for (int i = 0; i < n; ++i) b[i] = std::uniform_real_distribution<double>(-1.0, 1.0)(rng);
  auto fresh_solve = [&](const SparseMatrix& values) {
    RodBlockPreconditioner p;
    p.set_blocks({{0, n}});
    const SparseMatrix copy = values;
    p.compute(copy);
    REQUIRE(p.failed_blocks() == 0);
    return VecX(p.solve(b));
  };
  RodBlockPreconditioner kept;
  kept.set_blocks({{0, n}});
  kept.compute(m);
  const VecX first = kept.solve(b);
  CHECK(first == fresh_solve(m));
  m.coeffRef(75, 10) *= 2.0;
  m.coeffRef(10, 75) *= 2.0;
  kept.compute(m);
  const VecX changed = kept.solve(b);
  CHECK(changed == fresh_solve(m));
  CHECK(changed != first);
}

TEST_CASE("integrator preconditioner: a new pattern keeps the analysis of blocks whose columns are unchanged") {
  // Rod contact changes the coupling between rods from one system to the next, not a rod's
  // band: a block whose columns hold the same rows keeps its analysis, its value positions
  // moved by the entries added before it. Each solve must equal, bit for bit, that of a
  // preconditioner analysing the pattern anew.
  std::mt19937 rng(43);
  const int size = 12, blocks = 3, n = size * blocks;
  std::vector<std::pair<int, int>> ranges;
  for (int k = 0; k < blocks; ++k) ranges.push_back({k * size, (k + 1) * size});
  Eigen::MatrixXd base = Eigen::MatrixXd::Zero(n, n);
  add_banded_block(base, 0, size, 4, false, rng);
  add_banded_block(base, size, 2 * size, 3, false, rng);
  add_banded_block(base, 2 * size, n, 5, false, rng);
  VecX b(n);
  for (int i = 0; i < n; ++i) b[i] = std::uniform_real_distribution<double>(-1.0, 1.0)(rng);
  auto fresh_solve = [&](const SparseMatrix& m) {
    RodBlockPreconditioner p;
    p.set_blocks(ranges);
    p.compute(m);
    return VecX(p.solve(b));
  };
  RodBlockPreconditioner kept;
  kept.set_blocks(ranges);
  auto check_system = [&](const Eigen::MatrixXd& a) {
    SparseMatrix m = to_sparse(a);
    m.makeCompressed();
    kept.compute(m);
    const VecX solved = kept.solve(b);
    CHECK(solved == fresh_solve(m));
    return solved;
  };
  const VecX first = check_system(base);
  // Coupling between blocks 0 and 2, entries in the first columns of block 0: block 1's and
  // block 2's value positions move, block 0's and block 2's columns change.
  Eigen::MatrixXd coupled = base;
  coupled(0, 30) = coupled(30, 0) = 0.1;
  coupled(2, 26) = coupled(26, 2) = -0.2;
  const VecX second = check_system(coupled);
  CHECK(second.segment(size, size) == first.segment(size, size));
  // Block 1's values changed, the coupling kept: the moved positions are read.
  Eigen::MatrixXd changed = coupled;
  for (int i = size; i < 2 * size; ++i) changed(i, i) *= 1.25;
  const VecX third = check_system(changed);
  CHECK(third.segment(size, size) != first.segment(size, size));
  // Block 1's band widened (a new pattern there), the coupling gone.
  Eigen::MatrixXd wider = base;
  for (int i = size + 5; i < 2 * size; ++i) wider(i, i - 5) = wider(i - 5, i) = 0.05;
  check_system(wider);
  // And the first system again.
  CHECK(check_system(base) == first);
}

TEST_CASE("integrator preconditioner: a pattern over some blocks keeps the others' analysis for the next whole one") {
  // An iteration over the rods still moving forms the coupled system over their columns only
  // (ImplicitEuler::assemble): analyze_blocks analyses those blocks, and the held ones keep
  // the analysis of the last whole pattern, which the next whole pattern, in other arrays
  // with other offsets, recognises. Every solve equals, bit for bit, a fresh analysis's.
  std::mt19937 rng(59);
  const int size = 10, blocks = 3, n = size * blocks;
  std::vector<std::pair<int, int>> ranges;
  for (int k = 0; k < blocks; ++k) ranges.push_back({k * size, (k + 1) * size});
  Eigen::MatrixXd whole = Eigen::MatrixXd::Zero(n, n);
  add_banded_block(whole, 0, size, 3, false, rng);
  add_banded_block(whole, size, 2 * size, 5, false, rng);
  add_banded_block(whole, 2 * size, n, 4, false, rng);
  // Blocks 0 and 2 coupled, block 1 apart.
  whole(1, 25) = whole(25, 1) = 0.1;
  VecX b(n);
  for (int i = 0; i < n; ++i) b[i] = std::uniform_real_distribution<double>(-1.0, 1.0)(rng);
  auto fresh_solve = [&](const SparseMatrix& m, const std::vector<char>* active) {
    RodBlockPreconditioner p;
    p.set_blocks(ranges);
    if (active != nullptr) p.set_active_blocks(*active);
    p.compute(m);
    return VecX(p.solve(b));
  };
  RodBlockPreconditioner kept;
  kept.set_blocks(ranges);
  SparseMatrix first = to_sparse(whole);
  first.makeCompressed();
  kept.analyzePattern(first);
  kept.factorize(first);
  CHECK(kept.block_analyses() == blocks);
  CHECK(kept.solve(b) == fresh_solve(first, nullptr));
  // Block 1 held: its columns empty, the other blocks' values changed and their coupling gone
  // (block 0's columns hold one entry fewer: the held block's place in these arrays is not
  // its place in either whole pattern).
  Eigen::MatrixXd moving = whole;
  moving.block(size, 0, size, n).setZero();
  moving.block(0, size, n, size).setZero();
  moving(1, 25) = moving(25, 1) = 0.0;
  for (int i = 0; i < size; ++i) moving(i, i) *= 1.5;
  const std::vector<char> active{1, 0, 1};
  SparseMatrix partial = to_sparse(moving);
  partial.makeCompressed();
  kept.set_active_blocks(active);
  kept.analyze_blocks(partial, active);
  kept.factorize(partial);
  CHECK(kept.block_analyses() == blocks + 2);  // blocks 0 and 2 analysed anew, block 1 held
  const VecX partial_solved = kept.solve(b);
  CHECK(partial_solved == fresh_solve(partial, &active));
  kept.clear_active_blocks();
  // The whole pattern again, in new arrays, with a new coupling entry in block 0's columns
  // that moves block 1's values one place on: block 1 is recognised, not analysed anew, and
  // reads its values where they now are; blocks 0 and 2 are analysed anew once more.
  Eigen::MatrixXd recoupled = whole;
  recoupled(3, 27) = recoupled(27, 3) = 0.05;
  SparseMatrix again = to_sparse(recoupled);
  again.makeCompressed();
  kept.analyzePattern(again);
  kept.factorize(again);
  CHECK(kept.block_analyses() == blocks + 4);
  CHECK(kept.solve(b) == fresh_solve(again, nullptr));
}

TEST_CASE("integrator preconditioner: groups set again on new arrays keep the analysis and factor of a group with the same rows, pattern and values") {
  // The contact solver filters the system into new arrays at each pass, and every Newton
  // iteration sets the groups anew: a group with the rows, pattern and values of one of the
  // last groups takes its analysis and factor; one with other values is factored again, one
  // with another pattern analysed again. Each solve must equal, bit for bit, that of a
  // preconditioner building its groups anew.
  std::mt19937 rng(47);
  const int size = 10, blocks = 4, n = size * blocks;
  std::vector<std::pair<int, int>> ranges;
  for (int k = 0; k < blocks; ++k) ranges.push_back({k * size, (k + 1) * size});
  Eigen::MatrixXd base = Eigen::MatrixXd::Zero(n, n);
  for (int k = 0; k < blocks; ++k) add_banded_block(base, k * size, (k + 1) * size, 5, false, rng);
  // Blocks 0 and 2 pressed together, 1 and 3 too.
  base(3, 25) = base(25, 3) = -0.3;
  base(14, 37) = base(37, 14) = 0.2;
  VecX b(n);
  for (int i = 0; i < n; ++i) b[i] = std::uniform_real_distribution<double>(-1.0, 1.0)(rng);
  const std::vector<std::vector<int>> pairs_of_blocks = {{0, 2}, {1, 3}};
  auto fresh_solve = [&](const SparseMatrix& m, const std::vector<std::vector<int>>& groups) {
    RodBlockPreconditioner p;
    p.set_blocks(ranges);
    p.set_groups(groups);
    p.compute(m);
    REQUIRE(p.failed_groups() == 0);
    return VecX(p.solve(b));
  };
  RodBlockPreconditioner kept;
  kept.set_blocks(ranges);
  // Each system in new arrays (a copy), the groups cleared and set again before it, as the
  // integrator does; returns the solve, checked against a fresh preconditioner.
  auto solve_again = [&](const Eigen::MatrixXd& a, const std::vector<std::vector<int>>& groups) {
    const SparseMatrix m = to_sparse(a);
    kept.clear_groups();
    kept.set_groups(groups);
    kept.compute(m);
    CHECK(kept.group_count() == static_cast<int>(groups.size()));
    const VecX solved = kept.solve(b);
    CHECK(solved == fresh_solve(m, groups));
    return solved;
  };
  const VecX first = solve_again(base, pairs_of_blocks);
  CHECK(kept.group_analyses() == 2);
  CHECK(kept.group_factorizations() == 2);
  // The same system again: nothing analysed or factored.
  CHECK(solve_again(base, pairs_of_blocks) == first);
  CHECK(kept.group_analyses() == 2);
  CHECK(kept.group_factorizations() == 2);
  // Block 3's values changed: the group {1, 3} factored again, its analysis kept.
  Eigen::MatrixXd changed = base;
  for (int i = 3 * size; i < n; ++i) changed(i, i) *= 1.5;
  const VecX second = solve_again(changed, pairs_of_blocks);
  CHECK(second != first);
  CHECK(kept.group_analyses() == 2);
  CHECK(kept.group_factorizations() == 3);
  // A new entry between blocks 0 and 2: that group analysed and factored again.
  Eigen::MatrixXd wider = changed;
  wider(5, 22) = wider(22, 5) = 0.1;
  solve_again(wider, pairs_of_blocks);
  CHECK(kept.group_analyses() == 3);
  CHECK(kept.group_factorizations() == 4);
  // That entry moved to another row of block 2 (the same count per column, other rows).
  Eigen::MatrixXd moved = changed;
  moved(5, 23) = moved(23, 5) = 0.1;
  solve_again(moved, pairs_of_blocks);
  CHECK(kept.group_analyses() == 4);
  CHECK(kept.group_factorizations() == 5);
  solve_again(wider, pairs_of_blocks);
  CHECK(kept.group_analyses() == 5);
  CHECK(kept.group_factorizations() == 6);
  // Other groups (block 1 alone is in none), then the first ones and the first system again:
  // their analyses were given up, so built anew, with the first solve's bits.
  solve_again(wider, {{0, 2}});
  CHECK(kept.group_factorizations() == 6);  // the same group {0, 2}, values and pattern
  CHECK(solve_again(base, pairs_of_blocks) == first);
  CHECK(kept.group_analyses() == 7);
  // One group of every block: its factor is of the whole matrix, formed in its AMD order once
  // per pattern (RodBlockPreconditioner::analyze_group) where Eigen's SimplicialLDLT forms that
  // order at each factorisation. The solve must be SimplicialLDLT's, bit for bit.
  for (const Eigen::MatrixXd* a : {&base, &changed, &wider}) {
    const SparseMatrix m = to_sparse(*a);
    Eigen::SimplicialLDLT<SparseMatrix, Eigen::Lower> eigen_ldlt(m);
    REQUIRE(eigen_ldlt.info() == Eigen::Success);
    const VecX expected = eigen_ldlt.solve(b);
    CHECK(fresh_solve(m, {{0, 1, 2, 3}}) == expected);
    kept.clear_groups();
    kept.set_groups({{0, 1, 2, 3}});
    kept.compute(m);
    CHECK(VecX(kept.solve(b)) == expected);
  }
}

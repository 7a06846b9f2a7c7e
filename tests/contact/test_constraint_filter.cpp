// The constraint filter (change of basis + elimination) against a dense reference: the
// solution of the filtered sparse system must equal the constrained minimiser computed with
// dense matrices, for 1, 2 or D prescribed components per vertex, in 2D and 3D.

#include <algorithm>
#include <cstring>
#include <random>

#include <doctest/doctest.h>
#include <Eigen/Dense>

#include "bristle/contact/constraint_filter.hpp"
#include "bristle/integrator/assembly.hpp"
#include "support/rod_builders.hpp"

using namespace bristle;
using namespace bristle::test;

namespace {

/// A random orthonormal frame (D x D block of a Mat3, identity beyond).
Mat3 random_frame(int D, std::mt19937& rng) {
  std::normal_distribution<double> n(0.0, 1.0);
  Eigen::MatrixXd a(D, D);
  for (int i = 0; i < D; ++i)
    for (int j = 0; j < D; ++j) a(i, j) = n(rng);
  Eigen::HouseholderQR<Eigen::MatrixXd> qr(a);
  Mat3 frame = Mat3::Identity();
  frame.topLeftCorner(D, D) = qr.householderQ();
  return frame;
}

/// Two rods of random shapes (the first fixed at its root), perturbed, J = M + h^2 K there,
/// and a random right-hand side b.
struct TwoRods {
  Model model;
  SparseMatrix J;
  VecX b;
};
TwoRods two_rods(int D, int edges_a, int edges_b, std::mt19937& rng) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<Rod> rods;
  rods.push_back(rod_from_vertices(random_vertices(edges_a, 0.1, 0.6, D, rng), D, {0}, soft_material(),
                                   RestShape::Straight, "a"));
  rods.push_back(rod_from_vertices(random_vertices(edges_b, 0.1, 0.6, D, rng), D, {}, soft_material(),
                                   RestShape::Straight, "b"));
  TwoRods t{make_model(D, std::move(rods)), SparseMatrix()};
  SystemAssembler assembler(t.model);
  State state = initial_state(t.model);
  for (int i = 0; i < state.positions.size(); ++i) state.positions[i] += 0.01 * u(rng);
  VecX gradient;
  assembler.assemble(state.positions, 0.0, HessianProjection::Projected, 1e-3, gradient);
  t.J = assembler.matrix();
  const VecX mass = t.model.dof_masses();
  for (int dof = 0; dof < t.model.layout.dof_count(); ++dof) {
    const int f = t.model.layout.free_index(dof);
    if (f >= 0) t.J.coeffRef(f, f) += mass[dof];
  }
  t.J.makeCompressed();
  t.b.resize(t.J.rows());
  for (int i = 0; i < t.b.size(); ++i) t.b[i] = u(rng);
  return t;
}

void check_filter(int D) {
  std::mt19937 rng(11 + D);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  TwoRods system = two_rods(D, 7, 5, rng);
  const Model& model = system.model;
  const SparseMatrix& J = system.J;
  const int n = static_cast<int>(J.rows());
  const VecX& b = system.b;

  // Constraints on a few free vertices with 1..D prescribed components.
  std::vector<VelocityConstraint> constraints;
  for (int v : {1, 4, 6, 9, 11}) {  // of vertices 0..11
    const int f = model.layout.free_index(model.layout.vertex_dof(v));
    if (f < 0) continue;
    VelocityConstraint c;
    c.free = f;
    c.frame = random_frame(D, rng);
    c.count = 1 + static_cast<int>(constraints.size()) % D;
    for (int k = 0; k < c.count; ++k) c.value[k] = u(rng);
    constraints.push_back(c);
  }

  // Dense reference: dv = Q y, y_P = value, y_F minimises the rotated quadratic.
  Eigen::MatrixXd Q = Eigen::MatrixXd::Identity(n, n);
  std::vector<int> prescribed(n, 0);
  Eigen::VectorXd z = Eigen::VectorXd::Zero(n);
  for (const auto& c : constraints) {
    Q.block(c.free, c.free, D, D) = c.frame.topLeftCorner(D, D);
    for (int k = 0; k < c.count; ++k) {
      prescribed[c.free + k] = 1;
      z[c.free + k] = c.value[k];
    }
  }
  const Eigen::MatrixXd Jd = Eigen::MatrixXd(J);
  const Eigen::MatrixXd Jr = Q.transpose() * Jd * Q;
  const Eigen::VectorXd br = Q.transpose() * b;
  std::vector<int> free_set;
  for (int i = 0; i < n; ++i)
    if (!prescribed[i]) free_set.push_back(i);
  const int m = static_cast<int>(free_set.size());
  Eigen::MatrixXd Aff(m, m);
  Eigen::VectorXd rhs(m);
  for (int i = 0; i < m; ++i) {
    rhs[i] = br[free_set[i]] - Jr.row(free_set[i]).dot(z);
    for (int j = 0; j < m; ++j) Aff(i, j) = Jr(free_set[i], free_set[j]);
  }
  const Eigen::VectorXd yf = Aff.ldlt().solve(rhs);
  Eigen::VectorXd y = z;
  for (int i = 0; i < m; ++i) y[free_set[i]] = yf[i];
  const Eigen::VectorXd expected = Q * y;

  // The filtered sparse system, solved densely here (the filter's job is the algebra).
  SparseMatrix filtered = J;
  VecX filtered_rhs = b;
  filter_system(filtered, filtered_rhs, constraints, D);
  CHECK(filtered.nonZeros() == J.nonZeros());
  // Order-free: the constraints listed backwards filter to the same bits (filter_system
  // visits the columns its constraints touch in increasing order, whatever their order).
  {
    SparseMatrix backwards = J;
    VecX backwards_rhs = b;
    const std::vector<VelocityConstraint> reversed(constraints.rbegin(), constraints.rend());
    filter_system(backwards, backwards_rhs, reversed, D);
    CHECK(Eigen::Map<const VecX>(backwards.valuePtr(), backwards.nonZeros()) ==
          Eigen::Map<const VecX>(filtered.valuePtr(), filtered.nonZeros()));
    CHECK(backwards_rhs == filtered_rhs);
  }
  const Eigen::MatrixXd Fd = Eigen::MatrixXd(filtered);
  CHECK((Fd - Fd.transpose()).cwiseAbs().maxCoeff() <= 1e-12 * Fd.cwiseAbs().maxCoeff());
  VecX solution = Fd.ldlt().solve(filtered_rhs);
  const VecX filtered_solution = solution;
  unfilter_solution(solution, constraints, D);
  // filter_guess inverts unfilter_solution: the solution's dv maps back to the filtered
  // system's solution (a CG warm start from it starts at the answer) ...
  {
    VecX y;
    filter_guess(solution, constraints, D, y);
    CHECK((y - filtered_solution).cwiseAbs().maxCoeff() <= 1e-12 * filtered_solution.cwiseAbs().maxCoeff());
    // ... and any dv maps to a y whose prescribed components hold their values, rotated into
    // the constraints' frames elsewhere on their vertices.
    VecX dv(n);
    for (int i = 0; i < n; ++i) dv[i] = u(rng);
    filter_guess(dv, constraints, D, y);
    for (const auto& c : constraints) {
      const Eigen::VectorXd rotated = c.frame.topLeftCorner(D, D).transpose() * dv.segment(c.free, D);
      for (int k = 0; k < D; ++k)
        CHECK(y[c.free + k] == doctest::Approx(k < c.count ? c.value[k] : rotated[k]).epsilon(1e-12));
    }
    int untouched = 0;
    for (int i = 0; i < n; ++i) {
      bool constrained = false;
      for (const auto& c : constraints) constrained = constrained || (i >= c.free && i < c.free + D);
      if (!constrained) {
        CHECK(y[i] == dv[i]);
        ++untouched;
      }
    }
    CHECK(untouched > 0);
  }
  const double error = (solution - expected).cwiseAbs().maxCoeff();
  INFO("max error " << error << " of " << expected.cwiseAbs().maxCoeff());
  CHECK(error <= 1e-10 * expected.cwiseAbs().maxCoeff());
  // The constraints hold exactly.
  for (const auto& c : constraints) {
    const Vec3 local = [&] {
      Vec3 r = Vec3::Zero();
      r.head(D) = c.frame.topLeftCorner(D, D).transpose() * solution.segment(c.free, D);
      return r;
    }();
    for (int k = 0; k < c.count; ++k) CHECK(local[k] == doctest::Approx(c.value[k]).epsilon(1e-12));
  }
}

/// With identity frames the rotations are exact, and the filter is the elimination alone: a
/// sweep over every column in increasing order, written out here, must give the same bits
/// (the order of each right-hand side entry's updates included; filter_system visits only the
/// columns its constraints touch).
void check_elimination_order(int D) {
  std::mt19937 rng(29 + D);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  TwoRods system = two_rods(D, 9, 6, rng);
  const Model& model = system.model;
  const SparseMatrix& J = system.J;
  const int n = static_cast<int>(J.rows());
  const VecX& b = system.b;
  // Vertices 2 and 4 share neighbour 3, so row 3 takes updates from both; every vertex has
  // all D components prescribed but one (at least two columns per vertex when D = 3).
  std::vector<VelocityConstraint> constraints;
  for (int v : {4, 2, 7, 10, 14}) {
    VelocityConstraint c;
    c.free = model.layout.free_index(model.layout.vertex_dof(v));
    REQUIRE(c.free >= 0);
    c.frame = Mat3::Identity();
    c.count = std::max(1, D - (v % 2));
    for (int k = 0; k < c.count; ++k) c.value[k] = u(rng);
    constraints.push_back(c);
  }
  std::vector<double> prescribed(n, 0.0);
  std::vector<char> is_prescribed(n, 0);
  for (const auto& c : constraints)
    for (int k = 0; k < c.count; ++k) {
      is_prescribed[c.free + k] = 1;
      prescribed[c.free + k] = c.value[k];
    }
  SparseMatrix expected = J;
  VecX expected_rhs = b;
  for (int col = 0; col < n; ++col)
    for (SparseMatrix::InnerIterator it(expected, col); it; ++it) {
      const int row = static_cast<int>(it.row());
      if (row == col || (!is_prescribed[row] && !is_prescribed[col])) continue;
      if (is_prescribed[col] && !is_prescribed[row]) expected_rhs[row] -= it.value() * prescribed[col];
      it.valueRef() = 0.0;
    }
  for (int i = 0; i < n; ++i)
    if (is_prescribed[i]) expected_rhs[i] = J.coeff(i, i) * prescribed[i];

  SparseMatrix filtered = J;
  VecX filtered_rhs = b;
  filter_system(filtered, filtered_rhs, constraints, D);
  CHECK(Eigen::Map<const VecX>(filtered.valuePtr(), filtered.nonZeros()) ==
        Eigen::Map<const VecX>(expected.valuePtr(), expected.nonZeros()));
  CHECK(filtered_rhs == expected_rhs);

  // The columns the filter may change are known before it runs (filtered_columns: a caller
  // saves just those and restores the matrix from them), with random frames: every other
  // column keeps its bits, and the filter reports the same list.
  constraints.resize(2);  // vertices 4 and 2: columns far from them stay out
  for (auto& c : constraints) c.frame = random_frame(D, rng);
  std::vector<int> columns, changed;
  filtered_columns(J, constraints, D, columns);
  CHECK(std::is_sorted(columns.begin(), columns.end()));
  CHECK(static_cast<int>(columns.size()) < n);
  SparseMatrix rotated = J;
  VecX rotated_rhs = b;
  filter_system(rotated, rotated_rhs, constraints, D, nullptr, &changed);
  CHECK(changed == columns);
  // Given the list (as the contact solver's pass does, having saved those columns): the same.
  SparseMatrix given = J;
  VecX given_rhs = b;
  std::vector<int> given_columns = columns;
  filter_system(given, given_rhs, constraints, D, nullptr, &given_columns, /*columns_given=*/true);
  CHECK(given_columns == columns);
  CHECK(std::memcmp(given.valuePtr(), rotated.valuePtr(), sizeof(double) * rotated.nonZeros()) == 0);
  CHECK(given_rhs == rotated_rhs);
  std::vector<char> listed(n, 0);
  for (const int col : columns) listed[col] = 1;
  int kept = 0, differing = 0;
  for (int col = 0; col < n; ++col) {
    const int begin = J.outerIndexPtr()[col], count = J.outerIndexPtr()[col + 1] - begin;
    const bool same = std::memcmp(J.valuePtr() + begin, rotated.valuePtr() + begin, sizeof(double) * count) == 0;
    if (!listed[col]) {
      CHECK(same);
      ++kept;
    } else if (!same) {
      ++differing;
    }
  }
  CHECK(kept > 0);
  CHECK(differing > 0);
}

}  // namespace

TEST_CASE("contact constraint filter: equals the dense constrained solve, 2D and 3D") {
  SUBCASE("2D") { check_filter(2); }
  SUBCASE("3D") { check_filter(3); }
}

TEST_CASE("contact constraint filter: the same bits as a sweep over every column, 2D and 3D") {
  SUBCASE("2D") { check_elimination_order(2); }
  SUBCASE("3D") { check_elimination_order(3); }
}

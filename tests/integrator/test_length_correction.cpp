// The length correction after a linearised solve (integrator/length_correction.hpp): edge
// lengths brought back to what the solve saw, fixed vertices untouched, momentum kept, and
// the same bits for every thread count.

#include <cmath>
#include <limits>
#include <random>

#include <doctest/doctest.h>

#include "bristle/integrator/length_correction.hpp"
#include "support/rod_builders.hpp"

using namespace bristle;
using namespace bristle::test;

namespace {

/// Positions moved from `x_lin` by up to `amount` per coordinate at random (free DOFs only),
/// as a linear solve moves them: edges turn and, to second order, lengthen.
VecX perturbed(const Model& model, const VecX& x_lin, double amount, std::mt19937& rng) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  VecX x = x_lin;
  for (int dof = 0; dof < model.layout.dof_count(); ++dof)
    if (model.layout.free_index(dof) >= 0) x[dof] += amount * u(rng);
  return x;
}

VecX edge_vector(const Model& model, const VecX& x, int rod, int j) {
  const int d = model.dimension;
  return x.segment(model.layout.vertex_dof(rod, j + 1), d) - x.segment(model.layout.vertex_dof(rod, j), d);
}

/// Largest | |e_j(x)| - t_lin . e_j(before) | / |e_j| over all edges of all rods.
double worst_length_error(const Model& model, const VecX& x_lin, const VecX& before, const VecX& after) {
  double worst = 0.0;
  for (int r = 0; r < static_cast<int>(model.rods.size()); ++r)
    for (int j = 0; j + 1 < model.rods[r].vertex_count(); ++j) {
      const VecX e_lin = edge_vector(model, x_lin, r, j);
      const double target = e_lin.normalized().dot(edge_vector(model, before, r, j));
      worst = std::max(worst, std::abs(edge_vector(model, after, r, j).norm() - target) / target);
    }
  return worst;
}

Model random_rods(int dimension, std::vector<std::vector<int>> fixed, std::mt19937& rng) {
  std::vector<Rod> rods;
  for (std::size_t r = 0; r < fixed.size(); ++r)
    rods.push_back(rod_from_vertices(random_vertices(12, 0.1, 0.6, dimension, rng), dimension, fixed[r],
                                     soft_material(), RestShape::Initial, "rod" + std::to_string(r)));
  return make_model(dimension, std::move(rods));
}

}  // namespace

TEST_CASE("integrator length correction: every edge gets the length the linearised solve saw, 2D and 3D") {
  std::mt19937 rng(41);
  for (int dimension : {2, 3}) {
    CAPTURE(dimension);
    // A clamped rod, a free one, and one held in the middle (a handle).
    const Model model = random_rods(dimension, {{0, 1}, {}, {6}}, rng);
    const VecX x_lin = initial_state(model).positions;
    for (double amount : {1e-4, 3e-3}) {  // turns of about 1e-3 and 3e-2 rad per edge
      CAPTURE(amount);
      const VecX before = perturbed(model, x_lin, amount, rng);
      VecX after = before;
      LengthCorrection(model).apply(x_lin, after);
      // The solve's result really was off: the correction has work to do.
      CHECK(worst_length_error(model, x_lin, before, before) > 1e-8);
      CHECK(worst_length_error(model, x_lin, before, after) <= 1e-9);
      // Fixed vertices do not move, not by one bit.
      for (int dof = 0; dof < model.layout.dof_count(); ++dof)
        if (model.layout.free_index(dof) < 0) CHECK(after[dof] == before[dof]);
      // The move is second order: far smaller than the solve's own move.
      CHECK((after - before).cwiseAbs().maxCoeff() < 0.2 * amount);
    }
  }
}

TEST_CASE("integrator length correction: a free rod keeps its linear momentum") {
  // The move is M^-1 grad C^T lambda and each constraint's gradient sums to zero over its
  // vertices: sum m_i dx_i = 0. A correction that moved vertices without their masses (or a
  // wrong sign in the tridiagonal solve) would push the rod's centre of mass.
  std::mt19937 rng(43);
  for (int dimension : {2, 3}) {
    CAPTURE(dimension);
    const Model model = random_rods(dimension, {{}}, rng);
    const VecX x_lin = initial_state(model).positions;
    const VecX before = perturbed(model, x_lin, 3e-3, rng);
    VecX after = before;
    LengthCorrection(model).apply(x_lin, after);
    const VecX masses = model.dof_masses();
    VecX momentum = VecX::Zero(dimension);
    double moved = 0.0;
    for (int i = 0; i < model.rods[0].vertex_count(); ++i) {
      const int dof = model.layout.vertex_dof(0, i);
      momentum += masses[dof] * (after - before).segment(dof, dimension);
      moved += masses[dof] * (after - before).segment(dof, dimension).norm();
    }
    CHECK(moved > 0.0);
    CHECK(momentum.norm() <= 1e-12 * moved);
  }
}

TEST_CASE("integrator length correction: nothing moves when the lengths are already right") {
  // x = x_lin: every edge already has the length t_lin . e = |e|; no vertex may move.
  std::mt19937 rng(47);
  const Model model = random_rods(3, {{0, 1}}, rng);
  const VecX x_lin = initial_state(model).positions;
  VecX x = x_lin;
  LengthCorrection(model).apply(x_lin, x);
  CHECK(bitwise_equal(x, x_lin));
}

TEST_CASE("integrator length correction: bitwise identical for every thread count") {
  std::mt19937 rng(53);
  const Model model = random_rods(3, std::vector<std::vector<int>>(40, {0, 1}), rng);
  const VecX x_lin = initial_state(model).positions;
  const VecX before = perturbed(model, x_lin, 3e-3, rng);
  VecX serial = before, parallel = before;
  LengthCorrection one(model);
  one.apply(x_lin, serial);
  LengthCorrection two(model);
  two.set_threads(2);
  two.apply(x_lin, parallel);
  CHECK(bitwise_equal(serial, parallel));
  CHECK(!bitwise_equal(serial, before));
}

TEST_CASE("integrator length correction: a run between two fixed vertices is left as the solve made it") {
  // A taut rod pinned at both ends can sag only by stretching: that second-order stretch is
  // the physics there, and correcting it would hold the rod straight. Only runs with a free
  // end are corrected; the pinned rod must come back untouched, bit for bit.
  std::mt19937 rng(59);
  std::vector<Rod> rods;
  rods.push_back(rod_from_vertices(straight_vertices(Vec3::Zero(), Vec3(1.0, 0.0, 0.0), 6), 3, {0, 6}));
  rods.push_back(rod_from_vertices(random_vertices(8, 0.1, 0.5, 3, rng), 3, {0, 1}, soft_material(),
                                   RestShape::Initial, "free end"));
  // Held in the middle: the run 1-3 is pinned on both sides, the run 5-8 has a free end.
  rods.push_back(rod_from_vertices(random_vertices(8, 0.1, 0.5, 3, rng), 3, {0, 4}, soft_material(),
                                   RestShape::Initial, "held"));
  const Model model = make_model(3, std::move(rods));
  const VecX x_lin = initial_state(model).positions;
  const VecX before = perturbed(model, x_lin, 1e-3, rng);
  VecX after = before;
  const LengthCorrection::Outcome outcome = LengthCorrection(model).apply(x_lin, after);
  CHECK(outcome.uncorrected_rods == 0);
  CHECK(outcome.iterations >= 1);
  auto unchanged = [&](int rod, int vertex) {
    const int dof = model.layout.vertex_dof(rod, vertex);
    return bitwise_equal(after.segment(dof, 3), before.segment(dof, 3));
  };
  for (int i = 0; i < model.rods[0].vertex_count(); ++i) CHECK(unchanged(0, i));
  for (int i = 0; i <= 4; ++i) CHECK(unchanged(2, i));
  // The runs with a free end are corrected as usual.
  auto worst_error = [&](int rod, int first_edge) {
    double worst = 0.0;
    for (int j = first_edge; j + 1 < model.rods[rod].vertex_count(); ++j) {
      const VecX e_lin = edge_vector(model, x_lin, rod, j);
      const double target = e_lin.normalized().dot(edge_vector(model, before, rod, j));
      worst = std::max(worst, std::abs(edge_vector(model, after, rod, j).norm() - target) / target);
    }
    return worst;
  };
  CHECK(worst_error(1, 0) <= 1e-9);
  CHECK(worst_error(2, 4) <= 1e-9);
  CHECK(!unchanged(2, 8));
}

TEST_CASE("integrator length correction: a rod it cannot correct is left as it was and counted") {
  // A non-finite position (the step reports it right after) makes the tridiagonal system
  // meaningless: that rod is restored and counted, the others are corrected.
  std::mt19937 rng(61);
  const Model model = random_rods(3, {{0, 1}, {0, 1}}, rng);
  const VecX x_lin = initial_state(model).positions;
  VecX before = perturbed(model, x_lin, 1e-3, rng);
  before[model.layout.vertex_dof(0, 5)] = std::numeric_limits<double>::quiet_NaN();
  VecX after = before;
  const LengthCorrection::Outcome outcome = LengthCorrection(model).apply(x_lin, after);
  CHECK(outcome.uncorrected_rods == 1);
  for (int i = 0; i < model.rods[0].vertex_count(); ++i) {
    const int dof = model.layout.vertex_dof(0, i);
    CHECK(bitwise_equal(after.segment(dof, 3), before.segment(dof, 3)));
  }
  const int dof = model.layout.vertex_dof(1, 6);
  CHECK(!bitwise_equal(after.segment(dof, 3), before.segment(dof, 3)));
}

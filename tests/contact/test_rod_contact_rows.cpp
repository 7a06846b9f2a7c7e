// Rod-rod contacts as constraints in one linear solve (contact/rod_contact_rows.hpp): the
// Delassus blocks agree with velocities computed from the rows directly, for rows sharing rods,
// fixed vertices, self-contact and 2D; a rod dropped across another stops on it (no
// approach left over the step) and slides or sticks by Coulomb's law.

#include <cmath>
#include <random>
#include <vector>

#include <doctest/doctest.h>

#include <Eigen/Cholesky>
#include <Eigen/Dense>

#include "bristle/contact/rod_contact.hpp"
#include "bristle/contact/rod_contact_rows.hpp"
#include "bristle/contact/segment_distance.hpp"
#include "support/rod_builders.hpp"

using namespace bristle;
using namespace bristle::test;

namespace {

/// A rod-like system per rod on the free DOFs: lumped masses plus h^2 times springs along each
/// edge (stiff) and across it (soft), factored densely per rod.
struct RodSystem {
  std::vector<Eigen::LDLT<Eigen::MatrixXd>> factors;
  Eigen::MatrixXd dense;  // the whole free system, for checks

  RodSystem(const Model& model, double h) {
    const DofLayout& layout = model.layout;
    const int D = model.dimension;
    const VecX masses = model.dof_masses();
    const VecX x = initial_state(model).positions;
    dense = Eigen::MatrixXd::Zero(layout.free_dof_count(), layout.free_dof_count());
    for (int dof = 0; dof < layout.dof_count(); ++dof) {
      const int f = layout.free_index(dof);
      if (f >= 0) dense(f, f) += masses[dof];
    }
    for (int r = 0; r < layout.rod_count(); ++r) {
      const auto [vb, ve] = layout.rod_vertex_range(r);
      for (int gv = vb; gv + 1 < ve; ++gv) {
        Eigen::MatrixXd axis = Eigen::MatrixXd::Zero(D, 1);
        for (int c = 0; c < D; ++c) axis(c, 0) = x[layout.vertex_dof(gv + 1) + c] - x[layout.vertex_dof(gv) + c];
        axis /= axis.norm();
        const Eigen::MatrixXd k =
            h * h * (1e4 * axis * axis.transpose() + 10.0 * Eigen::MatrixXd::Identity(D, D));
        const int a = layout.free_index(layout.vertex_dof(gv)), b = layout.free_index(layout.vertex_dof(gv + 1));
        if (a >= 0) dense.block(a, a, D, D) += k;
        if (b >= 0) dense.block(b, b, D, D) += k;
        if (a >= 0 && b >= 0) {
          dense.block(a, b, D, D) -= k;
          dense.block(b, a, D, D) -= k;
        }
      }
      const auto [begin, end] = layout.rod_free_range(r);
      factors.emplace_back(dense.block(begin, begin, end - begin, end - begin));
    }
  }

  RodBlockSolve block_solve(const DofLayout& layout) const {
    return [this, &layout](int rod, Eigen::Ref<VecX> segment) {
      (void)layout;
      segment = factors[rod].solve(VecX(segment));
    };
  }
};

RodContactRow make_row(const Model& model, const VecX& x, int rod_p, int segment_p, int rod_q, int segment_q,
                       double mu = 0.0) {
  const DofLayout& layout = model.layout;
  RodContactRow row;
  row.vertices = {layout.global_vertex(rod_p, segment_p), layout.global_vertex(rod_p, segment_p + 1),
                  layout.global_vertex(rod_q, segment_q), layout.global_vertex(rod_q, segment_q + 1)};
  Vec3 p[4];
  for (int k = 0; k < 4; ++k) {
    p[k] = Vec3::Zero();
    for (int c = 0; c < model.dimension; ++c) p[k][c] = x[layout.vertex_dof(row.vertices[k]) + c];
  }
  row.frame = segment_contact_frame(p[0], p[1], p[2], p[3], model.rods[rod_p].material.radius,
                                    model.rods[rod_q].material.radius, Vec3::UnitZ(), model.dimension);
  row.friction = mu;
  return row;
}

/// For random impulses, W p + b must equal the rows' velocities after dv += A^-1 H^T p, and
/// the latter must equal the dense system's solve: checks W, b, the responses and apply.
void check_delassus_consistency(const Model& model, const std::vector<RodContactRow>& rows, std::mt19937& random) {
  const double h = 1.0 / 24.0;
  const DofLayout& layout = model.layout;
  const RodSystem system(model, h);
  std::uniform_real_distribution<double> symmetric(-1.0, 1.0);
  VecX v(layout.dof_count()), dv(layout.free_dof_count());
  for (int i = 0; i < v.size(); ++i) v[i] = symmetric(random);
  for (int i = 0; i < dv.size(); ++i) dv[i] = symmetric(random);
  const RodContactProblem problem = build_rod_contact_problem(layout, rows, system.block_solve(layout), v, dv, h);
  REQUIRE(problem.coulomb.contact_count() == static_cast<int>(rows.size()));
  std::vector<Vec3> impulses;
  for (std::size_t i = 0; i < rows.size(); ++i)
    impulses.push_back(1e-3 * Vec3(symmetric(random), symmetric(random), symmetric(random)));
  const std::vector<Vec3> predicted = contact_velocities(problem.coulomb, impulses);
  VecX changed = dv;
  apply_rod_contact_impulses(layout, problem, impulses, changed);
  {
    // The velocity form (W through the responses, each formed when first needed) gives the
    // same u, and keeps the same velocity change, also after impulses change one at a time.
    const RodContactProblem diagonal_only =
        build_rod_contact_problem(layout, rows, system.block_solve(layout), v, dv, h, false);
    CHECK(diagonal_only.coulomb.blocks.empty());
    for (std::size_t i = 0; i < rows.size(); ++i)
      CHECK((diagonal_only.coulomb.diagonal[i] - problem.coulomb.diagonal[i]).norm() <=
            1e-12 * problem.coulomb.diagonal[i].norm());
    RodContactOperator op(layout, rows, system.block_solve(layout), v, dv, h);
    CHECK(op.responses_formed() == 0);
    std::vector<Vec3> zero(rows.size(), Vec3::Zero()), stepped = zero;
    op.reset(zero);
    for (std::size_t i = 0; i < rows.size(); ++i) {
      stepped[i] = impulses[i];
      op.changed(static_cast<int>(i), impulses[i]);
    }
    CHECK(op.responses_formed() == static_cast<int>(rows.size()));
    CHECK((op.velocity_change() - (changed - dv)).norm() <= 1e-12 * (1.0 + (changed - dv).norm()));
    for (std::size_t i = 0; i < rows.size(); ++i) {
      INFO("row " << i);
      CHECK((op.diagonal(static_cast<int>(i)) - problem.coulomb.diagonal[i]).norm() <=
            1e-12 * problem.coulomb.diagonal[i].norm());
      CHECK((op.velocity(static_cast<int>(i), stepped) - predicted[i]).norm() <= 1e-11 * (1.0 + predicted[i].norm()));
    }
    // Both forms solve to the same impulses (Gauss-Seidel in the same order).
    std::vector<Vec3> explicit_impulses, operator_impulses;
    CoulombSettings settings;
    settings.max_sweeps = 50;
    CoulombProblem with_friction = problem.coulomb;
    for (double& mu : with_friction.friction) mu = 0.3;
    const CoulombResult a = solve_coulomb(with_friction, settings, explicit_impulses);
    std::vector<RodContactRow> rows_with_friction = rows;
    for (RodContactRow& row : rows_with_friction) row.friction = 0.3;
    RodContactOperator friction_op(layout, rows_with_friction, system.block_solve(layout), v, dv, h);
    const CoulombResult b = solve_coulomb(friction_op, settings, operator_impulses);
    // Every row with an impulse at the end had its response formed (none is formed before
    // a solve asks for it: checked above).
    int pushing = 0;
    for (const Vec3& p : operator_impulses) pushing += p == Vec3::Zero() ? 0 : 1;
    CHECK(friction_op.responses_formed() >= pushing);
    CHECK(a.sweeps == b.sweeps);
    for (std::size_t i = 0; i < rows.size(); ++i)
      CHECK((explicit_impulses[i] - operator_impulses[i]).norm() <= 1e-9 * (1e-6 + explicit_impulses[i].norm()));
  }
  const std::vector<Vec3> direct = rod_contact_velocities(layout, rows, v, changed, h);
  // The same change from the dense system: A (changed - dv) = H^T p.
  VecX force = VecX::Zero(layout.free_dof_count());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const RodContactRow& row = rows[i];
    const Vec3 world = row.frame.normal * impulses[i][0] + row.frame.tangent1 * impulses[i][1] +
                       row.frame.tangent2 * impulses[i][2];
    for (int k = 0; k < 4; ++k) {
      const int f = layout.free_index(layout.vertex_dof(row.vertices[k]));
      if (f < 0) continue;
      for (int c = 0; c < model.dimension; ++c) force[f + c] += row.frame.weights[k] * world[c];
    }
  }
  const VecX dense_change = system.dense.ldlt().solve(force);
  CHECK((changed - dv - dense_change).norm() <= 1e-12 * (1.0 + dense_change.norm()));
  double largest = 0.0;
  for (const Vec3& u : direct) largest = std::max(largest, u.norm());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    INFO("row " << i << " predicted " << predicted[i].transpose() << " direct " << direct[i].transpose());
    CHECK((predicted[i] - direct[i]).norm() <= 1e-11 * largest);
  }
  // Independently of the rows' formula: u_n - g / h is the rate of the gap along the motion
  // v + dv, from the rows' positions x.
  const VecX x = initial_state(model).positions;
  VecX motion = VecX::Zero(layout.dof_count());
  for (int dof = 0; dof < layout.dof_count(); ++dof) {
    const int f = layout.free_index(dof);
    motion[dof] = v[dof] + (f >= 0 ? changed[f] : 0.0);
  }
  for (std::size_t i = 0; i < rows.size(); ++i) {
    auto gap_at = [&](double e) {
      Vec3 p[4];
      for (int k = 0; k < 4; ++k) {
        p[k] = Vec3::Zero();
        for (int c = 0; c < model.dimension; ++c) {
          const int dof = layout.vertex_dof(rows[i].vertices[k]) + c;
          p[k][c] = x[dof] + e * motion[dof];
        }
      }
      return segment_contact_frame(p[0], p[1], p[2], p[3], 0.02, 0.02, Vec3::UnitZ(), model.dimension).gap;
    };
    // Central differences at e and e / 2, extrapolated (Richardson): the gap bends sharply
    // where the closest points are segment ends, and plain differences at 1e-7 are off by 1e-6.
    auto central = [&](double e) { return (gap_at(e) - gap_at(-e)) / (2.0 * e); };
    const double rate = (4.0 * central(5e-7) - central(1e-6)) / 3.0;
    CHECK(direct[i][0] - rows[i].frame.gap / h == doctest::Approx(rate).epsilon(1e-6).scale(1.0));
  }
  // The rows that share a rod are coupled, the others are not.
  for (int i = 0; i < problem.coulomb.contact_count(); ++i)
    for (int k = problem.coulomb.block_offsets[i]; k < problem.coulomb.block_offsets[i + 1]; ++k) {
      const int j = problem.coulomb.block_columns[k];
      bool share = false;
      for (const int a : problem.rods[i])
        for (const int b : problem.rods[j]) share = share || a == b;
      CHECK(share);
      CHECK(j != i);
    }
}

/// A rod along x at height z over rods along y at z = 0, spaced along x. The crossings are
/// inside segments of both rods (at a vertex the gap has a kink, and differences straddle it).
Model rod_over_rails(int rails, double z, int dimension, std::vector<int> rail_fixed = {}) {
  std::vector<Rod> rods;
  rods.push_back(straight_rod(8, Vec3(-0.2, 0.01, z), Vec3(0.2, 0.01, z), dimension, {}, soft_material(), "top"));
  for (int k = 0; k < rails; ++k) {
    const double x = -0.13 + 0.3 * (rails > 1 ? double(k) / (rails - 1) : 0.5);
    rods.push_back(
        straight_rod(4, Vec3(x, -0.1, 0.0), Vec3(x, 0.1, 0.0), dimension, rail_fixed, soft_material(), "rail"));
  }
  return make_model(dimension, std::move(rods));
}

}  // namespace

TEST_CASE("rod contact rows: the Delassus blocks and offsets agree with the rows' own velocities") {
  std::mt19937 random(5);
  SUBCASE("one rod across three free rails (rows sharing the top rod)") {
    const Model model = rod_over_rails(3, 0.045, 3);
    const VecX x = initial_state(model).positions;
    check_delassus_consistency(model, {make_row(model, x, 0, 0, 1, 1), make_row(model, x, 0, 3, 2, 2),
                                       make_row(model, x, 0, 7, 3, 1), make_row(model, x, 0, 4, 2, 1)},
                               random);
  }
  SUBCASE("rails with fixed ends and a fixed middle vertex") {
    const Model model = rod_over_rails(2, 0.045, 3, {0, 2, 4});
    const VecX x = initial_state(model).positions;
    check_delassus_consistency(model, {make_row(model, x, 0, 0, 1, 1), make_row(model, x, 0, 7, 2, 2)}, random);
  }
  SUBCASE("self-contact: two far segments of one rod") {
    std::vector<Rod> rods;
    rods.push_back(rod_from_vertices(
        {Vec3(0, 0, 0), Vec3(0.1, 0, 0), Vec3(0.2, 0, 0), Vec3(0.2, 0.1, 0), Vec3(0.08, 0.1, 0.01), Vec3(0.08, -0.1, 0.01)},
        3));
    const Model model = make_model(3, std::move(rods));
    const VecX x = initial_state(model).positions;
    check_delassus_consistency(model, {make_row(model, x, 0, 4, 0, 0)}, random);
  }
  SUBCASE("2D: rods in a plane") {
    std::vector<Rod> rods;
    rods.push_back(straight_rod(6, Vec3(-0.2, 0.045, 0.0), Vec3(0.2, 0.05, 0.0), 2));
    rods.push_back(straight_rod(6, Vec3(-0.23, 0.0, 0.0), Vec3(0.17, 0.0, 0.0), 2, {0}));
    const Model model = make_model(2, std::move(rods));
    const VecX x = initial_state(model).positions;
    check_delassus_consistency(model, {make_row(model, x, 0, 2, 1, 2), make_row(model, x, 0, 4, 1, 4)}, random);
  }
}

TEST_CASE("rod contact rows: a rod dropped across another stops on it, sliding or sticking by Coulomb's law") {
  const double h = 1.0 / 24.0;
  // The top rod 1 mm above the rail's surface, falling at 2 m/s (48 times the gap per step)
  // and moving along x at 0.5 m/s; the rail's ends are fixed.
  const Model model = rod_over_rails(1, 0.041, 3, {0, 4});
  const DofLayout& layout = model.layout;
  const VecX x = initial_state(model).positions;
  const RodSystem system(model, h);
  VecX v = VecX::Zero(layout.dof_count());
  const auto [begin, end] = layout.rod_vertex_range(0);
  for (int gv = begin; gv < end; ++gv) {
    v[layout.vertex_dof(gv)] = 0.5;
    v[layout.vertex_dof(gv) + 2] = -2.0;
  }
  // Newton's first iterate: v the start velocity, no change yet.
  const VecX dv_unconstrained = VecX::Zero(layout.free_dof_count());
  for (const double mu : {0.0, 0.1, 10.0}) {
    CAPTURE(mu);
    // The crossing, linearised at the step's start: top segment 4 (x from 0 to 0.05) over
    // rail segment 2 (y from 0 to 0.05), at (0.02, 0.01).
    const std::vector<RodContactRow> rows = {make_row(model, x, 0, 4, 1, 2, mu)};
    CHECK(rows[0].frame.gap == doctest::Approx(0.001));
    const RodContactProblem problem =
        build_rod_contact_problem(layout, rows, system.block_solve(layout), v, dv_unconstrained, h);
    // Without contact the top rod would end 2 h - 1 mm = 8.3 cm inside the rail.
    CHECK(problem.coulomb.free_velocity[0][0] == doctest::Approx(-2.0 + 0.001 / h));
    std::vector<Vec3> impulses;
    CoulombSettings settings;
    settings.tolerance = 1e-12;
    const CoulombResult result = solve_coulomb(problem.coulomb, settings, impulses);
    CHECK(result.converged);
    VecX dv = dv_unconstrained;
    apply_rod_contact_impulses(layout, problem, impulses, dv);
    const Vec3 u = rod_contact_velocities(layout, rows, v, dv, h)[0];
    // Pressed, inelastic: the gap closes exactly over the step, no approach left.
    CHECK(impulses[0][0] > 0.0);
    CHECK(std::abs(u[0]) < 1e-10);
    const double slip = u.tail<2>().norm(), friction = impulses[0].tail<2>().norm();
    if (mu == 0.0) {
      CHECK(friction == 0.0);
      CHECK(slip == doctest::Approx(0.5).epsilon(0.2));  // the rail barely drags
    } else if (mu < 1.0) {
      CHECK(friction == doctest::Approx(mu * impulses[0][0]).epsilon(1e-12));
      CHECK(slip > 0.01);
      CHECK(u.tail<2>().dot(impulses[0].tail<2>()) < -0.999999 * slip * friction);
    } else {
      CHECK(friction < mu * impulses[0][0]);
      CHECK(slip < 1e-10);
    }
  }
}

TEST_CASE("rod contact rows: the broad phase's rows are the pairs that come near on the step's path") {
  Model model = rod_over_rails(3, 0.045, 3);
  model.rod_contact.enabled = true;
  model.rod_contact.friction = 0.2;
  // A fourth rail far away along y: never near.
  model.rods.push_back(straight_rod(4, Vec3(0.0, 1.0, 0.0), Vec3(0.0, 1.2, 0.0), 3, {}, soft_material(), "far"));
  model.finalize();
  const DofLayout& layout = model.layout;
  const VecX x0 = initial_state(model).positions;
  // The top rod's path goes 10 cm down, through the three rails.
  VecX x1 = x0;
  const auto [begin, end] = layout.rod_vertex_range(0);
  for (int gv = begin; gv < end; ++gv) x1[layout.vertex_dof(gv) + 2] -= 0.1;
  RodContact contact(model, model.dof_masses());
  const std::vector<RodContactRow> rows = contact.constraint_rows(x0, x1);
  auto at = [&](const VecX& x, int gv) { return Vec3(x.segment<3>(layout.vertex_dof(gv))); };
  // Each row: a segment of the top rod and one of a near rail, linearised at x0.
  for (const RodContactRow& row : rows) {
    CHECK(row.vertices[1] == row.vertices[0] + 1);
    CHECK(row.vertices[3] == row.vertices[2] + 1);
    CHECK(layout.vertex_rod(row.vertices[0]) != layout.vertex_rod(row.vertices[2]));
    CHECK(layout.vertex_rod(row.vertices[2]) != 4);
    CHECK(row.friction == 0.2);
    const SegmentContactFrame expected =
        segment_contact_frame(at(x0, row.vertices[0]), at(x0, row.vertices[1]), at(x0, row.vertices[2]),
                              at(x0, row.vertices[3]), 0.02, 0.02, Vec3::UnitZ());
    CHECK(row.frame.gap == expected.gap);
    CHECK(row.frame.normal == expected.normal);
    CHECK(row.frame.weights == expected.weights);
  }
  // Every pair of the top rod and a rail whose surfaces meet somewhere on the path is a row.
  int meeting = 0;
  for (int rail = 1; rail <= 3; ++rail)
    for (int i = 0; i < 8; ++i)
      for (int j = 0; j < 4; ++j) {
        const int p0 = layout.global_vertex(0, i), q0 = layout.global_vertex(rail, j);
        bool meets = false;
        for (int k = 0; k <= 100 && !meets; ++k) {
          const VecX x = x0 + (k / 100.0) * (x1 - x0);
          meets = segment_contact_frame(at(x, p0), at(x, p0 + 1), at(x, q0), at(x, q0 + 1), 0.02, 0.02,
                                        Vec3::UnitZ())
                      .gap < 0.0;
        }
        if (!meets) continue;
        ++meeting;
        bool listed = false;
        for (const RodContactRow& row : rows)
          listed = listed || (row.vertices[0] == p0 && row.vertices[2] == q0);
        INFO("top segment " << i << " rail " << rail << " segment " << j);
        CHECK(listed);
      }
  CHECK(meeting >= 6);  // each rail is crossed by one or two top segments, at one or two of its own
  // The same rows, bit for bit, on two threads.
  contact.set_threads(2);
  const std::vector<RodContactRow> again = contact.constraint_rows(x0, x1);
  REQUIRE(again.size() == rows.size());
  for (std::size_t k = 0; k < rows.size(); ++k) {
    CHECK(again[k].vertices == rows[k].vertices);
    CHECK(again[k].frame.gap == rows[k].frame.gap);
  }
}

TEST_CASE("rod contact rows: the constraint method's frame stats count pairs overlapping beyond 1% of the radius") {
  // One rail crossing under the top rod (radius 0.02 both; the crossing's axis distance is the
  // top rod's height z). measure_all counts a pair as overlapping past 1% of the smaller radius
  // (2e-4 m), axes touching included, against a count over every pair of segments; before,
  // only pairs whose axes touched counted, so a pair a quarter inside the other did not.
  for (const double z : {0.0402, 0.04, 0.04 - 1e-4, 0.04 - 3e-4, 0.03, 0.0}) {
    Model model = rod_over_rails(1, z, 3);
    model.rod_contact.enabled = true;
    model.finalize();
    const DofLayout& layout = model.layout;
    const VecX x = initial_state(model).positions;
    auto at = [&](int gv) { return Vec3(x.segment<3>(layout.vertex_dof(gv))); };
    int expected = 0;
    for (int i = 0; i < 8; ++i)
      for (int j = 0; j < 4; ++j) {
        const int p0 = layout.global_vertex(0, i), q0 = layout.global_vertex(1, j);
        expected += segment_distance(at(p0), at(p0 + 1), at(q0), at(q0 + 1)).distance - 0.04 < -2e-4 ? 1 : 0;
      }
    const RodContact contact(model, model.dof_masses());
    const RodContactStats stats = contact.measure_all(x);
    INFO("z = " << z);
    CHECK(stats.overlapping == expected);
    CHECK((z < 0.04 - 2e-4) == (expected > 0));  // the cases on both sides of the tolerance
    if (z > 0.0) CHECK(stats.min_gap == doctest::Approx(z - 0.04).epsilon(1e-9));
  }
}

// A soft rod dropped onto a sphere, onto a capsule and onto an oriented box at dt = 1/60 s:
// it lands, drapes over the shape (ends hanging below the top) and never passes through it
// (the rod's surface outside to within 10% of its radius after every step, at its vertices and
// between them).

#include <cmath>

#include <doctest/doctest.h>
#include <Eigen/Geometry>

#include "contact/contact_test_support.hpp"

using namespace bristle;
using namespace bristle::test;

namespace {

constexpr double kRadius = 0.002;   // rod radius [m]
constexpr double kLength = 0.4;     // [m]
constexpr int kSegments = 40;
constexpr double kDt = 1.0 / 60.0;

struct DrapeResult {
  RunSummary summary;
  std::vector<Vec3> positions;
  double final_speed = 0.0;
};

/// Drops a horizontal rod along x, centred above the origin with its lowest surface point
/// `drop` metres above `top` (the collider's highest point), onto `collider`, for `seconds`.
DrapeResult drop_onto(const Collider& collider, double top, int dimension, double seconds, double drop = 0.05) {
  const Material rubber = make_material(1000.0, kRadius, 1.0e7);
  const double y = top + kRadius + drop;
  Model model = single_rod_model(
      dimension, straight_rod(kSegments, Vec3(-0.5 * kLength, y, 0.0), Vec3(0.5 * kLength, y, 0.0), dimension, {}, rubber),
      earth_gravity());
  model.damping_mass = 1.0;  // settles within the test's few seconds
  model.colliders.push_back(collider);
  ImplicitEuler integrator(model, SolverSettings{});
  State state = initial_state(model);
  DrapeResult result;
  result.summary = run_steps(model, integrator, state, kDt, static_cast<int>(std::lround(seconds / kDt)));
  result.positions = rod_positions(model, state.positions, 0);
  result.final_speed = max_speed(model, state.velocities);
  return result;
}

void check_draped(const DrapeResult& r, double top) {
  INFO("failure: " << r.summary.failure);
  REQUIRE(r.summary.ok);
  CHECK(r.summary.active_set_converged);
  CHECK(r.summary.max_penetration_fraction < 0.1);
  // Between vertices too: 1 cm edges sag into a 0.08-0.1 m radius by at most 8% of the radius.
  CHECK(r.summary.max_segment_penetration_fraction < 0.1);
  CHECK(r.summary.max_reported_penetration_fraction == doctest::Approx(r.summary.max_penetration_fraction));
  // Resting on the top: the middle vertex sits on the collider, both ends hang well below it.
  const Vec3 middle = r.positions[kSegments / 2];
  CHECK(middle.y() == doctest::Approx(top + kRadius).epsilon(1e-3));
  CHECK(std::abs(middle.x()) < 1e-3);
  CHECK(r.positions.front().y() < top - 0.05);
  CHECK(r.positions.back().y() < top - 0.05);
  CHECK(r.final_speed < 0.05);
}

}  // namespace

TEST_CASE("drape: a rod dropped onto a sphere at dt = 1/60 s") {
  for (const int dimension : {3, 2}) {
    CAPTURE(dimension);
    const DrapeResult r = drop_onto(sphere_collider(Vec3(0, 0, 0), 0.1, 0.3), 0.1, dimension, 3.0);
    check_draped(r, 0.1);
  }
}

TEST_CASE("drape: a rod dropped across a capsule at dt = 1/60 s") {
  // The capsule's axis along z, across the rod: the rod drapes over its cylinder.
  const DrapeResult r = drop_onto(capsule_collider(Vec3(0, 0, -0.1), Vec3(0, 0, 0.1), 0.08, 0.3), 0.08, 3, 3.0);
  check_draped(r, 0.08);
}

TEST_CASE("drape: a rod dropped onto a capsule's end cap at dt = 1/60 s") {
  // Axis along y: the rod lands on the hemispherical cap, as on a sphere.
  const DrapeResult r = drop_onto(capsule_collider(Vec3(0, -0.2, 0), Vec3(0, 0, 0), 0.08, 0.3), 0.08, 3, 3.0);
  check_draped(r, 0.08);
}

TEST_CASE("drape: a rod dropped onto an oriented box rests on its top face") {
  // Vertex contact cannot keep a box's sharp edge out of the middle of an edge (docs/contact.md,
  // limits), so the rod lands on a face large enough to hold it: a box turned about y (3D)
  // whose top face is 0.5 m across, or a rectangle tilted 0.1 rad about z (2D, below
  // atan(mu): it sticks).
  for (const int dimension : {3, 2}) {
    CAPTURE(dimension);
    const double angle = dimension == 3 ? 0.5 : 0.1;
    const Vec3 axis = dimension == 3 ? Vec3::UnitY() : Vec3::UnitZ();
    const Mat3 turn = Eigen::AngleAxisd(angle, axis).toRotationMatrix();
    const Collider box = box_collider(Vec3(0, 0, 0), turn, Vec3(0.25, 0.05, 0.25), 0.3);
    const double top = dimension == 3 ? 0.05 : 0.05 / std::cos(angle);  // above the centre
    const DrapeResult r = drop_onto(box, top, dimension, 1.5);
    INFO("failure: " << r.summary.failure);
    REQUIRE(r.summary.ok);
    CHECK(r.summary.active_set_converged);
    CHECK(r.summary.max_segment_penetration_fraction < 0.1);
    // At rest on the face: every vertex at one radius from it.
    double worst = 0.0;
    for (const Vec3& p : r.positions) {
      const Vec3 local = turn.transpose() * p;
      worst = std::max(worst, std::abs(local.y() - 0.05 - kRadius));
    }
    CHECK(worst < 0.01 * kRadius);
    CHECK(r.final_speed < 1e-3);
  }
}

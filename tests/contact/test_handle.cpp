// Keyframed handles (model/handle.hpp): interpolation between keys, the rigid pose about a
// pivot, and the contract that matters to users: a handle moving along its keys puts its
// rods' fixed vertices exactly on the keyed pose at every step, and carries its colliders.

#include <cmath>

#include <doctest/doctest.h>
#include <Eigen/Geometry>

#include "bristle/model/handle.hpp"
#include "contact/contact_test_support.hpp"

using namespace bristle;
using namespace bristle::test;

namespace {

HandleKey key(double time, const Vec3& translation, double angle = 0.0, const Vec3& axis = Vec3::UnitZ()) {
  HandleKey k;
  k.time = time;
  k.translation = translation;
  k.rotation_angle = angle;
  k.rotation_axis = axis;
  return k;
}

Handle three_key_handle(HandleInterpolation interpolation) {
  Handle h;
  h.name = "h";
  h.interpolation = interpolation;
  h.keys = {key(0.0, Vec3(0, 0, 0)), key(1.0, Vec3(1, 0, 0), 0.5), key(3.0, Vec3(1, 2, 0), 1.5)};
  return h;
}

}  // namespace

TEST_CASE("handle: interpolation at keys, between them and outside them") {
  for (const auto interpolation :
       {HandleInterpolation::Linear, HandleInterpolation::Smooth, HandleInterpolation::CatmullRom}) {
    const Handle h = three_key_handle(interpolation);
    CAPTURE(static_cast<int>(interpolation));
    // Exactly on every key; held before the first and after the last.
    CHECK(h.translation_at(0.0).isApprox(Vec3(0, 0, 0)));
    CHECK(h.translation_at(1.0).isApprox(Vec3(1, 0, 0)));
    CHECK(h.translation_at(3.0).isApprox(Vec3(1, 2, 0)));
    CHECK(h.translation_at(-1.0).isApprox(Vec3(0, 0, 0)));
    CHECK(h.translation_at(7.0).isApprox(Vec3(1, 2, 0)));
    CHECK(h.rotation_vector_at(1.0).isApprox(Vec3(0, 0, 0.5)));
  }
  // Between keys: linear is proportional, smoothstep eases (same midpoint, slower near keys).
  const Handle linear = three_key_handle(HandleInterpolation::Linear);
  const Handle smooth = three_key_handle(HandleInterpolation::Smooth);
  CHECK(linear.translation_at(2.0).y() == doctest::Approx(1.0));
  CHECK(smooth.translation_at(2.0).y() == doctest::Approx(1.0));
  CHECK(linear.translation_at(1.5).y() == doctest::Approx(0.5));
  CHECK(smooth.translation_at(1.5).y() == doctest::Approx(2.0 * (0.25 * 0.25 * (3.0 - 0.5))));
  CHECK(linear.rotation_vector_at(2.0).z() == doctest::Approx(1.0));
  // Smooth: zero velocity at every key (finite difference of the translation).
  const double e = 1e-6;
  CHECK((smooth.translation_at(1.0 + e) - smooth.translation_at(1.0 - e)).norm() / (2 * e) < 1e-5);
  // Catmull-Rom passes through key 1 with the tangent (p2 - p0) / (t2 - t0) = (1/3, 2/3, 0).
  const Handle spline = three_key_handle(HandleInterpolation::CatmullRom);
  const Vec3 velocity = (spline.translation_at(1.0 + e) - spline.translation_at(1.0 - e)) / (2 * e);
  CHECK(velocity.isApprox(Vec3(1.0 / 3.0, 2.0 / 3.0, 0.0), 1e-5));
}

TEST_CASE("handle: the pose rotates about the pivot, then translates") {
  Handle h;
  h.name = "turn";
  h.pivot = Vec3(1, 0, 0);
  h.keys = {key(0.0, Vec3::Zero()), key(1.0, Vec3(0, 0, 2), 0.5 * kPi, Vec3(0, 0, 3))};
  const RigidTransform p = h.pose(1.0);
  CHECK(p.apply(Vec3(1, 0, 0)).isApprox(Vec3(1, 0, 2)));  // the pivot only translates
  CHECK(p.apply(Vec3(2, 0, 0)).isApprox(Vec3(1, 1, 2)));  // a quarter turn about z through the pivot
  CHECK((p * p.inverse()).rotation.isApprox(Mat3::Identity()));
  CHECK((p * p.inverse()).translation.norm() < 1e-14);
  // A rotation vector interpolated linearly turns at a constant rate about a fixed axis.
  const RigidTransform half = h.pose(0.5);
  CHECK(half.apply(Vec3(2, 0, 0)).isApprox(Vec3(1 + std::cos(0.25 * kPi), std::sin(0.25 * kPi), 1)));
}

TEST_CASE("handle: invalid handles are refused") {
  Handle h;
  h.name = "h";
  CHECK_THROWS_AS(validate_handle(h), std::invalid_argument);  // no keys
  h.keys = {key(0.0, Vec3::Zero()), key(0.0, Vec3::Zero())};
  CHECK_THROWS_AS(validate_handle(h), std::invalid_argument);  // times not increasing
  h.keys = {key(0.0, Vec3::Zero()), key(1.0, Vec3::Zero(), 1.0, Vec3::Zero())};
  CHECK_THROWS_AS(validate_handle(h), std::invalid_argument);  // zero axis
  h.keys = {key(0.0, Vec3::Zero())};
  CHECK_NOTHROW(validate_handle(h));
  Model model = single_rod_model(3, clamped_rod(4, 0.1, 3, soft_material(), "r"));
  h.rods = {"nope"};
  CHECK_THROWS_AS(HandleDriver(model, {h}), std::invalid_argument);
}

TEST_CASE("handle: fixed vertices land exactly on the keyed pose at every step") {
  // A clamped rod under gravity, its root pressed down, turned about a pivot and dragged:
  // after every step each fixed vertex equals pose(t) applied to its initial position.
  for (const int dimension : {3, 2})
    for (const auto interpolation :
         {HandleInterpolation::Linear, HandleInterpolation::Smooth, HandleInterpolation::CatmullRom}) {
      CAPTURE(dimension);
      CAPTURE(static_cast<int>(interpolation));
      const Material nylon = make_material(1140.0, 0.0005, 3.0e9);
      Model model = single_rod_model(dimension, clamped_rod(10, 0.05, dimension, nylon, "b"), earth_gravity());
      Handle h;
      h.name = "brush";
      h.rods = {"b"};
      h.pivot = Vec3(0.0, 0.02, 0.0);
      h.interpolation = interpolation;
      const Vec3 axis = dimension == 3 ? Vec3(0.3, 0.2, 1.0) : Vec3::UnitZ();
      h.keys = {key(0.0, Vec3::Zero()), key(0.1, Vec3(0, -0.01, 0), 0.3, axis),
                key(0.25, Vec3(0.03, -0.012, 0), 0.4, axis), key(0.3, Vec3(0.03, 0.01, 0), 0.0, axis)};
      HandleDriver driver(model, {h});
      ImplicitEuler integrator(model, SolverSettings{});
      State state = initial_state(model);
      driver.place(model, state);
      double worst = 0.0;
      const double dt = 1.0 / 120.0;
      const RunSummary summary = run_steps(
          model, integrator, state, dt, 48,  // past the last key: the handle then holds still
          [&](const State& st, const StepReport&) {
            const RigidTransform pose = h.pose(st.time);
            for (int i : model.rods[0].fixed) {
              const Vec3 expected = pose.apply(model.rods[0].initial_positions[i]);
              Vec3 error = vertex_position(model, st.positions, 0, i) - expected;
              if (dimension == 2) error.z() = 0.0;  // a 2D pose may not keep z = 0 off the axis
              worst = std::max(worst, error.norm());
            }
          },
          &driver, &model);
      REQUIRE(summary.ok);
      CHECK(summary.steps == 48);
      CHECK(worst < 1e-15 + 1e-12 * 0.05);
    }
}

TEST_CASE("handle: place() starts handled rods rigidly at the first key's pose") {
  Model model = single_rod_model(3, clamped_rod(5, 0.05, 3, soft_material(), "b"));
  Handle h;
  h.name = "h";
  h.rods = {"b"};
  h.keys = {key(0.0, Vec3(0, 0.1, 0), 0.5, Vec3::UnitY())};
  HandleDriver driver(model, {h});
  State state = initial_state(model);
  driver.place(model, state);
  const RigidTransform pose = h.pose(0.0);
  for (int i = 0; i < 6; ++i)
    CHECK(vertex_position(model, state.positions, 0, i).isApprox(pose.apply(model.rods[0].initial_positions[i])));
  CHECK(state.velocities.norm() == 0.0);
}

TEST_CASE("handle: a collider follows its handle and records its motion over the step") {
  Model model = single_rod_model(3, clamped_rod(5, 0.05, 3, soft_material(), "b"));
  model.colliders.push_back(sphere_collider(Vec3(0, -1, 0), 0.5, 0.0));
  model.colliders.push_back(plane_collider(Vec3(0, -2, 0), Vec3::UnitY(), 0.0));
  model.colliders[0].handle = "mover";
  Handle h;
  h.name = "mover";
  h.keys = {key(0.0, Vec3::Zero()), key(1.0, Vec3(1, 0, 0), 0.5 * kPi, Vec3::UnitZ())};
  HandleDriver driver(model, {h});
  State state = initial_state(model);
  state.time = 0.25;
  driver.prepare_step(model, state, 0.25);
  const RigidTransform end = h.pose(0.5);
  CHECK(model.colliders[0].center.isApprox(end.apply(Vec3(0, -1, 0))));
  // step_rotation/translation map the pose at 0.25 s onto the pose at 0.5 s.
  const Vec3 at_start = h.pose(0.25).apply(Vec3(0.3, -0.4, 0.2));
  const Vec3 mapped = model.colliders[0].step_rotation * at_start + model.colliders[0].step_translation;
  CHECK(mapped.isApprox(end.apply(Vec3(0.3, -0.4, 0.2))));
  // The static plane is untouched.
  CHECK(model.colliders[1].point.isApprox(Vec3(0, -2, 0)));
  CHECK(model.colliders[1].step_translation.norm() == 0.0);
}

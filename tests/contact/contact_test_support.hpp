#pragma once
/// Colliders built in code and a stepping loop that checks contact after every step, for the
/// contact tests.

#include <cmath>
#include <functional>
#include <limits>
#include <string>

#include "bristle/contact/signed_distance.hpp"
#include "bristle/integrator/implicit_euler.hpp"
#include "bristle/model/collider.hpp"
#include "bristle/model/handle.hpp"
#include "support/rod_builders.hpp"

namespace bristle::test {

inline Collider plane_collider(const Vec3& point, const Vec3& normal, double friction) {
  Collider c;
  c.type = ColliderType::Plane;
  c.point = point;
  c.normal = normal.normalized();
  c.friction = friction;
  return c;
}

inline Collider sphere_collider(const Vec3& center, double radius, double friction) {
  Collider c;
  c.type = ColliderType::Sphere;
  c.center = center;
  c.radius = radius;
  c.friction = friction;
  return c;
}

inline Collider capsule_collider(const Vec3& a, const Vec3& b, double radius, double friction) {
  Collider c;
  c.type = ColliderType::Capsule;
  c.a = a;
  c.b = b;
  c.radius = radius;
  c.friction = friction;
  return c;
}

inline Collider box_collider(const Vec3& center, const Mat3& rotation, const Vec3& half_extents, double friction) {
  Collider c;
  c.type = ColliderType::Box;
  c.center = center;
  c.rotation = rotation;
  c.half_extents = half_extents;
  c.friction = friction;
  return c;
}

/// How deep a sphere of `radius` at p reaches into the deepest collider, relative to the
/// radius (negative when clear). In 2D a box's z extent is ignored (a rectangle).
inline double point_penetration_fraction(const Model& model, const Vec3& p, double radius) {
  double worst = -std::numeric_limits<double>::infinity();
  for (const Collider& c : model.colliders) {
    Collider c2 = c;
    if (model.dimension == 2 && c2.type == ColliderType::Box)
      c2.half_extents.z() = std::numeric_limits<double>::infinity();
    worst = std::max(worst, (radius - collider_distance(c2, p)) / radius);
  }
  return worst;
}

/// Deepest penetration of any free vertex's surface into any collider, relative to the rod's
/// radius (0 when nothing penetrates). Measured independently of the contact solver's report.
inline double penetration_fraction(const Model& model, const VecX& x) {
  double worst = 0.0;
  for (int r = 0; r < static_cast<int>(model.rods.size()); ++r) {
    const double radius = model.rods[r].material.radius;
    for (int i = 0; i < model.rods[r].vertex_count(); ++i) {
      if (model.rods[r].is_fixed(i)) continue;
      const Vec3 p = vertex_position(model, x, r, i);
      worst = std::max(worst, point_penetration_fraction(model, p, radius));
    }
  }
  return worst;
}

/// Like penetration_fraction, but along the rods' surfaces between vertices too: each edge
/// sampled at `samples` interior points. Contact acts at vertices, so on a curved collider
/// the middle of an edge of length l may sag in by about l^2 / (8 R) (docs/contact.md, limits).
inline double segment_penetration_fraction(const Model& model, const VecX& x, int samples = 16) {
  double worst = penetration_fraction(model, x);
  for (int r = 0; r < static_cast<int>(model.rods.size()); ++r) {
    const double radius = model.rods[r].material.radius;
    for (int i = 0; i + 1 < model.rods[r].vertex_count(); ++i) {
      const Vec3 a = vertex_position(model, x, r, i), b = vertex_position(model, x, r, i + 1);
      for (int k = 1; k < samples; ++k) {
        const Vec3 p = a + (b - a) * (static_cast<double>(k) / samples);
        worst = std::max(worst, point_penetration_fraction(model, p, radius));
      }
    }
  }
  return worst;
}

/// The largest vertex speed in a state [m/s].
inline double max_speed(const Model& model, const VecX& v) {
  double fastest = 0.0;
  const int D = model.dimension;
  for (int g = 0; g < model.layout.vertex_count(); ++g)
    fastest = std::max(fastest, v.segment(model.layout.vertex_dof(g), D).norm());
  return fastest;
}

/// What a contact run saw over all its steps.
struct RunSummary {
  bool ok = true;
  std::string failure;
  int steps = 0;
  double max_penetration_fraction = 0.0;  ///< measured here at the vertices, every step
  double max_segment_penetration_fraction = 0.0;  ///< along the edges too, every step
  double max_reported_penetration_fraction = 0.0;  ///< the contact solver's own report
  double max_speed = 0.0;
  bool active_set_converged = true;
};

/// Steps `state` `steps` times by dt, calling `after_step` (if any) after each step.
inline RunSummary run_steps(const Model& model, ImplicitEuler& integrator, State& state, double dt, int steps,
                            const std::function<void(const State&, const StepReport&)>& after_step = {},
                            HandleDriver* handles = nullptr, Model* mutable_model = nullptr) {
  RunSummary summary;
  const double t0 = state.time;
  for (int s = 0; s < steps; ++s) {
    if (handles) handles->prepare_step(*mutable_model, state, dt);
    const StepReport report = integrator.step(state, dt);
    if (!report.ok) {
      summary.ok = false;
      summary.failure = report.failure;
      return summary;
    }
    state.time = t0 + (s + 1) * dt;  // the runner's clock: steps times dt
    ++summary.steps;
    summary.max_penetration_fraction = std::max(summary.max_penetration_fraction, penetration_fraction(model, state.positions));
    summary.max_segment_penetration_fraction =
        std::max(summary.max_segment_penetration_fraction, segment_penetration_fraction(model, state.positions));
    summary.max_reported_penetration_fraction =
        std::max(summary.max_reported_penetration_fraction, report.contact.max_penetration_fraction);
    summary.max_speed = std::max(summary.max_speed, max_speed(model, state.velocities));
    summary.active_set_converged = summary.active_set_converged && report.contact.converged;
    if (after_step) after_step(state, report);
  }
  return summary;
}

}  // namespace bristle::test

// The last check of a scene: quantities derived from finite inputs can still overflow (a
// density of 1e300 times a gravity of 1e300). The integrator would then write frame 0 with
// energies it cannot represent and fail at step 1; the scene is refused here instead, at the
// key responsible. Masses and stiffnesses derived from positive inputs can also underflow to
// zero (a section 5e-324 m thick), which leaves the solver a singular system: refused too.

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "bristle/contact/rod_contact.hpp"
#include "bristle/scene/limits.hpp"
#include "bristle/scene/scene_blocks.hpp"

namespace bristle {
namespace {

constexpr double kPi = 3.14159265358979323846;

std::string vertex_text(const Rod& rod, int i) {
  return "rod " + quoted_text(rod.name) + " vertex " + std::to_string(i);
}

/// Whether a vertex position lies within kMaxCoordinate of the origin on every axis (false
/// for NaN).
bool drawable(const Vec3& x) { return (x.array().abs() <= kMaxCoordinate).all(); }

std::string point_text(const Vec3& x) {
  return "(" + number_text(x[0]) + ", " + number_text(x[1]) + ", " + number_text(x[2]) + ") m";
}

constexpr const char* kBeyondDrawable = ", a coordinate beyond the 1e100 m at which frames can be drawn (docs/limits.md)";

void check_rod(const Model& model, const Rod& rod, const RodSpec& spec, const JsonSource& source,
               double& gravity_energy) {
  const std::string density = spec.material_pointer + "/density";
  const std::string youngs = spec.material_pointer + "/youngs_modulus";
  // stableNorm: a gravity of [1e300, 1e300, 1e300] has a finite length that norm() overflows.
  const double g = model.gravity.head(model.dimension).stableNorm();
  for (int i = 0; i < rod.vertex_count(); ++i) {
    // A rod placed 1e200 m out runs, but no frame of it can be drawn (docs/limits.md).
    if (!drawable(rod.initial_positions[static_cast<std::size_t>(i)]) && rod.initial_positions[static_cast<std::size_t>(i)].allFinite())
      source.fail(spec.pointer, vertex_text(rod, i) + " lies at " +
                                    point_text(rod.initial_positions[static_cast<std::size_t>(i)]) + kBeyondDrawable);
    const double mass = rod.vertex_mass(i);
    if (!std::isfinite(mass))
      source.fail(density, "the mass of " + vertex_text(rod, i) +
                               " overflows a double (density x cross-section x length)");
    if (!std::isfinite(mass * g))
      source.fail("/gravity", "the weight of " + vertex_text(rod, i) + " (mass " + number_text(mass) +
                                  " kg times gravity) overflows a double");
    gravity_energy -= mass * model.gravity.head(model.dimension).dot(rod.initial_positions[i].head(model.dimension));
    if (!std::isfinite(gravity_energy))
      source.fail("/gravity", "the gravitational energy overflows a double at " + vertex_text(rod, i) +
                                  " (mass x gravity x height)");
    const bool interior = i > 0 && i + 1 < rod.vertex_count();
    if (interior && !std::isfinite(rod.bend_stiffness(i)))
      source.fail(youngs, "the bending stiffness of " + vertex_text(rod, i) + " overflows a double");
    // Positive inputs whose product underflows: a rectangle 5e-324 m thick has no area, so no
    // mass and no stiffness, and the solver has nothing to solve with (a static solve of such a
    // rod ran its 1000 Newton iterations for half a minute before failing). The rod described
    // is not the one that would be simulated.
    if (!(mass > 0.0))
      source.fail(spec.material_pointer, "the mass of " + vertex_text(rod, i) +
                                             " underflows to zero (density x cross-section area " +
                                             number_text(rod.material.area()) + " m^2 x length)");
    if (interior && !(rod.bend_stiffness(i) > 0.0))
      source.fail(youngs, "the bending stiffness of " + vertex_text(rod, i) +
                              " underflows to zero (Young's modulus x second moment of area / length)");
  }
  for (int j = 0; j < rod.edge_count(); ++j) {
    if (!std::isfinite(rod.stretch_stiffness(j)))
      source.fail(youngs, "the stretch stiffness of rod " + quoted_text(rod.name) + " edge " + std::to_string(j) +
                              " overflows a double (Young's modulus x area / length)");
    if (!(rod.stretch_stiffness(j) > 0.0))
      source.fail(youngs, "the stretch stiffness of rod " + quoted_text(rod.name) + " edge " + std::to_string(j) +
                              " underflows to zero (Young's modulus x area / length)");
  }
  // Contact and rendering see a round tube of the section's larger half extent (the
  // material's radius): its cross-section must be representable, as a circle's is (a circle
  // whose area overflows already overflows the mass). An ellipse 1e300 m wide and 4e-5 m
  // thick has a finite mass and, in 2D, a finite stiffness, but no picture can hold it.
  if (!std::isfinite(kPi * rod.material.radius * rod.material.radius))
    source.fail(spec.material_pointer + "/cross_section",
                "the round tube that contact and rendering see (radius " + number_text(rod.material.radius) +
                    " m, the section's larger half extent) has an area that overflows a double");
  if (!rod.twist) return;
  // Rods with twist: the twist stiffness G J / l_i, the larger bending stiffness E I1 / l_i
  // (I1 > I2 for a section wider than thick; rod.bend_stiffness(i) used I2), and each edge's
  // inertia about its axis.
  const double twisting = rod.material.twisting_stiffness(), inertia = rod.material.rotational_inertia();
  const double bending = rod.material.youngs_modulus * rod.material.section().second_moment_1();
  for (int i = 1; i + 1 < rod.vertex_count(); ++i) {
    if (!std::isfinite(twisting / rod.voronoi_length(i)))
      source.fail(spec.material_pointer, "the twist stiffness of " + vertex_text(rod, i) +
                                             " overflows a double (shear modulus x torsion constant / length)");
    if (!std::isfinite(bending / rod.voronoi_length(i)))
      source.fail(youngs, "the bending stiffness of " + vertex_text(rod, i) + " overflows a double");
  }
  for (const double theta : rod.initial_twists())
    if (!std::isfinite(theta))
      source.fail(spec.pointer + "/rest_twist", "the twist that rod " + quoted_text(rod.name) +
                                                    " accumulates at this rate overflows a double");
  for (int j = 0; j < rod.edge_count(); ++j) {
    if (!std::isfinite(inertia * rod.rest_lengths[j]))
      source.fail(density, "the rotational inertia of rod " + quoted_text(rod.name) + " edge " + std::to_string(j) +
                               " overflows a double (density x polar moment x length)");
    if (!(inertia * rod.rest_lengths[j] > 0.0))
      source.fail(density, "the rotational inertia of rod " + quoted_text(rod.name) + " edge " + std::to_string(j) +
                               " underflows to zero (density x polar moment x length)");
  }
}

}  // namespace

// The rod-contact barrier's stiffness is sized to the weight of a pair's vertices over its gap
// (rod_contact_weight_stiffness): a density or gravity near the top of the doubles, or a very
// thin rod, makes it, or the barrier's energy over the gap, overflow, and frame 0's contact
// energy could not be held. Bounded for each rod by the mean mass of its heaviest segment and
// the scene's heaviest: the stiffness is largest over the smallest gap (its radius plus the
// scene's smallest), the energy near a touching pair, kappa g^2 times a logarithm, over the
// largest (kappa g^2 grows with the gap), kept 1e3 times below overflow.
void check_rod_contact_finite(const Model& model, const JsonSource& source) {
  if (!model.rod_contact.enabled || model.rod_contact.method != RodContactMethod::Barrier) return;
  const double g = gravity_magnitude(model);
  double heaviest = 0.0, thinnest = std::numeric_limits<double>::infinity(), thickest = 0.0;
  std::vector<double> rod_heaviest(model.rods.size(), 0.0);
  for (std::size_t r = 0; r < model.rods.size(); ++r) {
    const Rod& rod = model.rods[r];
    for (int j = 0; j < rod.edge_count(); ++j)
      rod_heaviest[r] = std::max(rod_heaviest[r], rod.vertex_mass(j) + rod.vertex_mass(j + 1));
    heaviest = std::max(heaviest, rod_heaviest[r]);
    thinnest = std::min(thinnest, rod.material.radius);
    thickest = std::max(thickest, rod.material.radius);
  }
  for (std::size_t r = 0; r < model.rods.size(); ++r) {
    const Rod& rod = model.rods[r];
    const double mean_mass = 0.25 * (rod_heaviest[r] + heaviest);
    const double stiffest = rod_contact_weight_stiffness(mean_mass, g, rod.material.radius + thinnest);
    const double widest_gap = kContactGapFraction * (rod.material.radius + thickest);
    const double energy = rod_contact_weight_stiffness(mean_mass, g, rod.material.radius + thickest) * widest_gap * widest_gap;
    if (!std::isfinite(stiffest) || !std::isfinite(1e3 * energy))
      source.fail("/rod_contact", "the rod-contact barrier's stiffness for rod " + quoted_text(rod.name) +
                                      " (sized to the weight of its segments, a pair's mean vertex mass up to " +
                                      number_text(mean_mass) + " kg under " + number_text(std::max(g, 1.0)) +
                                      " m/s^2, over gaps of " + number_text(kContactGapFraction * (rod.material.radius + thinnest)) +
                                      " m and more) or its energy overflows a double");
  }
}

void check_model_finite(const Model& model, const std::vector<RodSpec>& rods, const JsonSource& source) {
  double gravity_energy = 0.0;
  for (std::size_t r = 0; r < model.rods.size() && r < rods.size(); ++r)
    check_rod(model, model.rods[r], rods[r], source, gravity_energy);
  double load_energy = 0.0;
  for (std::size_t k = 0; k < model.loads.size(); ++k) {
    const PointLoad& load = model.loads[k];
    const Rod& rod = model.rods[static_cast<std::size_t>(load.rod)];
    load_energy -= load.force.head(model.dimension).dot(rod.initial_positions[static_cast<std::size_t>(load.vertex)].head(model.dimension));
    if (!std::isfinite(load_energy))
      source.fail(pointer_append("/loads", k), "the work of this load (force x position) overflows a double");
  }
}

void check_handles_finite(const Model& model, const std::vector<Handle>& handles, double duration,
                          const JsonSource& source) {
  // A dynamic run starts with each handle's rods and colliders placed at its pose at t = 0 and
  // moves them by its keys until `duration`: a pivot far from a rotated rod (1e308 m) puts them
  // at positions that overflow, which frame 0 could not hold; a translation of 1e300 m leaves
  // them finite but rounds their edges to nothing, or makes the weights' or loads' work at
  // frame 0 overflow. Checked: the poses at t = 0, at the keys within the run and at its end;
  // at t = 0 also the placed edges and the gravity and load energies.
  // Without handles the rods start at rest, which check_model_finite has checked.
  if (handles.empty()) return;
  const int dimension = model.dimension;
  std::vector<std::vector<Vec3>> placed(model.rods.size());
  for (std::size_t r = 0; r < model.rods.size(); ++r) placed[r] = model.rods[r].initial_positions;
  std::vector<int> rod_handle(model.rods.size(), -1);
  for (std::size_t h = 0; h < handles.size(); ++h) {
    const Handle& handle = handles[h];
    const std::string entry = pointer_append("/handles", h);
    std::vector<double> times{0.0, duration};
    for (const HandleKey& key : handle.keys)
      if (key.time > 0.0 && key.time < duration) times.push_back(key.time);
    for (const double time : times) {
      const RigidTransform pose = handle.pose(time);
      const std::string when =
          " at t = " + number_text(time) + " s (its pivot, rotation and translation together overflow a double)";
      for (const std::string& name : handle.rods) {
        const int r = model.rod_index(name);
        if (r < 0) continue;
        const Rod& rod = model.rods[static_cast<std::size_t>(r)];
        for (int i = 0; i < rod.vertex_count(); ++i) {
          const Vec3 x = pose.apply(rod.initial_positions[static_cast<std::size_t>(i)]);
          if (!x.allFinite())
            source.fail(entry, "this handle moves " + vertex_text(rod, i) + " to a non-finite position" + when);
          if (!drawable(x))
            source.fail(entry, "this handle moves " + vertex_text(rod, i) + " to " + point_text(x) + " at t = " +
                                   number_text(time) + " s" + kBeyondDrawable);
          if (time == 0.0) placed[static_cast<std::size_t>(r)][static_cast<std::size_t>(i)] = x;
        }
        if (time == 0.0) rod_handle[static_cast<std::size_t>(r)] = static_cast<int>(h);
      }
      for (std::size_t c = 0; c < model.colliders.size(); ++c) {
        if (model.colliders[c].handle != handle.name) continue;
        const Collider moved = transform_collider(model.colliders[c], pose);
        const bool finite = moved.point.allFinite() && moved.normal.allFinite() && moved.center.allFinite() &&
                            moved.a.allFinite() && moved.b.allFinite() && moved.rotation.allFinite();
        if (!finite) source.fail(entry, "this handle moves collider " + std::to_string(c) + " to a non-finite pose" + when);
      }
    }
  }
  // Frame 0 as placed: every handled edge keeps a length, and the energies frame 0 reports
  // stay finite (check_model_finite computed them at rest).
  double gravity_energy = 0.0;
  for (std::size_t r = 0; r < model.rods.size(); ++r) {
    const Rod& rod = model.rods[r];
    const int h = rod_handle[r];
    const std::string where = h >= 0 ? pointer_append("/handles", static_cast<std::size_t>(h)) : "/gravity";
    for (int j = 0; h >= 0 && j < rod.edge_count(); ++j) {
      const Vec3 edge = placed[r][static_cast<std::size_t>(j) + 1] - placed[r][static_cast<std::size_t>(j)];
      if (!(edge.head(dimension).norm() > 0.0))
        source.fail(where, "this handle places rod " + quoted_text(rod.name) + " so far away that its edge " +
                               std::to_string(j) + " rounds to zero length at t = 0");
    }
    for (int i = 0; i < rod.vertex_count(); ++i) {
      gravity_energy -= rod.vertex_mass(i) * model.gravity.head(dimension).dot(placed[r][static_cast<std::size_t>(i)].head(dimension));
      if (!std::isfinite(gravity_energy))
        source.fail(where, "the gravitational energy at t = 0 overflows a double at " + vertex_text(rod, i) +
                               " where a handle places it (mass x gravity x height)");
    }
  }
  double load_energy = 0.0;
  for (std::size_t k = 0; k < model.loads.size(); ++k) {
    const PointLoad& load = model.loads[k];
    const std::size_t r = static_cast<std::size_t>(load.rod);
    load_energy -= load.force.head(dimension).dot(placed[r][static_cast<std::size_t>(load.vertex)].head(dimension));
    if (!std::isfinite(load_energy))
      source.fail(rod_handle[r] >= 0 ? pointer_append("/handles", static_cast<std::size_t>(rod_handle[r]))
                                     : pointer_append("/loads", k),
                  "the work of load " + std::to_string(k) +
                      " (force x position) overflows a double at t = 0, where a handle places its vertex");
  }
}

}  // namespace bristle

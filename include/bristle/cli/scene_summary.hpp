#pragma once
/// What `bristle validate` reports about a loaded scene: its size, mass, time stepping, and
/// the extremes that decide how hard it is to simulate (smallest edge, stiffest elements,
/// fastest element vibration against the time step).

#include <string>

#include <nlohmann/json.hpp>

#include "bristle/scene/scene.hpp"

namespace bristle::cli {

/// Where an extreme value was found: rod index and name, and an edge or vertex index.
struct Extreme {
  double value = 0.0;
  int rod = -1;
  std::string rod_name;
  int index = -1;  ///< edge (stretch, smallest edge) or vertex (bend)
};

struct SceneSummary {
  std::string name;
  std::string source;
  int dimension = 3;
  bool static_mode = false;
  int rods = 0;
  int vertices = 0;
  int edges = 0;
  int fixed_vertices = 0;
  int free_dofs = 0;
  int twisting_rods = 0;  ///< rods with twist DOFs and material frames (3D)
  int loads = 0;
  int colliders = 0;
  RodContactSettings rod_contact;  ///< the scene's `rod_contact`
  double total_mass = 0.0;    ///< [kg]
  double total_length = 0.0;  ///< sum of rest lengths [m]
  double dt = 0.0, frame_dt = 0.0, duration = 0.0;  ///< [s]
  int steps_per_frame = 0;
  long long steps = 0;
  int frames = 0;
  Extreme smallest_edge;       ///< rest length [m]
  Extreme stiffest_stretch;    ///< E A / L [N/m]
  Extreme stiffest_bend;       ///< E I / l [N m]
  /// Estimated vibration frequency of the stiffest element for its own masses [Hz]:
  /// stretch sqrt(k (1/m_a + 1/m_b)) / 2 pi (fixed ends have infinite mass), bend
  /// sqrt(k (1/L0 + 1/L1)^2 / m_i) / 2 pi (the middle vertex moving across the rod).
  Extreme fastest_stretch_hz;
  Extreme fastest_bend_hz;
  /// Estimated first bending mode of rods clamped at the root (fixed [0, 1]) [Hz]: the
  /// Euler-Bernoulli cantilever 1.8751^2 / (2 pi L^2) sqrt(E I / rho A); the largest over rods
  /// (the one the time step resolves worst).
  Extreme first_mode_hz;
  int unheld_rods = 0;  ///< rods with no fixed vertex
};

SceneSummary summarize_scene(const Scene& scene);

/// The summary as text for people, with hints about the time step.
std::string describe(const SceneSummary& summary);

/// The summary as JSON (`bristle validate --json`).
nlohmann::json to_json(const SceneSummary& summary);

}  // namespace bristle::cli

#pragma once
/// A loaded scene: the model to simulate plus the time and solver settings, with defaults in
/// place. Only the scene loader (scene/load_scene.hpp) sees JSON; everything downstream
/// works from this struct.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bristle/integrator/implicit_euler.hpp"
#include "bristle/model/handle.hpp"
#include "bristle/model/model.hpp"

namespace bristle {

struct TimeSettings {
  double dt = 0.0;        ///< time step [s], > 0
  double frame_dt = 0.0;  ///< time between written frames [s], a whole multiple of dt
  double duration = 0.0;  ///< simulated time [s]

  int steps_per_frame() const;  ///< round(frame_dt / dt)
  int frame_count() const;      ///< round(duration / frame_dt) + 1, frame 0 the initial state
};

enum class SolverMode { Dynamic, Static };

struct Scene {
  std::string name;
  std::string source_path;  ///< the file it was loaded from ("" when built in code)
  Model model;              ///< finalized (layout computed)
  TimeSettings time;
  SolverSettings solver;
  SolverMode mode = SolverMode::Dynamic;
  std::vector<Handle> handles;  ///< keyframed motions, driven by the runner (model/handle.hpp)
  /// The scene as loaded, with defaults filled in and generators expanded into vertex
  /// lists: what the manifest records under "scene".
  nlohmann::json expanded;
  /// Accepted input worth a message, one "file:line: pointer: text" each (a pose target out
  /// of reach). Commands print them to stderr prefixed with "warning: ".
  std::vector<std::string> warnings;
};

}  // namespace bristle

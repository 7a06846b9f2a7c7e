#pragma once
/// The `stats` of a frame: what the steps since the previous frame did, and the energies at
/// the frame (docs/output-format.md lists every key).

#include <nlohmann/json.hpp>

#include "bristle/integrator/implicit_euler.hpp"

namespace bristle {

class FrameStats {
 public:
  /// Adds one step's report.
  void add(const StepReport& report);

  /// The stats object for a frame whose state has energies `energies`; then starts over.
  /// Keys: steps, cg_iterations (sum), cg_iterations_max (per step), cg_residual (last
  /// step's), cg_residual_max, newton_iterations (sum), energies {kinetic, stretch, bend,
  /// elastic, gravitational, load, potential, total} [J].
  nlohmann::json take(const EnergyBreakdown& energies);

 private:
  int steps_ = 0;
  long long cg_iterations_ = 0;
  int cg_iterations_max_ = 0;
  double cg_residual_ = 0.0;
  double cg_residual_max_ = 0.0;
  long long newton_iterations_ = 0;
};

/// The energies as a JSON object (the keys FrameStats::take writes under "energies").
nlohmann::json energies_to_json(const EnergyBreakdown& energies);

}  // namespace bristle

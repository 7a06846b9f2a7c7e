#pragma once
/// The `stats` of a frame: what the steps since the previous frame did, and the energies at
/// the frame (docs/output-format.md lists every key).

#include <limits>
#include <vector>

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
  /// elastic, gravitational, load, potential, total} [J]; and, when the model has colliders,
  /// contact (see contact_stats_json, plus rod_solves: the rods its passes solved, and
  /// max_friction_excess: the most a contact's friction exceeded mu times its normal force
  /// at the end of any of the steps [N]); with
  /// rod-rod contact, rod_contact {pairs (gap below g^ at the frame), candidates, overlapping
  /// (pairs left out: they started inside each other), min_gap [m] and min_gap_fraction (of the smaller radius) over the steps since the
  /// last frame, absent when no two segments came near, ccd_limited (line searches CCD shortened),
  /// crossings (pairs whose centre lines met during a step, summed over the steps)}.
  nlohmann::json take(const EnergyBreakdown& energies);

 private:
  int steps_ = 0;
  long long cg_iterations_ = 0;
  int cg_iterations_max_ = 0;
  double cg_residual_ = 0.0;
  double cg_residual_max_ = 0.0;
  long long newton_iterations_ = 0;
  long long substeps_ = 0;          // steps taken, split halves counted (= steps when none was split)
  long long unconverged_steps_ = 0; // steps in contact taken above the tolerance
  long long unconverged_rods_ = 0;  // over them, the rods each left above it (StepReport::unconverged_rods)
  // Contact over the steps since the previous frame (steps all have the runner's dt).
  bool has_contact_ = false;
  ContactReport last_contact_;        // the last step's: the state of the frame
  std::vector<double> normal_sum_;    // per collider: sum over steps of the normal force [N]
  std::vector<double> friction_sum_;  // likewise, friction [N]
  long long contact_solves_ = 0;
  long long contact_rod_solves_ = 0;  // rods solved over those passes (ContactReport::rod_solves)
  int contact_unconverged_ = 0;
  double max_penetration_ = 0.0;
  double max_penetration_fraction_ = 0.0;
  double max_friction_excess_ = 0.0;  // over the steps [N] (ContactReport::max_friction_excess)
  // Rod-rod contact (written when the energies say the model has it).
  RodContactStats rod_contact_last_;  // the last step's: the state of the frame
  // Rod contact as constraints (StepReport::constraints): the last step's rows and pressed
  // rows, the most rows of a step, the impulse solves' sweeps and their largest residual.
  bool constraints_ = false;
  int contact_rows_ = 0, contacts_pressed_ = 0, contact_rows_max_ = 0;
  long long impulse_sweeps_ = 0;
  double impulse_residual_max_ = 0.0;
  double rod_min_gap_ = std::numeric_limits<double>::infinity();           // over the steps [m]
  double rod_min_gap_fraction_ = std::numeric_limits<double>::infinity();  // of the smaller radius
  long long ccd_limited_ = 0;  // line searches CCD shortened, over the steps
  long long rod_crossings_ = 0;  // pairs that passed through each other, over the steps (StepReport::rod_crossings)
};

/// The `contact` stats of a frame, from the last step's report and sums over its `steps`:
///   count            contacts (vertex-collider pairs) at the frame
///   max_penetration  deepest penetration of a rod's surface at the end of any of the steps [m]
///   max_penetration_fraction  the same relative to the rod's radius (the deepest ratio)
///   solves           linear solves spent settling the active set, summed over the steps
///   unconverged      steps whose active set hit its iteration cap
///   colliders        one object per collider, scene order: contacts, sticking, normal_force,
///                    friction_force [N] and force [N] (vector on the rods) at the frame;
///                    normal_force_mean, friction_force_mean [N]: the mean over the steps, i.e.
///                    the impulse delivered since the previous frame divided by the time.
nlohmann::json contact_stats_json(const ContactReport& last, const std::vector<double>& normal_sum,
                                  const std::vector<double>& friction_sum, int steps, long long solves,
                                  int unconverged, double max_penetration, double max_penetration_fraction);

/// The energies as a JSON object (the keys FrameStats::take writes under "energies").
nlohmann::json energies_to_json(const EnergyBreakdown& energies);

}  // namespace bristle

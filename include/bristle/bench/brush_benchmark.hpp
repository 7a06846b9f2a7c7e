#pragma once
/// The brush benchmark of the rod-contact issue: a brush of rows x columns nylon bristles
/// pressed onto paper and dragged across it, with scenes/brush_stroke.json's bristles and paper
/// but of any size (default 1000 bristles x 20 segments, dt = 1/60 s), with bristle-bristle
/// contact on; held vertical (the brush_stroke.json of before 2026-12-02, kept as
/// tests/contact/scenes/vertical_brush.json) or, with `tilt`, at a painter's angle as
/// brush_stroke.json is now.
///
/// The scene is built as scene text and loaded as a user's scene is, with no solver keys:
/// the solver is a scene's default, so the figures are what a user gets. Figures are printed,
/// never asserted: speed is measured here, not in unit tests.

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "bristle/integrator/iteration_log.hpp"
#include "bristle/integrator/stage_times.hpp"

namespace bristle {

struct BrushBenchmarkSettings {
  int rows = 25;        ///< bristles along the brush's depth (z)
  int columns = 40;     ///< bristles along the stroke (x)
  int segments = 20;    ///< edges per bristle
  double dt = 1.0 / 60.0;  ///< [s]
  /// Simulated time [s]: the brush touches the paper at about 0.1 s, is pressed 8 mm down by
  /// 0.4 s, dragged 4 cm by 0.9 s and lifted by 1.15 s (the handle keys of
  /// tests/contact/scenes/vertical_brush.json; with `tilt`, see there).
  double duration = 1.2;
  int threads = 1;
  bool rod_contact = true;  ///< bristle-bristle contact (the scene key rod_contact.enabled)
  /// Newton iterations after a step's first solve only the rods still moving
  /// (SolverSettings::active_rods, the default); false: every iteration solves all of them.
  bool active_rods = true;
  /// The tuft's axis from the vertical [rad], leaning back from the stroke (+x) so the bristles
  /// trail it, as a painter holds a brush. 0 (the default): the vertical press (above). Above 0,
  /// the painter's stroke of docs/contact.md ("A brush held at a painter's angle"): the handle
  /// lowers the tuft until its lowest tip is 0.3 mm above the paper at 0.2 s, then by
  /// 4 cos(tilt) mm more (the height of 4 mm along the axis) by 0.4 s, drags it 4 cm by 0.9 s
  /// and lifts it 14 mm by 1.15 s.
  double tilt = 0.0;
  /// Called with each Newton iteration of the run (ImplicitEuler::set_iteration_log); empty:
  /// none (`bristle bench --brush --iteration-log FILE`).
  IterationLog iteration_log;
};

/// One line of `--iteration-log`: the record's fields under the names the help text gives.
nlohmann::json iteration_record_json(const IterationRecord& record);

/// Largest --tilt [rad]: a tuft nearer the horizontal lies on the paper rather than pressing.
constexpr double kMaxBrushTilt = 1.2;

/// The benchmark's scene as scene text (docs/scene-format.md): a user can save it and run it.
std::string brush_benchmark_scene(const BrushBenchmarkSettings& settings);

struct BrushBenchmarkResult {
  int bristles = 0;
  int vertices = 0;
  int steps = 0;        ///< steps asked for
  int steps_taken = 0;  ///< steps that completed (all of them unless one failed)
  int threads = 1;
  double seconds = 0.0;  ///< wall time in the steps taken
  double us_per_vertex_step = 0.0;
  double us_per_vertex_step_assembly = 0.0;
  double us_per_vertex_step_solve = 0.0;
  long long cg_iterations = 0;  ///< over the run
  int cg_iterations_max = 0;    ///< of one step
  long long newton_iterations = 0;
  long long partial_iterations = 0;  ///< of those, over the bristles still moving only
  long long contact_solves = 0;  ///< the collider contact solver's linear solves (active-set passes)
  /// The bristles those solves solved, summed: solves x bristles for whole-system passes, fewer
  /// where the bristles do not couple and only those whose contacts changed are solved again.
  long long contact_rod_solves = 0;
  int unconverged_steps = 0;
  /// Over those steps, the bristles each left above the tolerance (StepReport::unconverged_rods)
  long long unconverged_rod_steps = 0;
  /// Where the time goes, by how each step ended (StepReport::converged): wall time [s] and
  /// Newton iterations of the converged steps and of the unconverged ones (a split step counts
  /// as converged only if every part did).
  double converged_seconds = 0.0;
  long long converged_newton_iterations = 0;
  double unconverged_seconds = 0.0;
  long long unconverged_newton_iterations = 0;
  /// Of all that, the attempts given up and split into halves (StepReport::failed_attempts).
  int failed_attempts = 0;
  long long failed_attempt_newton_iterations = 0;
  double failed_attempt_seconds = 0.0;
  /// Where the time goes, by stage of the solver: the steps' StepReport::stages, summed.
  SolverStageTimes stages;
  int rod_contact_pairs_max = 0;     ///< most pairs within the barrier's reach after one step
  /// Smallest gap between two bristles' surfaces after any step, relative to the radius;
  /// +inf when no two segments came near each other (or rod contact is off).
  double min_gap_fraction = 0.0;
  /// Pairs of segments that passed through each other during a step (StepReport::rod_crossings,
  /// rod contact on), over the run
  long long crossings = 0;
  int collider_contacts_max = 0;     ///< most vertices in contact with the paper after one step
  double max_edge_strain = 0.0;      ///< largest |l / l_rest - 1| of any edge after any step
  double max_depth_fraction = 0.0;   ///< deepest vertex surface into the paper, / the radius
  std::uint32_t positions_crc = 0;   ///< CRC-32 of the last state's positions (determinism)
  long peak_rss_bytes = 0;
  bool ok = true;
  std::string failure;

  nlohmann::json to_json() const;
};

BrushBenchmarkResult run_brush_benchmark(const BrushBenchmarkSettings& settings);

}  // namespace bristle

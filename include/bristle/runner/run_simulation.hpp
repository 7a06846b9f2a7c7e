#pragma once
/// The run loop: Scene -> State -> ImplicitEuler -> FrameWriter (what `bristle run` does).
///
///   frame 0 = the initial state (initial_state(model), at rest)
///   for each later frame k: scene.time.steps_per_frame() steps, then write frame k
///
/// Each frame carries `stats` for the steps since the previous frame (frame_stats.hpp). A
/// failing step stops the run: the frames already written stay, the manifest's status becomes
/// "failed: step N (t = T s): <what the step reported>", and the result says Failed. The
/// state's clock is set to (steps taken) * dt after every step, so frame times do not drift.
///
/// Static scenes (solver.mode = "static") are solved for their equilibrium instead
/// (analysis/static_solver.hpp, with RunOptions::static_settings), and write two frames:
///
///   frame 0 = the initial state (t = 0), stats as a dynamic run's frame 0 plus "mode";
///   frame 1 = the equilibrium (t = time.duration, velocities zero), stats from the solve
///             (static_stats below).
///
/// A run can be stopped from outside (Ctrl-C: cli/interrupt.hpp): RunOptions::stop is read
/// after every step (and before the first), and by the integrator at every Newton iteration
/// (ImplicitEuler::set_stop). Once it is non-zero the run ends there: a step under way is
/// abandoned (the state where the last step ended), the steps since the last frame are
/// dropped (no frame is written between frame times), the manifest lists the frames written and says "interrupted", and the result
/// says Interrupted. A static scene reads it once, before its solve (which runs to its end).
///
/// A solve that fails leaves frame 0 and the status "failed: static solve ...<why>". An
/// equilibrium that is unstable even after the saddle escapes (StaticResult::stable false) is
/// written, not failed: the stats say "stable": false and RunResult::static_result has it.

#include <csignal>
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "bristle/analysis/static_solver.hpp"
#include "bristle/integrator/implicit_euler.hpp"
#include "bristle/io/frame.hpp"
#include "bristle/model/model.hpp"
#include "bristle/scene/scene.hpp"

namespace bristle {

/// Where a run is, reported after every step and after every frame written.
struct RunProgress {
  int frame = 0;            ///< frames written so far - 1 (the last frame written)
  int frame_count = 0;      ///< frames the run will write
  long long step = 0;       ///< steps taken
  long long step_count = 0; ///< steps the run will take
  double time = 0.0;        ///< simulated time reached [s]
  double duration = 0.0;    ///< simulated time to reach [s]
  double elapsed_seconds = 0.0;  ///< wall time since the run started [s]
  int cg_iterations = 0;    ///< CG iterations of the last step
  bool frame_written = false;  ///< true when this report follows a frame write
};
using ProgressCallback = std::function<void(const RunProgress&)>;

/// What `bristle run` solves a static scene with: StaticSettings' defaults (relative force
/// tolerance 1e-9, loads fully applied) and 3 saddle escapes, so that a column above its
/// buckling load ends bent even when it starts perfectly straight.
StaticSettings static_run_settings();

struct RunOptions {
  /// Least wall time between manifest rewrites while running [s] (FrameWriterOptions).
  double manifest_interval_seconds = 1.0;
  /// The equilibrium solver's settings for solver.mode = "static" (static_run_settings()).
  StaticSettings static_settings = static_run_settings();
  /// How frames are stored: JSON (the diffable default) or .npz (`bristle run --frames
  /// binary`; docs/output-format.md, "Binary frames").
  FrameLayout frame_layout = FrameLayout::Json;
  /// With frame_layout Npz: stored members, or deflated (`--frames compressed`).
  NpzCompression npz_compression = NpzCompression::Stored;
  /// When it points to a non-zero value, the run stops at the next check (see above). The
  /// handler of SIGINT and SIGTERM sets it; nothing else in the run writes to it.
  const volatile std::sig_atomic_t* stop = nullptr;
};

enum class RunOutcome {
  Complete,  ///< every frame written, status "complete"
  Failed,    ///< a step (or the static solve) failed; frames before it kept, status "failed: ..."
  Interrupted,  ///< RunOptions::stop was set; the frames so far kept, status "interrupted"
  NotRun,    ///< refused before anything was written (see `message`)
};

/// What a dynamic run's steps said about their own accuracy, over the whole run: what the
/// frames' stats hold frame by frame, gathered for the command's closing warnings.
struct RunQuality {
  long long unconverged_steps = 0;      ///< steps ended above the solver's tolerance (StepReport::converged)
  long long unconverged_rod_steps = 0;  ///< over them, the rods left above it (StepReport::unconverged_rods)
  double first_unconverged_time = -1.0;  ///< end time of the first such step [s]; -1: none
  /// The deepest any vertex was in a collider at the end of a step, in its radius (<= 0: none
  /// inside), and the end time of that step [s].
  double deepest_in_collider = 0.0;
  double deepest_time = 0.0;
  /// Rod contact: the most two segments' surfaces overlapped at the end of a step, in the
  /// smaller radius (0: none), and when [s].
  double deepest_overlap = 0.0;
  double overlap_time = 0.0;
  /// Rod contact: pairs of segments that passed through each other during a step
  /// (StepReport::rod_crossings), over the run, and the end time of the first such step [s].
  long long crossings = 0;
  double first_crossing_time = -1.0;
};

struct RunResult {
  RunOutcome outcome = RunOutcome::NotRun;
  std::string status;    ///< the manifest's final status ("" when NotRun)
  std::string message;   ///< NotRun: why; Failed: the reason (status without "failed: ");
                         ///< Interrupted: "at t = T s (step N of M)"
  int frames_written = 0;
  long long steps_taken = 0;
  double wall_seconds = 0.0;
  double frame_write_seconds = 0.0;  ///< the part of wall_seconds spent writing frames and manifests [s]
  StepReport failed_step;  ///< the failing step's report (Failed, dynamic)
  StaticResult static_result;  ///< the equilibrium solve (static scenes only)
  RunQuality quality;          ///< over the steps taken (dynamic)

  bool ok() const { return outcome == RunOutcome::Complete; }
};

/// Simulates `scene` and writes the output folder `out_dir` (created if missing; existing
/// frames are overwritten, not removed: clear it first, io/frame_writer.hpp). Never exits;
/// throws OutputError when a file cannot be written.
RunResult run_simulation(const Scene& scene, const std::string& out_dir, const RunOptions& options = {},
                         const ProgressCallback& progress = {});

/// The manifest for `scene`, before any frame (status "running", no frames).
Manifest make_manifest(const Scene& scene);

/// The stats of a static scene's equilibrium frame: mode "static", newton_iterations,
/// residual and tolerance [N] (|grad U|_inf over the free DOFs, and the bound it met),
/// force_scale [N], relative_residual (residual / force_scale), stable, unstable_modes (-1:
/// not computed), saddle_escapes, load_steps, cg_iterations, regularised_solves, and with
/// colliders contacts, min_gap [m] and contact_forces [N] per collider. The energies are added
/// by the runner.
nlohmann::json static_stats(const StaticResult& result);

/// A frame of `state`: positions and velocities per rod, in model order, and for each rod with
/// twist the first material director m1 of every edge (rod_material_directors); no stats.
/// `committed`: the twist term's table of the integrator that reached `state` (its reference
/// frames as the last step committed them); nullptr: the rods' rest frames, which is what a
/// static solve or a mode shape measures twist angles from.
Frame make_frame(const Model& model, const State& state, int index,
                 const ElementTable<BendTwistTerm>* committed = nullptr);

/// The first material director m1 of each edge of rod `rod` (a rod with twist, 3D) at `state`
/// (docs/physics.md, "Discrete elastic rods"; docs/output-format.md, "directors"): the edge's
/// reference director as `committed` holds it (or the rest frame, see make_frame), carried by
/// parallel transport from its committed tangent to the edge's tangent at `state` (the
/// identity right after a step, which commits the frames at its end), then turned by the
/// edge's twist angle theta about the tangent: m1 = cos(theta) d + sin(theta) (t x d).
std::vector<Vec3> rod_material_directors(const Model& model, const State& state, int rod,
                                         const ElementTable<BendTwistTerm>* committed = nullptr);

}  // namespace bristle

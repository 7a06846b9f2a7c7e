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
/// Static scenes (solver.mode = "static") go through RunOptions::static_solver. TODO: the
/// static solver (analysis/) is not wired in yet; without it a static scene is refused before
/// anything is written (RunOutcome::NotRun).

#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "bristle/integrator/implicit_euler.hpp"
#include "bristle/io/frame.hpp"
#include "bristle/model/model.hpp"
#include "bristle/scene/scene.hpp"

namespace bristle {

/// What a static solve returns: the equilibrium (or the last iterate, when it failed).
struct StaticSolveResult {
  bool ok = false;
  std::string failure;    ///< why it failed, naming rod and vertex when it can
  State state;            ///< the equilibrium, velocities zero
  nlohmann::json stats = nlohmann::json::object();  ///< merged into the last frame's stats
};

/// Solves for the equilibrium of `scene` starting from `initial`.
using StaticSolver = std::function<StaticSolveResult(const Scene& scene, const State& initial)>;

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

struct RunOptions {
  /// Least wall time between manifest rewrites while running [s] (FrameWriterOptions).
  double manifest_interval_seconds = 1.0;
  /// The equilibrium solver for solver.mode = "static"; empty: static scenes are refused.
  StaticSolver static_solver;
};

enum class RunOutcome {
  Complete,  ///< every frame written, status "complete"
  Failed,    ///< a step (or the static solve) failed; frames before it kept, status "failed: ..."
  NotRun,    ///< refused before anything was written (see `message`)
};

struct RunResult {
  RunOutcome outcome = RunOutcome::NotRun;
  std::string status;    ///< the manifest's final status ("" when NotRun)
  std::string message;   ///< NotRun: why; Failed: the reason (status without "failed: ")
  int frames_written = 0;
  long long steps_taken = 0;
  double wall_seconds = 0.0;
  StepReport failed_step;  ///< the failing step's report (Failed, dynamic)

  bool ok() const { return outcome == RunOutcome::Complete; }
};

/// Simulates `scene` and writes the output folder `out_dir` (created if missing; existing
/// frames are overwritten, not removed: clear it first, io/frame_writer.hpp). Never exits;
/// throws OutputError when a file cannot be written.
RunResult run_simulation(const Scene& scene, const std::string& out_dir, const RunOptions& options = {},
                         const ProgressCallback& progress = {});

/// The manifest for `scene`, before any frame (status "running", no frames).
Manifest make_manifest(const Scene& scene);

/// A frame of `state`: positions and velocities per rod, in model order; no stats.
Frame make_frame(const Model& model, const State& state, int index);

}  // namespace bristle

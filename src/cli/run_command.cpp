/// bristle run SCENE -o OUT [--force] [--quiet]
#include <cstdio>
#include <filesystem>
#include <ostream>
#include <string>

#include "bristle/cli/args.hpp"
#include "bristle/cli/command.hpp"
#include "bristle/cli/frames_option.hpp"
#include "bristle/cli/interrupt.hpp"
#include "bristle/cli/progress.hpp"
#include "bristle/analysis/static_solver.hpp"
#include "bristle/io/frame_writer.hpp"
#include "bristle/runner/run_simulation.hpp"
#include "bristle/runner/thread_count.hpp"
#include "bristle/scene/limits.hpp"
#include "bristle/scene/load_scene.hpp"

namespace bristle::cli {

namespace {

// What a finished dynamic run says about its own accuracy (RunQuality), printed after it even
// with --quiet: a run that ended "complete" with steps above the tolerance, or with vertices
// deep in a collider, would otherwise say so only inside its frames' stats.
// (docs/cli.md, "bristle run".)
constexpr double kWarnColliderDepth = 0.1;  // of a vertex's radius: far beyond the solvers' tolerances
constexpr double kWarnRodOverlap = 0.01;    // of the smaller radius: the check-contact criterion

std::string format_number(double value) {
  char text[64];
  std::snprintf(text, sizeof(text), "%.3g", value);
  return text;
}

void print_run_warnings(const RunQuality& q, long long steps, std::ostream& err) {
  if (q.unconverged_steps > 0) {
    err << "warning: " << q.unconverged_steps << " of " << steps
        << " steps ended above the solver's tolerance, the first at t = " << format_number(q.first_unconverged_time)
        << " s";
    if (q.unconverged_rod_steps > 0) err << " (" << q.unconverged_rod_steps << " rod-steps)";
    err << "; each ended at its best iterate (with rod contact, its last), and the frames' unconverged_steps "
        << "say where (docs/output-format.md)\n";
  }
  if (q.deepest_in_collider > kWarnColliderDepth)
    err << "warning: a vertex was " << format_number(q.deepest_in_collider)
        << " of its radius deep in a collider at t = " << format_number(q.deepest_time)
        << " s, the deepest after any step (the frames' contact.max_penetration_fraction)\n";
  if (q.deepest_overlap > kWarnRodOverlap)
    err << "warning: two segments overlapped by " << format_number(q.deepest_overlap)
        << " of the smaller radius at t = " << format_number(q.overlap_time)
        << " s, the most after any step (the frames' rod_contact.min_gap_fraction; bristle check-contact "
        << "names the pairs)\n";
  if (q.crossings > 0)
    err << "warning: " << q.crossings << (q.crossings == 1 ? " pair of segments" : " pairs of segments")
        << " passed through each other during steps, the first by t = " << format_number(q.first_crossing_time)
        << " s (the frames' rod_contact.crossings say which frames; with one unsplit step a frame, bristle "
        << "check-contact names the pairs)\n";
}

const char* const kUsage =
    "usage: bristle run SCENE -o OUT [--force] [--quiet] [--threads N] [--frames json|binary|compressed]\n"
    "\n"
    "Simulates SCENE and writes the output folder OUT: OUT/manifest.json and one\n"
    "OUT/frames/NNNNNN.json per frame, or OUT/frames/NNNNNN.npz with --frames binary or\n"
    "compressed\n"
    "(docs/output-format.md). The scene is checked first:\n"
    "an invalid scene is reported with its JSON pointer and nothing is written.\n"
    "Progress goes to stderr: a bar when stderr is a terminal, a line every 10% otherwise.\n"
    "\n"
    "A static scene (\"solver\": {\"mode\": \"static\"}) is solved for its equilibrium under\n"
    "gravity, loads (in full) and frictionless contact, by Newton's method with a line search\n"
    "on the potential energy (docs/analysis.md). It writes two frames: 0 the initial state,\n"
    "1 the equilibrium (its stats: Newton iterations, force residual and tolerance, stable).\n"
    "An unstable equilibrium (a saddle, e.g. a straight column above its buckling load) is\n"
    "pushed along its unstable mode and solved again; if it stays unstable a warning says so.\n"
    "\n"
    "A completed run ends with warnings on stderr (even with --quiet) where its own stats show\n"
    "it less accurate than asked: steps that ended above solver.tolerance (how many, the first,\n"
    "and the rods left above it), a vertex more than 0.1 of its radius deep in a collider, or\n"
    "two segments overlapping by more than 1% of the smaller radius, or segments that passed\n"
    "through each other during a step (rod contact). The frames' stats say where\n"
    "(docs/output-format.md).\n"
    "\n"
    "options:\n"
    "  -o, --output OUT  the output folder; created if missing; must be empty unless --force\n"
    "  --force           reuse a non-empty OUT: its manifest.json and frames/ are removed first\n"
    "                    (other files in OUT are left alone)\n"
    "  --quiet           no progress and no summary line (errors are still printed)\n"
    "  --threads N       threads for the step, 1 to 1024 (default: the scene's solver.threads,\n"
    "                    else 1); at most the machine's hardware threads, and fewer for a\n"
    "                    scene too small to share (a note on stderr says so, docs/limits.md);\n"
    "                    the frames are bitwise identical for every N\n"
    "  --frames F        how frames are stored: json (default: text a person can diff),\n"
    "                    binary (frames/NNNNNN.npz, numpy arrays of exact float64: 48 bytes per\n"
    "                    3D vertex against 110 to 150 in JSON, and many times faster to write;\n"
    "                    for big scenes: np.load reads a frame) or compressed (the same .npz,\n"
    "                    deflated by zlib: smaller on disk, still exact, several times binary's\n"
    "                    write time, less than JSON's); every command reads all three\n"
    "  -h, --help        show this help\n"
    "\n"
    "Ctrl-C (SIGINT) or SIGTERM stops the run at the step under way's next Newton iteration\n"
    "(that step is dropped): the frames written so far are kept, the manifest says\n"
    "\"interrupted\", one line on stderr says where it stopped.\n"
    "A second Ctrl-C ends it at once (the frames on disk are still whole).\n"
    "\n"
    "exit codes: 0 complete, 1 the simulation or the static solve failed (frames before the\n"
    "failure are kept and the manifest says why), 2 bad usage, invalid scene or unusable OUT,\n"
    "130 interrupted by Ctrl-C (143 by SIGTERM)\n";

namespace fs = std::filesystem;

int run(const std::vector<std::string>& args, CommandContext& context) {
  const ParsedArgs parsed =
      parse_args(args, {{"--output", "-o", true}, {"--force", "", false}, {"--quiet", "", false}, {"--threads", "", true},
                        {"--frames", "", true}});
  expect_positionals(parsed, {"SCENE"});
  const auto out = parsed.value("--output");
  if (!out) throw UsageError("missing -o OUT (the output folder)");
  if (out->empty()) throw UsageError("-o needs a folder name");
  const bool force = parsed.has("--force"), quiet = parsed.has("--quiet");
  RunOptions options;
  const FramesChoice frames = frames_option(parsed);
  options.frame_layout = frames.layout;
  options.npz_compression = frames.compression;

  // Validate everything before touching OUT.
  Scene scene = load_scene(parsed.positionals[0]);
  for (const std::string& warning : scene.warnings) context.err << "warning: " << warning << "\n";
  if (parsed.has("--threads")) {
    // The same limit as the scene's solver.threads (docs/limits.md).
    const int threads = parsed.integer("--threads", 1);
    if (threads < 1 || threads > kMaxThreads)
      throw UsageError("--threads expects an integer in [1, " + std::to_string(kMaxThreads) + "]");
    scene.solver.threads = threads;
  }
  const ThreadChoice threads =
      choose_threads(scene.solver.threads, hardware_threads(), scene.model.layout.free_dof_count());
  if (!threads.note.empty() && !quiet) context.err << "note: " << threads.note << "\n";
  scene.solver.threads = threads.threads;

  std::error_code error;
  if (fs::exists(*out, error) && !fs::is_directory(*out, error)) {
    context.err << "error: " << *out << ": exists and is not a folder\n";
    return kExitUsage;
  }
  if (!output_folder_is_empty(*out) && !force) {
    context.err << "error: " << *out << ": the output folder is not empty; pass --force to replace "
                << "its frames (manifest.json and frames/ are removed, other files kept)\n";
    return kExitUsage;
  }
  if (force) clear_output_folder(*out);

  const bool is_static = scene.mode == SolverMode::Static;
  ProgressPrinter printer(context.err, context.err_is_terminal);
  ProgressCallback progress;
  // A static solve has no steps to count: its summary line says what it did.
  if (!quiet && !is_static) progress = [&printer](const RunProgress& p) { printer.update(p); };
  // Ctrl-C from here on stops the run between two steps, with a manifest that says so
  // (cli/interrupt.hpp); before, it ends the process while nothing is written yet.
  options.stop = install_interrupt_handlers();
  const RunResult result = run_simulation(scene, *out, options, progress);
  printer.finish();

  switch (result.outcome) {
    case RunOutcome::Complete: {
      if (is_static) {
        const StaticResult& s = result.static_result;
        if (!s.stable) {
          context.err << "warning: the equilibrium found is not stable (the exact Hessian there is not "
                      << "positive definite";
          if (s.unstable_modes > 0) context.err << ": " << s.unstable_modes << " unstable mode(s)";
          context.err << "); a small disturbance would move the rods away from it\n";
        }
        if (!quiet) {
          char line[320];
          std::snprintf(line, sizeof(line),
                        "static equilibrium: %d Newton iterations, |grad U| = %.3g N (tolerance %.3g N), %s; "
                        "%.3g s wall time",
                        s.iterations, s.residual, s.tolerance, s.stable ? "stable" : "NOT stable", result.wall_seconds);
          context.out << "complete: " << *out << " (" << line << ")\n";
        }
        return kExitSuccess;
      }
      print_run_warnings(result.quality, result.steps_taken, context.err);
      if (!quiet) {
        char line[256];
        std::snprintf(line, sizeof(line), "%d frames, %lld steps, %.4g s simulated in %.3g s wall time, %.3g s of it writing %s frames",
                      result.frames_written, result.steps_taken, scene.time.duration, result.wall_seconds,
                      result.frame_write_seconds, frames.layout == FrameLayout::Npz ? frames_option_value(frames) : "JSON");
        context.out << "complete: " << *out << " (" << line << ")\n";
      }
      return kExitSuccess;
    }
    case RunOutcome::Failed:
      context.err << "error: " << (is_static ? "" : "simulation failed: ") << result.message << "\n"
                  << "  frames 0.." << result.frames_written - 1 << " are kept in " << *out
                  << "; its manifest says \"" << result.status << "\"\n";
      return kExitFailure;
    case RunOutcome::Interrupted: {
      // One line, printed even with --quiet: the user asked for the stop and wants to know
      // what is on disk.
      const int signal = static_cast<int>(*options.stop);
      context.err << "interrupted (" << signal_name(signal) << ") " << result.message << ": "
                  << result.frames_written << (result.frames_written == 1 ? " frame" : " frames") << " written to "
                  << *out << ", its manifest says \"interrupted\"\n";
      return interrupted_exit_code(signal);
    }
    case RunOutcome::NotRun:
      break;
  }
  context.err << "error: " << result.message << "\n";
  return kExitUsage;
}

}  // namespace

Command make_run_command() {
  return {"run", "simulate a scene and write its output folder", kUsage, run};
}

}  // namespace bristle::cli

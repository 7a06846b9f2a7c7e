/// bristle run SCENE -o OUT [--force] [--quiet]
#include <cstdio>
#include <filesystem>
#include <ostream>

#include "bristle/cli/args.hpp"
#include "bristle/cli/command.hpp"
#include "bristle/cli/progress.hpp"
#include "bristle/io/frame_writer.hpp"
#include "bristle/runner/run_simulation.hpp"
#include "bristle/scene/load_scene.hpp"

namespace bristle::cli {

namespace {

const char* const kUsage =
    "usage: bristle run SCENE -o OUT [--force] [--quiet]\n"
    "\n"
    "Simulates SCENE and writes the output folder OUT: OUT/manifest.json and one\n"
    "OUT/frames/NNNNNN.json per frame (docs/output-format.md). The scene is checked first:\n"
    "an invalid scene is reported with its JSON pointer and nothing is written.\n"
    "Progress goes to stderr: a bar when stderr is a terminal, a line every 10% otherwise.\n"
    "\n"
    "options:\n"
    "  -o, --output OUT  the output folder; created if missing; must be empty unless --force\n"
    "  --force           reuse a non-empty OUT: its manifest.json and frames/ are removed first\n"
    "                    (other files in OUT are left alone)\n"
    "  --quiet           no progress and no summary line (errors are still printed)\n"
    "  -h, --help        show this help\n"
    "\n"
    "exit codes: 0 complete, 1 the simulation failed (frames before the failure are kept and\n"
    "the manifest says why), 2 bad usage, invalid scene or unusable OUT\n";

namespace fs = std::filesystem;

int run(const std::vector<std::string>& args, CommandContext& context) {
  const ParsedArgs parsed =
      parse_args(args, {{"--output", "-o", true}, {"--force", "", false}, {"--quiet", "", false}});
  expect_positionals(parsed, {"SCENE"});
  const auto out = parsed.value("--output");
  if (!out) throw UsageError("missing -o OUT (the output folder)");
  if (out->empty()) throw UsageError("-o needs a folder name");
  const bool force = parsed.has("--force"), quiet = parsed.has("--quiet");

  // Validate everything before touching OUT.
  const Scene scene = load_scene(parsed.positionals[0]);

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
  RunOptions options;
  // TODO(static): options.static_solver = <analysis/static_solver.hpp's solver> once it exists.
  if (scene.mode == SolverMode::Static && !options.static_solver) {
    context.err << "error: " << scene.source_path << ": /solver/mode: static mode is not available yet in "
                << "this build (use \"dynamic\")\n";
    return kExitUsage;
  }
  if (force) clear_output_folder(*out);

  ProgressPrinter printer(context.err, context.err_is_terminal);
  ProgressCallback progress;
  if (!quiet) progress = [&printer](const RunProgress& p) { printer.update(p); };
  const RunResult result = run_simulation(scene, *out, options, progress);
  printer.finish();

  switch (result.outcome) {
    case RunOutcome::Complete: {
      if (!quiet) {
        char line[256];
        std::snprintf(line, sizeof(line), "%d frames, %lld steps, %.4g s simulated in %.3g s wall time",
                      result.frames_written, result.steps_taken, scene.time.duration, result.wall_seconds);
        context.out << "complete: " << *out << " (" << line << ")\n";
      }
      return kExitSuccess;
    }
    case RunOutcome::Failed:
      context.err << "error: simulation failed: " << result.message << "\n"
                  << "  frames 0.." << result.frames_written - 1 << " are kept in " << *out
                  << "; its manifest says \"" << result.status << "\"\n";
      return kExitFailure;
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

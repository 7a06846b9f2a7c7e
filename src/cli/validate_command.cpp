/// bristle validate SCENE [--json]
#include <ostream>

#include "bristle/cli/args.hpp"
#include "bristle/cli/command.hpp"
#include "bristle/cli/scene_summary.hpp"
#include "bristle/scene/load_scene.hpp"

namespace bristle::cli {

namespace {

const char* const kUsage =
    "usage: bristle validate SCENE [--json]\n"
    "\n"
    "Loads and checks SCENE (every key, every value, as `bristle run` would) and prints a\n"
    "summary: rods, vertices, total mass, time steps, frames, the smallest edge, the stiffest\n"
    "elements and how the time step compares with the fastest element vibration.\n"
    "Nothing is simulated or written.\n"
    "\n"
    "options:\n"
    "  --json      print the summary as one JSON object\n"
    "  -h, --help  show this help\n"
    "\n"
    "exit codes: 0 valid, 2 invalid scene (the message names the JSON pointer) or bad usage\n";

int validate(const std::vector<std::string>& args, CommandContext& context) {
  const ParsedArgs parsed = parse_args(args, {{"--json", "", false}});
  expect_positionals(parsed, {"SCENE"});
  const Scene scene = load_scene(parsed.positionals[0]);
  for (const std::string& warning : scene.warnings) context.err << "warning: " << warning << "\n";
  const SceneSummary summary = summarize_scene(scene);
  if (parsed.has("--json"))
    context.out << to_json(summary).dump(2) << "\n";
  else
    context.out << describe(summary);
  return kExitSuccess;
}

}  // namespace

Command make_validate_command() {
  return {"validate", "check a scene file and print a summary", kUsage, validate};
}

}  // namespace bristle::cli

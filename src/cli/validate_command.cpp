/// bristle validate SCENE [--json]
#include <ostream>

#include "bristle/cli/args.hpp"
#include "bristle/cli/command.hpp"
#include "bristle/cli/overlap_report.hpp"
#include "bristle/cli/scene_summary.hpp"
#include "bristle/scene/load_scene.hpp"

namespace bristle::cli {

namespace {

const char* const kUsage =
    "usage: bristle validate SCENE [--json]\n"
    "\n"
    "Loads and checks SCENE (every key, every value, as `bristle run` would) and prints a\n"
    "summary: rods, vertices, total mass, rod contact on or off, time steps, frames, the\n"
    "smallest edge, the stiffest elements and how the time step compares with the fastest\n"
    "element vibration.\n"
    "Rods that start inside each other (segments of different rods, or of a folded rod, whose\n"
    "centre lines pass closer than the sum of their radii) are reported on stderr as a warning:\n"
    "how many segment pairs and rod pairs, and the first few with their depth; the scene stays\n"
    "valid (without \"rod_contact\" rods pass through each other; with it, pairs that start\n"
    "inside each other stay unconstrained until they separate). Nothing is simulated or written.\n"
    "\n"
    "options:\n"
    "  --json      print the summary as one JSON object (overlapping rods under \"overlaps\")\n"
    "  -h, --help  show this help\n"
    "\n"
    "exit codes: 0 valid, 2 invalid scene (the message names the JSON pointer) or bad usage\n";

int validate(const std::vector<std::string>& args, CommandContext& context) {
  const ParsedArgs parsed = parse_args(args, {{"--json", "", false}});
  expect_positionals(parsed, {"SCENE"});
  const Scene scene = load_scene(parsed.positionals[0]);
  for (const std::string& warning : scene.warnings) context.err << "warning: " << warning << "\n";
  const OverlapReport overlaps = find_initial_overlaps(scene.model);
  for (const std::string& line : describe_overlaps(scene, overlaps)) context.err << "warning: " << line << "\n";
  const SceneSummary summary = summarize_scene(scene);
  if (parsed.has("--json")) {
    nlohmann::json json = to_json(summary);
    json["overlaps"] = overlaps_json(scene, overlaps);
    context.out << json.dump(2) << "\n";
  } else
    context.out << describe(summary);
  return kExitSuccess;
}

}  // namespace

Command make_validate_command() {
  return {"validate", "check a scene file and print a summary", kUsage, validate};
}

}  // namespace bristle::cli

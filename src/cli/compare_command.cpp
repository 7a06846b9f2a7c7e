/// bristle compare A B [--atol X] [--rtol Y] [--director-tol RAD] [--velocities] [--json]
#include <ostream>

#include <nlohmann/json.hpp>

#include "bristle/cli/args.hpp"
#include "bristle/cli/command.hpp"
#include "bristle/io/compare.hpp"

namespace bristle::cli {

namespace {

const char* const kUsage =
    "usage: bristle compare A B [--atol X] [--rtol Y] [--director-tol RAD] [--velocities] [--json]\n"
    "\n"
    "Compares two output folders frame by frame, rod by rod, vertex by vertex. Values a, b\n"
    "agree when |a - b| <= atol + rtol * max(|a|, |b|). Positions and frame times are compared;\n"
    "velocities with --velocities. Rods with twist also compare each edge's material director:\n"
    "two agree when the angle between them is at most the angle tolerance. Different\n"
    "dimensions, rods (names, order, vertex counts, twist) or frame counts make the folders\n"
    "different. Prints the first value beyond tolerance (frame, rod, vertex or edge,\n"
    "component), the largest difference and the largest director difference.\n"
    "\n"
    "options:\n"
    "  --atol X            absolute tolerance (default 1e-9: m for positions, m/s, s)\n"
    "  --rtol Y            relative tolerance (default 1e-7)\n"
    "  --director-tol RAD  largest angle between agreeing directors, rad (default 1e-6)\n"
    "  --velocities        also compare velocities\n"
    "  --json              print the result as one JSON object\n"
    "  -h, --help          show this help\n"
    "\n"
    "exit codes: 0 same within tolerance, 1 different, 2 a folder is unreadable or bad usage\n";

nlohmann::json difference_json(const std::optional<ValueDifference>& d) {
  if (!d) return nullptr;
  nlohmann::json json = {{"frame", d->frame}, {"quantity", d->quantity}, {"a", d->a}, {"b", d->b},
                         {"difference", d->difference}};
  if (d->quantity == "director") {
    json = {{"frame", d->frame}, {"quantity", d->quantity}, {"a", d->director_a}, {"b", d->director_b},
            {"difference", d->difference}, {"rod", d->rod_name}, {"rod_index", d->rod}, {"edge", d->vertex}};
  } else if (d->quantity != "time") {
    json["rod"] = d->rod_name;
    json["rod_index"] = d->rod;
    json["vertex"] = d->vertex;
    json["component"] = d->component;
  }
  return json;
}

int compare(const std::vector<std::string>& args, CommandContext& context) {
  const ParsedArgs parsed = parse_args(
      args, {{"--atol", "", true},
             {"--rtol", "", true},
             {"--director-tol", "", true},
             {"--velocities", "", false},
             {"--json", "", false}});
  expect_positionals(parsed, {"A", "B"});
  CompareOptions options;
  options.atol = parsed.number("--atol", options.atol);
  options.rtol = parsed.number("--rtol", options.rtol);
  options.velocities = parsed.has("--velocities");
  if (options.atol < 0) throw UsageError("--atol must be >= 0");
  if (options.rtol < 0) throw UsageError("--rtol must be >= 0");
  options.angle_tol = parsed.number("--director-tol", options.angle_tol);
  if (!(options.angle_tol >= 0)) throw UsageError("--director-tol must be >= 0");

  const CompareResult result = compare_outputs(parsed.positionals[0], parsed.positionals[1], options);
  if (parsed.has("--json")) {
    nlohmann::json json = {{"same", result.same},
                           {"atol", options.atol},
                           {"rtol", options.rtol},
                           {"velocities", options.velocities},
                           {"structure", result.structure},
                           {"frames_compared", result.frames_compared},
                           {"values_compared", result.values_compared},
                           {"values_beyond_tolerance", result.values_beyond_tolerance},
                           {"first", difference_json(result.first)},
                           {"largest", difference_json(result.largest)}};
    // Folders with twist only, so that the output of folders without stays as it was.
    if (result.directors_compared > 0) {
      json["director_tol"] = options.angle_tol;
      json["directors_compared"] = result.directors_compared;
      json["largest_director"] = difference_json(result.largest_director);
    }
    context.out << json.dump(2) << "\n";
  } else {
    context.out << describe(result, options);
  }
  return result.same ? kExitSuccess : kExitFailure;
}

}  // namespace

Command make_compare_command() {
  return {"compare", "compare two output folders within tolerances", kUsage, compare};
}

}  // namespace bristle::cli

/// bristle schema
#include <ostream>

#include "bristle/cli/args.hpp"
#include "bristle/cli/command.hpp"
// Generated from scenes/bristle-scene.schema.json (src/cli/sources.cmake).
#include "scene_schema_bytes.hpp"

namespace bristle::cli {

namespace {

const char* const kUsage =
    "usage: bristle schema\n"
    "\n"
    "Prints the JSON Schema (draft-07) of the scene format bristle-scene/1: the file\n"
    "scenes/bristle-scene.schema.json, byte for byte, as built into this program.\n"
    "Editors use it to complete and check scenes as you type:\n"
    "  bristle schema > bristle-scene.schema.json\n"
    "then add \"$schema\": \"bristle-scene.schema.json\" to a scene, or map the schema to\n"
    "your scene files in the editor's settings (docs/scene-format.md, \"JSON Schema for\n"
    "editors\"). The schema checks structure, types, ranges and vector lengths;\n"
    "`bristle validate` makes every check.\n"
    "\n"
    "options:\n"
    "  -h, --help  show this help\n"
    "\n"
    "exit codes: 0 printed, 2 bad usage\n";

int print_schema(const std::vector<std::string>& args, CommandContext& context) {
  expect_positionals(parse_args(args, {}), {});
  context.out.write(reinterpret_cast<const char*>(kSceneSchemaBytes), sizeof(kSceneSchemaBytes));
  context.out.flush();
  return kExitSuccess;
}

}  // namespace

Command make_schema_command() {
  return {"schema", "print the JSON Schema of scene files (for editors)", kUsage, print_schema};
}

}  // namespace bristle::cli

// `bristle schema` (src/cli/schema_command.cpp): prints the shipped scene schema byte for byte.

#include <doctest/doctest.h>

#include <fstream>
#include <sstream>

#include "bristle/cli/command.hpp"
#include "support/run_cli.hpp"
#include "test_paths.hpp"

using namespace bristle;

namespace {

using Outcome = test::CliOutcome;
Outcome run(const std::vector<std::string>& args) { return test::run_cli_captured(args); }

}  // namespace

TEST_CASE("cli schema: prints scenes/bristle-scene.schema.json exactly") {
  std::ifstream in(std::string(test::kScenesDir) + "/bristle-scene.schema.json", std::ios::binary);
  REQUIRE(in);
  std::ostringstream shipped;
  shipped << in.rdbuf();
  REQUIRE(shipped.str().size() > 1000);

  const Outcome outcome = run({"schema"});
  CHECK(outcome.code == 0);
  CHECK(outcome.err.empty());
  CHECK(outcome.out == shipped.str());
}

TEST_CASE("cli schema: listed in help, refuses arguments") {
  CHECK(run({"help"}).out.find("schema") != std::string::npos);
  CHECK(run({"schema", "--help"}).out.rfind("usage: bristle schema", 0) == 0);
  const Outcome extra = run({"schema", "scene.json"});
  CHECK(extra.code == 2);
  CHECK(extra.out.empty());
  const Outcome flag = run({"schema", "--draft", "7"});
  CHECK(flag.code == 2);
}

#include <doctest/doctest.h>

#include "bristle/cli/args.hpp"

using namespace bristle::cli;

namespace {
const std::vector<OptionSpec> kOptions = {{"--output", "-o", true}, {"--force", "", false}, {"--atol", "", true}};
}

TEST_CASE("cli args: options, values and positionals") {
  const ParsedArgs parsed = parse_args({"scene.json", "-o", "out", "--force", "--atol=1e-6"}, kOptions);
  CHECK(parsed.positionals == std::vector<std::string>{"scene.json"});
  CHECK(parsed.value("--output") == std::optional<std::string>("out"));
  CHECK(parsed.has("--force"));
  CHECK_FALSE(parsed.has("--atol") == false);
  CHECK(parsed.number("--atol", 0.0) == 1e-6);
  CHECK(parsed.number("--missing", 2.5) == 2.5);
  expect_positionals(parsed, {"SCENE"});
}

TEST_CASE("cli args: '--' ends the options") {
  const ParsedArgs parsed = parse_args({"--", "--force"}, kOptions);
  CHECK(parsed.positionals == std::vector<std::string>{"--force"});
  CHECK_FALSE(parsed.has("--force"));
}

TEST_CASE("cli args: usage errors") {
  auto message = [](const std::vector<std::string>& args) -> std::string {
    try {
      const ParsedArgs parsed = parse_args(args, kOptions);
      parsed.number("--atol", 0.0);
      expect_positionals(parsed, {"SCENE"});
    } catch (const UsageError& error) {
      return error.what();
    }
    return "";
  };
  CHECK(message({"s", "--bogus"}) == "unknown option '--bogus'");
  CHECK(message({"s", "-x"}) == "unknown option '-x'");
  CHECK(message({"s", "-o"}) == "option -o needs a value");
  CHECK(message({"s", "--force=yes"}) == "option --force takes no value");
  CHECK(message({"s", "-o", "a", "--output", "b"}) == "option --output given more than once");
  CHECK(message({"s", "--atol", "abc"}) == "--atol expects a number, got 'abc'");
  CHECK(message({"s", "--atol", "nan"}) == "--atol expects a number, got 'nan'");
  CHECK(message({}) == "missing SCENE");
  CHECK(message({"s", "t"}) == "unexpected argument 't'");
  CHECK(message({"s"}).empty());
}

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "bristle/cli/command.hpp"
#include "bristle/io/frame_json.hpp"
#include "bristle/io/output_reader.hpp"
#include "io/temp_folder.hpp"
#include "test_paths.hpp"

namespace fs = std::filesystem;
using namespace bristle;

namespace {

struct Outcome {
  int code = -1;
  std::string out, err;
};

Outcome run(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  cli::CommandContext context{out, err, false};
  Outcome outcome;
  outcome.code = cli::run_cli(args, context);
  outcome.out = out.str();
  outcome.err = err.str();
  return outcome;
}

std::string scene(const std::string& name) { return std::string(test::kScenesDir) + "/" + name + ".json"; }

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("cli help and version") {
  Outcome o = run({"--version"});
  CHECK(o.code == 0);
  CHECK(o.out == std::string("bristle ") + BRISTLE_VERSION + "\n");
  o = run({"help"});
  CHECK(o.code == 0);
  for (const cli::Command& command : cli::command_table()) CHECK(contains(o.out, "  " + command.name));
  for (const char* name : {"run", "validate", "compare", "help"}) {
    CAPTURE(name);
    const Outcome help = run({"help", name});
    CHECK(help.code == 0);
    CHECK(help.out.rfind(std::string("usage: bristle ") + name, 0) == 0);
    const Outcome flag = run({name, "--help"});
    CHECK(flag.code == 0);
    CHECK(flag.out == help.out);
  }
  CHECK(run({"--help"}).code == 0);
}

TEST_CASE("cli usage errors exit 2 with a message on stderr") {
  const std::vector<std::vector<std::string>> cases = {
      {},
      {"frobnicate"},
      {"help", "frobnicate"},
      {"run"},
      {"run", "scene.json"},
      {"run", "scene.json", "-o"},
      {"run", "scene.json", "-o", "out", "--bogus"},
      {"validate"},
      {"validate", "a.json", "b.json"},
      {"compare", "a"},
      {"compare", "a", "b", "--atol", "abc"},
      {"compare", "a", "b", "--rtol", "-1"},
      {"--version", "extra"},
  };
  for (const auto& args : cases) {
    std::string joined;
    for (const auto& a : args) joined += a + " ";
    CAPTURE(joined);
    const Outcome o = run(args);
    CHECK(o.code == 2);
    CHECK(o.out.empty());
    CHECK_FALSE(o.err.empty());
  }
  const Outcome o = run({"run", "scene.json", "-o", "out", "--bogus"});
  CHECK(o.err == "bristle run: unknown option '--bogus'\n"
                 "usage: bristle run SCENE -o OUT [--force] [--quiet]\n"
                 "Run 'bristle help run' for details.\n");
}

TEST_CASE("cli validate prints a summary") {
  const Outcome o = run({"validate", scene("hanging_bristle")});
  CHECK(o.code == 0);
  CHECK(contains(o.out, "scene \"hanging_bristle\""));
  CHECK(contains(o.out, "1 (21 vertices, 20 edges, 2 fixed vertices"));
  CHECK(contains(o.out, "steps          1000"));
  CHECK(contains(o.out, "frames         21"));
  CHECK(contains(o.out, "total mass"));
  CHECK(contains(o.out, "smallest edge"));
  const Outcome json = run({"validate", scene("hanging_bristle"), "--json"});
  CHECK(json.code == 0);
  const auto parsed = nlohmann::json::parse(json.out);
  CHECK(parsed["vertices"] == 21);
  CHECK(parsed["frames"] == 21);
  CHECK(parsed["total_mass"].get<double>() == doctest::Approx(1140 * 3.14159265358979 * 1e-8 * 0.08));
}

TEST_CASE("cli run refuses bad scenes and non-empty folders without writing") {
  test::TempFolder folder("cli-run");
  const std::string bad = folder / "bad.json";
  std::ofstream(bad) << R"({"format": "bristle-scene/1", "time": {"dt": -1, "duration": 1}, "rods": []})";
  Outcome o = run({"run", bad, "-o", folder / "out"});
  CHECK(o.code == 2);
  CHECK(contains(o.err, "/time/dt"));
  CHECK_FALSE(fs::exists(folder / "out"));

  o = run({"run", folder / "no-such-scene.json", "-o", folder / "out"});
  CHECK(o.code == 2);
  CHECK_FALSE(fs::exists(folder / "out"));

  fs::create_directories(folder / "busy");
  std::ofstream(folder / "busy/keep.txt") << "mine";
  o = run({"run", scene("rod_3d_straight"), "-o", folder / "busy"});
  CHECK(o.code == 2);
  CHECK(contains(o.err, "not empty"));
  CHECK(contains(o.err, "--force"));
  CHECK_FALSE(fs::exists(folder / "busy/manifest.json"));

  o = run({"run", scene("rod_3d_straight"), "-o", folder / "busy", "--force", "--quiet"});
  CHECK(o.code == 0);
  CHECK(o.out.empty());
  CHECK(o.err.empty());
  CHECK(fs::exists(folder / "busy/keep.txt"));
  CHECK(OutputFolder(folder / "busy").frame_count() == 11);
}

TEST_CASE("cli run then compare: same, one vertex moved, a frame missing, unreadable") {
  test::TempFolder folder("cli-compare");
  const std::string a = folder / "a", b = folder / "b";
  Outcome o = run({"run", scene("curl_2d"), "-o", a});
  REQUIRE(o.code == 0);
  CHECK(contains(o.out, "complete: "));
  CHECK(contains(o.err, "100%"));  // plain progress lines (not a terminal)
  REQUIRE(run({"run", scene("curl_2d"), "-o", b, "--quiet"}).code == 0);

  o = run({"compare", a, b});
  CHECK(o.code == 0);
  CHECK(o.out.rfind("same", 0) == 0);

  SUBCASE("one coordinate moved beyond tolerance") {
    const OutputFolder folder_b(b);
    Frame frame = folder_b.frame(7);
    frame.rods[0].positions[11].x() += 1e-6;
    std::ofstream(folder_b.frame_path(7), std::ios::binary) << frame_to_text(frame, 2);
    o = run({"compare", a, b});
    CHECK(o.code == 1);
    CHECK(contains(o.out, "first difference beyond tolerance: frame 7, rod \"curl\" (index 0), vertex 11, position.x"));
    CHECK(contains(o.out, "largest difference: frame 7"));
    o = run({"compare", a, b, "--atol", "1e-5"});
    CHECK(o.code == 0);
    o = run({"compare", a, b, "--json"});
    CHECK(o.code == 1);
    const auto json = nlohmann::json::parse(o.out);
    CHECK(json["same"] == false);
    CHECK(json["first"]["frame"] == 7);
    CHECK(json["first"]["rod"] == "curl");
    CHECK(json["first"]["vertex"] == 11);
  }
  SUBCASE("a frame missing") {
    const std::string c = folder / "c";
    Outcome shorter = run({"run", scene("curl_2d"), "-o", c, "--quiet"});
    REQUIRE(shorter.code == 0);
    // Drop the last frame from the manifest and the disk.
    Manifest manifest = read_manifest(c);
    fs::remove(fs::path(c) / manifest.frame_files.back());
    manifest.frame_files.pop_back();
    manifest.frame_count -= 1;
    std::ofstream(fs::path(c) / "manifest.json", std::ios::binary) << manifest_to_text(manifest);
    o = run({"compare", a, c});
    CHECK(o.code == 1);
    CHECK(contains(o.out, "frame counts differ: 21 in A, 20 in B"));
  }
  SUBCASE("unreadable") {
    o = run({"compare", a, folder / "nothing"});
    CHECK(o.code == 2);
    CHECK(contains(o.err, "no such output folder"));
  }
}

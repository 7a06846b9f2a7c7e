// Issue 13, reader side: damaged output folders (a fuzzer's findings) are refused with an
// OutputError naming the file and the JSON pointer; none crashes, wraps or escapes the folder.

#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "bristle/io/frame_json.hpp"
#include "bristle/io/frame_writer.hpp"
#include "bristle/io/output_error.hpp"
#include "bristle/io/output_reader.hpp"
#include "io/frame_test_support.hpp"
#include "io/temp_folder.hpp"

namespace fs = std::filesystem;
using namespace bristle;

namespace {

Frame frame_of(const Manifest& manifest, int index) {
  Frame frame;
  frame.index = index;
  frame.time = index * manifest.frame_dt;
  for (const RodInfo& info : manifest.rods) {
    RodFrame rod;
    rod.name = info.name;
    for (int i = 0; i < info.vertex_count; ++i) {
      rod.positions.push_back(Vec3(0.01 * i, 0.001 * index, 0.0));
      rod.velocities.push_back(Vec3::Zero());
    }
    frame.rods.push_back(rod);
  }
  frame.stats = {{"energies", {{"kinetic", 0.5}}}};
  return frame;
}

/// A complete two-frame folder at `out`.
void write_folder(const std::string& out) {
  Manifest manifest;
  manifest.name = "damaged";
  manifest.dimension = 3;
  manifest.dt = 0.001;
  manifest.frame_dt = 0.01;
  manifest.rods = {{"rod", 3, 1e-4}};
  manifest.scene = {{"format", "bristle-scene/1"}};
  FrameWriter writer(out, manifest, {0.0});
  writer.write(frame_of(manifest, 0));
  writer.write(frame_of(manifest, 1));
  writer.finish("complete");
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

/// Replaces the first `from` in the file by `to` (the text must contain it).
void damage(const fs::path& path, const std::string& from, const std::string& to) {
  std::string text = read_text(path);
  const std::size_t at = text.find(from);
  REQUIRE(at != std::string::npos);
  text.replace(at, from.size(), to);
  std::ofstream(path, std::ios::binary) << text;
}

/// The error reading every frame of `dir`, "" when all read.
std::string refusal(const std::string& dir) { return test::output_refusal(dir); }

bool mentions(const std::string& message, const std::string& piece) {
  CAPTURE(message);
  return message.find(piece) != std::string::npos;
}

}  // namespace

TEST_CASE("damaged output: a number beyond a double is refused at its pointer, not an internal error") {
  test::TempFolder folder("damaged-1e400");
  const std::string out = folder / "out";
  write_folder(out);
  CHECK(refusal(out).empty());
  damage(fs::path(out) / "frames/000001.json", "0.001", "1e400");
  const std::string message = refusal(out);
  CHECK(mentions(message, "000001.json: /rods/0/positions/0/1: "));
  CHECK(mentions(message, "1e400"));

  write_folder(folder / "manifest");
  damage(fs::path(folder / "manifest") / "manifest.json", "\"dt\": 0.001", "\"dt\": -1e400");
  CHECK(mentions(refusal(folder / "manifest"), "manifest.json: /dt: "));
}

TEST_CASE("damaged output: a frame or manifest nested 200000 deep is refused, not a crash") {
  test::TempFolder folder("damaged-deep");
  const std::string deep = std::string(200000, '[') + std::string(200000, ']');
  write_folder(folder / "frame");
  damage(fs::path(folder / "frame") / "frames/000000.json", "\"stats\": {", "\"stats\": {\"deep\": " + deep + ", ");
  CHECK(mentions(refusal(folder / "frame"), "000000.json: /stats/deep/0/0/"));
  CHECK(mentions(refusal(folder / "frame"), "nested deeper than 64"));

  write_folder(folder / "manifest");
  damage(fs::path(folder / "manifest") / "manifest.json", "\"scene\": {", "\"scene\": {\"deep\": " + deep + ", ");
  CHECK(mentions(refusal(folder / "manifest"), "manifest.json: /scene/deep/0/"));
}

TEST_CASE("damaged output: integers past 2^32 are refused, not wrapped") {
  test::TempFolder folder("damaged-wrap");
  struct Case {
    const char* file;
    const char* from;
    const char* to;
    const char* pointer;
  };
  const Case cases[] = {
      {"manifest.json", "\"dimension\": 3", "\"dimension\": 4294967299", "/dimension"},
      {"manifest.json", "\"vertex_count\": 3", "\"vertex_count\": 4294967299", "/rods/0/vertex_count"},
      {"manifest.json", "\"frame_count\": 2", "\"frame_count\": 4294967298", "/frame_count"},
      {"frames/000001.json", "\"frame\": 1", "\"frame\": 4294967297", "/frame"},
      {"frames/000001.json", "\"frame\": 1", "\"frame\": -4294967295", "/frame"},
  };
  int n = 0;
  for (const Case& c : cases) {
    const std::string out = folder / ("out" + std::to_string(n++));
    write_folder(out);
    damage(fs::path(out) / c.file, c.from, c.to);
    CAPTURE(c.to);
    CHECK(mentions(refusal(out), std::string(c.file) + ": " + c.pointer + ": expected an integer in ["));
  }
}

TEST_CASE("damaged output: frame_files outside frames/NNNNNN.json are refused, never followed") {
  test::TempFolder folder("damaged-escape");
  std::ofstream(folder / "outside.json") << "{}";
  for (const std::string& name : {std::string("../outside.json"), folder / "outside.json",
                                  std::string("frames/../../outside.json"), std::string("frames/00000a.json")}) {
    const std::string out = folder / "out";
    fs::remove_all(out);
    write_folder(out);
    damage(fs::path(out) / "manifest.json", "\"frames/000001.json\"", "\"" + name + "\"");
    CAPTURE(name);
    CHECK(mentions(refusal(out), "manifest.json: /frame_files/1: expected a frame file name"));
  }
}

TEST_CASE("frame writer: a frame holding a non-finite number is refused, never written as null") {
  test::TempFolder folder("nonfinite-frame");
  const std::string out = folder / "out";
  Manifest manifest;
  manifest.name = "nan";
  manifest.dimension = 3;
  manifest.dt = manifest.frame_dt = 0.01;
  manifest.rods = {{"rod", 2, 1e-4}};
  FrameWriter writer(out, manifest, {0.0});
  Frame frame = frame_of(manifest, 0);
  CHECK(first_non_finite(frame).empty());
  frame.stats["energies"]["kinetic"] = std::nan("");
  CHECK(first_non_finite(frame) == "/stats/energies/kinetic");
  CHECK_THROWS_AS(writer.write(frame), OutputError);
  CHECK_FALSE(fs::exists(fs::path(out) / "frames/000000.json"));
  frame = frame_of(manifest, 0);
  frame.rods[0].velocities[1].z() = HUGE_VAL;
  CHECK(first_non_finite(frame) == "/rods/0/velocities/1/2");
}

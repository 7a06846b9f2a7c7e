#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "bristle/io/atomic_file.hpp"
#include "bristle/io/frame_json.hpp"
#include "bristle/io/frame_writer.hpp"
#include "bristle/io/output_error.hpp"
#include "bristle/io/output_reader.hpp"
#include "io/frame_test_support.hpp"
#include "io/temp_folder.hpp"

namespace fs = std::filesystem;
using namespace bristle;

namespace {

Manifest test_manifest(int dimension) {
  Manifest manifest;
  manifest.name = "round trip";
  manifest.dimension = dimension;
  manifest.dt = 1.0 / 240.0;
  manifest.frame_dt = 4.0 / 240.0;
  manifest.rods = {{"first", 4, 1e-4}, {"second \"rod\"", 2, 2.5e-4}};
  manifest.scene = {{"format", "bristle-scene/1"}, {"dimension", dimension}};
  return manifest;
}

Frame random_frame(const Manifest& manifest, int index, std::mt19937_64& random) {
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  Frame frame;
  frame.index = index;
  frame.time = index * manifest.frame_dt;
  for (const RodInfo& info : manifest.rods) {
    RodFrame rod;
    rod.name = info.name;
    for (int i = 0; i < info.vertex_count; ++i) {
      Vec3 x = Vec3::Zero(), v = Vec3::Zero();
      for (int k = 0; k < manifest.dimension; ++k) {
        x[k] = uniform(random) * std::pow(10.0, -static_cast<int>(random() % 12));
        v[k] = uniform(random) * 1e-3;
      }
      rod.positions.push_back(x);
      rod.velocities.push_back(v);
    }
    frame.rods.push_back(rod);
  }
  frame.stats = {{"cg_iterations", 12}, {"cg_residual", 3.3e-9}, {"energies", {{"kinetic", uniform(random)}}}};
  return frame;
}

void write_text(const fs::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

}  // namespace

TEST_CASE("io frames and manifest round trip exactly") {
  for (int dimension : {2, 3}) {
    CAPTURE(dimension);
    test::TempFolder folder("io-round-trip");
    const std::string out = folder / "out";
    const Manifest manifest = test_manifest(dimension);
    std::mt19937_64 random(dimension);
    const std::vector<Frame> written =
        test::write_complete_run(out, manifest, 5, [&](int k) { return random_frame(manifest, k, random); });
    const OutputFolder folder_read(out);
    const Manifest& read = folder_read.manifest();
    CHECK(read.format == "bristle-frames/1");
    CHECK(read.name == manifest.name);
    CHECK(read.dimension == dimension);
    CHECK(read.dt == manifest.dt);
    CHECK(read.frame_dt == manifest.frame_dt);
    CHECK(read.frame_count == 5);
    CHECK(read.status == "complete");
    CHECK(read.scene == manifest.scene);
    REQUIRE(read.rods.size() == 2);
    CHECK(read.rods[1].name == "second \"rod\"");
    CHECK(read.rods[1].radius == 2.5e-4);
    CHECK(read.frame_files[4] == "frames/000004.json");
    REQUIRE(folder_read.frame_count() == 5);
    for (int k = 0; k < 5; ++k) {
      const Frame frame = folder_read.frame(k);
      CHECK(frame.index == k);
      CHECK(frame.time == written[k].time);
      CHECK(frame.stats == written[k].stats);
      for (std::size_t r = 0; r < frame.rods.size(); ++r)
        for (std::size_t i = 0; i < frame.rods[r].positions.size(); ++i) {
          // Exact equality, every component (z is 0 in 2D on both sides).
          CHECK(frame.rods[r].positions[i] == written[k].rods[r].positions[i]);
          CHECK(frame.rods[r].velocities[i] == written[k].rods[r].velocities[i]);
        }
    }
    // 2D files hold 2 components per vector.
    std::ifstream stream(folder_read.frame_path(0));
    const auto json = nlohmann::json::parse(stream);
    CHECK(json["rods"][0]["positions"][0].size() == static_cast<std::size_t>(dimension));
  }
}

TEST_CASE("io manifest says running until finished, then the final status") {
  test::TempFolder folder("io-status");
  const std::string out = folder / "out";
  const Manifest manifest = test_manifest(3);
  std::mt19937_64 random(1);
  FrameWriter writer(out, manifest, {0.0});
  Manifest read = read_manifest(out);
  CHECK(read.status == "running");
  CHECK(read.frame_count == 0);
  writer.write(random_frame(manifest, 0, random));
  writer.write(random_frame(manifest, 1, random));
  read = read_manifest(out);
  CHECK(read.status == "running");
  CHECK(read.frame_count == 2);
  CHECK_THROWS_AS(writer.write(random_frame(manifest, 5, random)), OutputError);
  writer.finish("failed: step 12 (t = 0.05 s): non-finite velocity at rod 'first' vertex 3");
  read = read_manifest(out);
  CHECK(read.status == "failed: step 12 (t = 0.05 s): non-finite velocity at rod 'first' vertex 3");
  CHECK(read.frame_count == 2);
}

TEST_CASE("io reader takes frames past a running manifest and never temporary files") {
  test::TempFolder folder("io-running");
  const std::string out = folder / "out";
  const Manifest manifest = test_manifest(3);
  std::mt19937_64 random(2);
  // A long manifest interval: the manifest is written once, at the start, as after a crash.
  FrameWriter writer(out, manifest, {1e9});
  for (int k = 0; k < 3; ++k) writer.write(random_frame(manifest, k, random));
  CHECK(read_manifest(out).frame_count == 0);
  // Debris of a write killed half-way: a temporary file with the next frame's name.
  write_text(fs::path(out) / "frames" / ".000003.json.tmp", "{\"frame\": 3, \"ti");
  CHECK(is_temporary_file_name(".000003.json.tmp"));
  CHECK_FALSE(is_temporary_file_name("000003.json"));
  const OutputFolder read(out);
  CHECK(read.frame_count() == 3);
  for (int k = 0; k < 3; ++k) CHECK(read.frame(k).index == k);
}

TEST_CASE("io reader errors name the file and what is wrong") {
  test::TempFolder folder("io-errors");
  auto message_of = [](const std::string& dir) -> std::string {
    try {
      OutputFolder read(dir);
      for (int k = 0; k < read.frame_count(); ++k) read.frame(k);
    } catch (const OutputError& error) {
      return error.what();
    }
    return "";
  };
  SUBCASE("no folder") { CHECK(message_of(folder / "missing").find("no such output folder") != std::string::npos); }
  SUBCASE("no manifest") {
    fs::create_directories(folder / "empty");
    CHECK(message_of(folder / "empty").find("manifest.json: no manifest") != std::string::npos);
  }
  SUBCASE("manifest that is not JSON") {
    fs::create_directories(folder / "bad");
    write_text(folder.path() / "bad" / "manifest.json", "{\"format\": ");
    CHECK(message_of(folder / "bad").find("not valid JSON") != std::string::npos);
  }
  SUBCASE("manifest of another format") {
    fs::create_directories(folder / "other");
    write_text(folder.path() / "other" / "manifest.json", "{\"format\": \"something/2\"}");
    CHECK(message_of(folder / "other").find("/format: expected \"bristle-frames/1\"") != std::string::npos);
  }
  SUBCASE("frame listed but missing, frame with a wrong vertex") {
    const std::string out = folder / "out";
    const Manifest manifest = test_manifest(3);
    std::mt19937_64 random(3);
    {
      FrameWriter writer(out, manifest, {0.0});
      writer.write(random_frame(manifest, 0, random));
      writer.write(random_frame(manifest, 1, random));
      writer.finish("complete");
    }
    write_text(fs::path(out) / "frames" / "000001.json",
               "{\"frame\": 1, \"time\": 0, \"rods\": [{\"name\": \"first\", \"positions\": [[0,0,0],[0,0],[0,0,0],[0,0,0]],"
               " \"velocities\": []}, {}]}");
    const std::string message = message_of(out);
    CHECK(message.find("000001.json") != std::string::npos);
    CHECK(message.find("/rods/0/positions/1: expected an array of 3 numbers") != std::string::npos);
    fs::remove(fs::path(out) / "frames" / "000001.json");
    CHECK(message_of(out).find("lists frames/000001.json but that file is missing") != std::string::npos);
  }
}

TEST_CASE("io output folder emptiness and clearing") {
  test::TempFolder folder("io-clear");
  const std::string out = folder / "out";
  CHECK(output_folder_is_empty(out));
  fs::create_directories(out);
  CHECK(output_folder_is_empty(out));
  {
    FrameWriter writer(out, test_manifest(2), {0.0});
    std::mt19937_64 random(4);
    writer.write(random_frame(test_manifest(2), 0, random));
  }
  write_text(fs::path(out) / "notes.txt", "mine");
  write_text(fs::path(out) / ".manifest.json.tmp", "half");
  CHECK_FALSE(output_folder_is_empty(out));
  clear_output_folder(out);
  CHECK_FALSE(fs::exists(fs::path(out) / "manifest.json"));
  CHECK_FALSE(fs::exists(fs::path(out) / "frames"));
  CHECK_FALSE(fs::exists(fs::path(out) / ".manifest.json.tmp"));
  CHECK(fs::exists(fs::path(out) / "notes.txt"));
}

TEST_CASE("io files are written to a temporary name and renamed, never in place") {
  // If the temporary file cannot be created, nothing may appear under the final name and an
  // existing file must keep its old contents: the writer never writes the target directly.
  test::TempFolder folder("io-atomic");
  const fs::path target = folder.path() / "file.json";
  const fs::path temporary = folder.path() / ".file.json.tmp";
  write_file_atomically(target.string(), "old contents\n");
  CHECK_FALSE(fs::exists(temporary));  // renamed away on success

  fs::create_directories(temporary);  // blocks the temporary file
  CHECK_THROWS_AS(write_file_atomically(target.string(), "new contents\n"), OutputError);
  std::ifstream stream(target, std::ios::binary);
  std::ostringstream text;
  text << stream.rdbuf();
  CHECK(text.str() == "old contents\n");

  // The same through FrameWriter: a frame whose temporary file is blocked is not written at
  // all, and the frame before it is untouched.
  const std::string out = folder / "out";
  const Manifest manifest = test_manifest(3);
  std::mt19937_64 random(5);
  FrameWriter writer(out, manifest, {0.0});
  writer.write(random_frame(manifest, 0, random));
  fs::create_directories(fs::path(out) / "frames" / ".000001.json.tmp");
  CHECK_THROWS_AS(writer.write(random_frame(manifest, 1, random)), OutputError);
  CHECK_FALSE(fs::exists(fs::path(out) / "frames" / "000001.json"));
  CHECK_NOTHROW(read_frame_file((fs::path(out) / "frames" / "000000.json").string(), manifest));
}

TEST_CASE("io numbers in frame files read back bit for bit, extremes included") {
  // Through the whole path (Frame -> file -> Frame), not only format_double: subnormals, the
  // largest double, negative zero and values that need all 17 digits.
  test::TempFolder folder("io-extremes");
  const std::string out = folder / "out";
  Manifest manifest = test_manifest(3);
  manifest.rods = {{"x", 3, 1e-4}};
  const double values[] = {4.9406564584124654e-324, -2.2250738585072009e-308, 1.7976931348623157e308, -0.0,
                           0.1 + 0.2, 1.0 / 3.0, -9.81, 1e-19};
  Frame frame;
  frame.index = 0;
  frame.time = 1.0 / 3.0;
  RodFrame rod;
  rod.name = "x";
  rod.positions = {Vec3(values[0], values[1], values[2]), Vec3(values[3], values[4], values[5]),
                   Vec3(values[6], values[7], 0.0)};
  rod.velocities = {Vec3(values[7], values[6], values[5]), Vec3(values[4], values[3], values[2]),
                    Vec3(values[1], values[0], -0.0)};
  frame.rods.push_back(rod);
  {
    FrameWriter writer(out, manifest, {0.0});
    writer.write(frame);
    writer.finish("complete");
  }
  const Frame read = OutputFolder(out).frame(0);
  auto same_bits = [](double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; };
  CHECK(same_bits(read.time, frame.time));
  for (int i = 0; i < 3; ++i)
    for (int k = 0; k < 3; ++k) {
      CAPTURE(i);
      CAPTURE(k);
      CHECK(same_bits(read.rods[0].positions[i][k], frame.rods[0].positions[i][k]));
      CHECK(same_bits(read.rods[0].velocities[i][k], frame.rods[0].velocities[i][k]));
    }
}

// Binary frames (frames/NNNNNN.npz): exact round trip through the writer and every reader,
// the manifest's frame_layout, interrupted runs, and damaged files refused with the file and
// the array named.

#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <sstream>

#include "bristle/io/frame_json.hpp"
#include "bristle/io/frame_npz.hpp"
#include "bristle/io/frame_writer.hpp"
#include "bristle/io/npz.hpp"
#include "bristle/io/output_error.hpp"
#include "bristle/io/output_reader.hpp"
#include "io/frame_test_support.hpp"
#include "io/temp_folder.hpp"

namespace fs = std::filesystem;
using namespace bristle;

namespace {

Manifest npz_manifest(int dimension) {
  Manifest manifest;
  manifest.name = "binary";
  manifest.dimension = dimension;
  manifest.dt = 1.0 / 240.0;
  manifest.frame_dt = 4.0 / 240.0;
  manifest.rods = {{"first", 4, 1e-4}, {"second", 1, 2.5e-4}, {"third", 3, 1e-4}};
  manifest.frame_layout = FrameLayout::Npz;
  manifest.scene = {{"format", "bristle-scene/1"}, {"dimension", dimension}};
  return manifest;
}

/// Random doubles across many magnitudes, signed zeros and subnormals: what a text format
/// could get wrong and a binary one must not.
Frame random_frame(const Manifest& manifest, int index, std::mt19937_64& random) {
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  const double specials[] = {-0.0, 0.0, 4.9e-324, -2.2250738585072014e-308, 1.7976931348623157e308};
  Frame frame;
  frame.index = index;
  frame.time = index * manifest.frame_dt;
  for (const RodInfo& info : manifest.rods) {
    RodFrame rod;
    rod.name = info.name;
    for (int i = 0; i < info.vertex_count; ++i) {
      Vec3 x = Vec3::Zero(), v = Vec3::Zero();
      for (int k = 0; k < manifest.dimension; ++k) {
        x[k] = uniform(random) * std::pow(10.0, -static_cast<int>(random() % 300));
        v[k] = random() % 7 == 0 ? specials[random() % 5] : uniform(random);
      }
      rod.positions.push_back(x);
      rod.velocities.push_back(v);
    }
    frame.rods.push_back(rod);
  }
  frame.stats = {{"cg_iterations", 12},
                 {"cg_residual", 3.3e-9},
                 {"energies", {{"kinetic", uniform(random)}, {"total", 0.1 + 0.2}}},
                 {"contact", {{"min_gap", -1e-7}}}};
  return frame;
}

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

void check_same_frame(const Frame& read, const Frame& written) {
  CHECK(read.index == written.index);
  CHECK(same_bits(read.time, written.time));
  CHECK(read.stats == written.stats);
  REQUIRE(read.rods.size() == written.rods.size());
  for (std::size_t r = 0; r < read.rods.size(); ++r) {
    CHECK(read.rods[r].name == written.rods[r].name);
    REQUIRE(read.rods[r].positions.size() == written.rods[r].positions.size());
    for (std::size_t i = 0; i < read.rods[r].positions.size(); ++i)
      for (int k = 0; k < 3; ++k) {
        CHECK(same_bits(read.rods[r].positions[i][k], written.rods[r].positions[i][k]));
        CHECK(same_bits(read.rods[r].velocities[i][k], written.rods[r].velocities[i][k]));
      }
  }
}

void write_bytes(const fs::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

std::string read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

std::string refusal(const std::string& dir) { return test::output_refusal(dir); }

}  // namespace

TEST_CASE("io binary frames round trip bit for bit, 2D and 3D") {
  for (int dimension : {2, 3}) {
    CAPTURE(dimension);
    test::TempFolder folder("npz-round-trip");
    const std::string out = folder / "out";
    const Manifest manifest = npz_manifest(dimension);
    std::mt19937_64 random(dimension);
    const std::vector<Frame> written =
        test::write_complete_run(out, manifest, 4, [&](int k) { return random_frame(manifest, k, random); });
    const OutputFolder read(out);
    CHECK(read.manifest().frame_layout == FrameLayout::Npz);
    CHECK(read.manifest().frame_files[3] == "frames/000003.npz");
    REQUIRE(read.frame_count() == 4);
    for (int k = 0; k < 4; ++k) check_same_frame(read.frame(k), written[k]);

    // The archive holds the documented arrays with D columns, V = 8 rows.
    const std::string bytes = read_bytes(read.frame_path(1));
    const std::vector<NpzMember> members = read_npz(bytes);
    std::vector<std::string> names;
    for (const NpzMember& m : members) names.push_back(m.name);
    CHECK(names == std::vector<std::string>{"frame", "time", "positions", "velocities", "stats"});
    CHECK(members[2].array.shape == std::vector<std::int64_t>{8, dimension});
    // Rows run over the rods in manifest order: row 5 is rod "third" vertex 0.
    double x;
    std::memcpy(&x, members[2].array.data.data() + 5 * dimension * sizeof(double), sizeof x);
    CHECK(same_bits(x, written[1].rods[2].positions[0][0]));
    // Same frame, same bytes.
    CHECK(frame_to_npz(written[1], dimension) == bytes);
  }
}

TEST_CASE("io compressed binary frames round trip bit for bit, 2D and 3D, and are smaller") {
  for (int dimension : {2, 3}) {
    CAPTURE(dimension);
    test::TempFolder folder("npz-compressed");
    const std::string out = folder / "out";
    const Manifest manifest = npz_manifest(dimension);
    std::mt19937_64 random(10 + dimension);
    std::vector<Frame> written;
    FrameWriterOptions options;
    options.manifest_interval_seconds = 0.0;
    options.npz_compression = NpzCompression::Deflated;
    {
      FrameWriter writer(out, manifest, options);
      for (int k = 0; k < 3; ++k) {
        written.push_back(random_frame(manifest, k, random));
        writer.write(written.back());
      }
      writer.finish("complete");
    }
    const OutputFolder read(out);
    CHECK(read.manifest().frame_layout == FrameLayout::Npz);  // the manifest does not tell
    REQUIRE(read.frame_count() == 3);
    for (int k = 0; k < 3; ++k) check_same_frame(read.frame(k), written[k]);
    const std::string bytes = read_bytes(read.frame_path(2));
    CHECK(bytes == frame_to_npz(written[2], dimension, NpzCompression::Deflated));  // same frame, same bytes
    CHECK(bytes.size() < frame_to_npz(written[2], dimension).size());
    for (const NpzMember& m : read_npz(bytes)) {
      CAPTURE(m.name);
      CHECK(static_cast<bool>(m.inflated));  // every member deflated, even the scalars
    }
  }
}

TEST_CASE("io randomly damaged compressed frames are refused or read, never crash the reader") {
  const Manifest manifest = npz_manifest(3);
  std::mt19937_64 random(9);
  const std::string good = frame_to_npz(random_frame(manifest, 0, random), 3, NpzCompression::Deflated);
  int refused = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    std::string bad = good;
    const int changes = 1 + static_cast<int>(random() % 4);
    for (int c = 0; c < changes; ++c) bad[random() % bad.size()] = static_cast<char>(random() & 0xFF);
    try {
      frame_from_npz(bad, manifest, "frame.npz");
    } catch (const OutputError&) {
      ++refused;
    }
  }
  CHECK(refused > 1000);
}

TEST_CASE("io binary frames: the manifest names the layout; old manifests are JSON") {
  test::TempFolder folder("npz-manifest");
  Manifest manifest = npz_manifest(3);
  CHECK(manifest_to_text(manifest).find("\"frame_layout\": \"npz\"") != std::string::npos);
  manifest.frame_layout = FrameLayout::Json;
  CHECK(manifest_to_text(manifest).find("\"frame_layout\": \"json\"") != std::string::npos);
  nlohmann::json json = nlohmann::json::parse(manifest_to_text(manifest));
  json.erase("frame_layout");
  CHECK(manifest_from_json(json, "m").frame_layout == FrameLayout::Json);
  json["frame_layout"] = "hdf5";
  CHECK_THROWS_WITH_AS(manifest_from_json(json, "m"), doctest::Contains("/frame_layout: expected \"json\" or \"npz\""),
                       OutputError);
  // A frame file of the other layout is refused: the reader would parse it wrongly.
  json["frame_layout"] = "npz";
  json["frame_files"] = {"frames/000000.json"};
  json["frame_count"] = 1;
  CHECK_THROWS_WITH_AS(manifest_from_json(json, "m"), doctest::Contains("/frame_files/0: expected a frame file name"),
                       OutputError);
}

TEST_CASE("io binary frames past a running manifest are read, temporary files never") {
  test::TempFolder folder("npz-running");
  const std::string out = folder / "out";
  const Manifest manifest = npz_manifest(3);
  std::mt19937_64 random(5);
  std::vector<Frame> written;
  FrameWriter writer(out, manifest, {1e9});  // the manifest is written once, as after a kill
  for (int k = 0; k < 3; ++k) {
    written.push_back(random_frame(manifest, k, random));
    writer.write(written.back());
  }
  write_bytes(fs::path(out) / "frames" / ".000003.npz.tmp", "PK\x03\x04half");
  // A JSON file with the next number is not a frame of this folder either.
  write_bytes(fs::path(out) / "frames" / "000003.json", "{}");
  const OutputFolder read(out);
  CHECK(read.manifest().frame_count == 0);
  REQUIRE(read.frame_count() == 3);
  for (int k = 0; k < 3; ++k) check_same_frame(read.frame(k), written[k]);
}

TEST_CASE("io damaged binary frames are refused naming the file and the array") {
  test::TempFolder folder("npz-damaged");
  const std::string out = folder / "out";
  const Manifest manifest = npz_manifest(3);
  std::mt19937_64 random(6);
  const Frame frame0 = random_frame(manifest, 0, random), frame1 = random_frame(manifest, 1, random);
  {
    FrameWriter writer(out, manifest, {0.0});
    writer.write(frame0);
    writer.write(frame1);
    writer.finish("complete");
  }
  const fs::path file = fs::path(out) / "frames" / "000001.npz";
  const std::string good = read_bytes(file);
  REQUIRE(refusal(out).empty());

  SUBCASE("truncated") {
    write_bytes(file, good.substr(0, good.size() / 2));
    const std::string message = refusal(out);
    CHECK(message.find("000001.npz: not a readable .npz frame") != std::string::npos);
  }
  SUBCASE("a frame of another scene: wrong vertex count") {
    Frame bigger = frame1;
    bigger.rods[0].positions.push_back(Vec3::Zero());
    bigger.rods[0].velocities.push_back(Vec3::Zero());
    write_bytes(file, frame_to_npz(bigger, 3));
    CHECK(refusal(out).find("000001.npz: positions: expected float64 of shape (8, 3) (the manifest's 8 vertices, "
                            "dimension 3), found float64 of shape (9, 3)") != std::string::npos);
  }
  SUBCASE("a 2D frame in a 3D folder") {
    write_bytes(file, frame_to_npz(frame1, 2));
    CHECK(refusal(out).find("positions: expected float64 of shape (8, 3)") != std::string::npos);
  }
  SUBCASE("a non-finite value names the rod and vertex") {
    Frame bad = frame1;
    bad.rods[2].velocities[1][2] = std::numeric_limits<double>::quiet_NaN();
    write_bytes(file, frame_to_npz(bad, 3));
    CHECK(refusal(out).find("velocities: row 6 (rod \"third\" vertex 1), component 2: expected a finite number") !=
          std::string::npos);
  }
  SUBCASE("the wrong frame index") {
    write_bytes(file, frame_to_npz(frame0, 3));
    CHECK(refusal(out).find("000001.npz: frame: expected 1, found 0") != std::string::npos);
  }
  SUBCASE("a missing array") {
    NpzWriter writer;
    const std::int64_t k = 1;
    writer.add_array("frame", NpyType::Int64, {}, &k, sizeof k);
    write_bytes(file, writer.finish());
    CHECK(refusal(out).find("000001.npz: time: missing array") != std::string::npos);
  }
  SUBCASE("stats that are not JSON") {
    Frame copy = frame1;
    std::string bytes = frame_to_npz(copy, 3);
    // Replace the stats text's first byte '{' by '[' and fix nothing else: the CRC catches it.
    const std::size_t at = bytes.rfind("{\"cg_iterations\"");
    REQUIRE(at != std::string::npos);
    bytes[at] = '[';
    write_bytes(file, bytes);
    CHECK(refusal(out).find("stats.npy: CRC-32 mismatch") != std::string::npos);
  }
}

TEST_CASE("io binary frame writer refuses a non-finite number, like the JSON writer") {
  test::TempFolder folder("npz-non-finite");
  const Manifest manifest = npz_manifest(3);
  std::mt19937_64 random(7);
  Frame frame = random_frame(manifest, 0, random);
  frame.rods[1].positions[0][1] = INFINITY;
  FrameWriter writer(folder / "out", manifest, {0.0});
  CHECK_THROWS_WITH_AS(writer.write(frame), doctest::Contains("/rods/1/positions/0/1: not a finite number"),
                       OutputError);
  CHECK_FALSE(fs::exists(fs::path(folder / "out") / "frames" / "000000.npz"));
}

TEST_CASE("io a binary frame of 50,000 vertices holds at most 50 bytes per vertex") {
  // The budget of issue 17: positions and velocities as float64 are 48 bytes per vertex in 3D;
  // the archive's headers and a run's stats must fit in the other 2 (in 2D: 32 of 50).
  for (int dimension : {2, 3}) {
    CAPTURE(dimension);
    Frame frame;
    frame.index = 1234;
    frame.time = 1.25;
    for (int r = 0; r < 1000; ++r) {
      RodFrame rod;
      rod.name = "strand_" + std::to_string(r);
      rod.positions.assign(50, Vec3(0.1, -0.2, 0.3));
      rod.velocities.assign(50, Vec3(1e-3, 2e-3, -3e-3));
      frame.rods.push_back(std::move(rod));
    }
    frame.stats = {{"cg_iterations", 1234},       {"cg_iterations_max", 12},         {"cg_residual", 2.1831259788574028e-15},
                   {"cg_residual_max", 1.5e-14}, {"newton_iterations", 50},         {"steps", 50},
                   {"substeps", 50},             {"unconverged_steps", 0},
                   {"energies",
                    {{"bend", 7.219501197005878e-08}, {"elastic", 7.223139903892418e-08},
                     {"gravitational", -1.0409224342387395e-07}, {"kinetic", 8.295131895211001e-09},
                     {"load", 0.0}, {"potential", -3.1860844384949766e-08}, {"stretch", 3.638706886539997e-11},
                     {"total", -2.3565712489738765e-08}}}};
    const std::size_t bytes = frame_to_npz(frame, dimension).size();
    CHECK(bytes <= 50u * 50000u);
    CHECK(bytes >= 2u * 8u * dimension * 50000u);
    MESSAGE("binary frame, dimension " << dimension << ": " << bytes / 50000.0 << " bytes per vertex");
  }
}

TEST_CASE("io randomly damaged binary frames are refused or read, never crash the reader") {
  // The CRC-32 guards the arrays' bytes, not the zip structures around them nor a .npy header
  // read on its own: damage those at random. Each attempt must end in a refusal or a frame
  // (tools/test-sanitize.sh runs this under AddressSanitizer, which catches a stray read).
  const Manifest manifest = npz_manifest(3);
  std::mt19937_64 random(8);
  const std::string good = frame_to_npz(random_frame(manifest, 0, random), 3);
  int refused = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    std::string bad = good;
    const int changes = 1 + static_cast<int>(random() % 4);
    for (int c = 0; c < changes; ++c) {
      // The first local header and .npy header, or the central directory and end record.
      const std::size_t at = random() % 2 ? random() % 200 : bad.size() - 1 - random() % 300;
      bad[at] = static_cast<char>(random() & 0xFF);
    }
    if (random() % 5 == 0) bad.resize(random() % bad.size());
    try {
      frame_from_npz(bad, manifest, "frame.npz");
    } catch (const OutputError&) {
      ++refused;
    }
  }
  CHECK(refused > 1000);

  const double data[24] = {};
  const std::string npy = npy_header(NpyType::Float64, {8, 3}) + std::string(reinterpret_cast<const char*>(data), sizeof data);
  int npy_refused = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    std::string bad = npy;
    const int changes = 1 + static_cast<int>(random() % 3);
    for (int c = 0; c < changes; ++c) bad[random() % 128] = static_cast<char>(random() % 2 ? random() & 0xFF : "(),: '0123456789"[random() % 16]);
    try {
      parse_npy(bad);
    } catch (const NpyError&) {
      ++npy_refused;
    }
  }
  CHECK(npy_refused > 1000);
}

// Material directors in output folders (format bristle-frames/2, docs/output-format.md): what
// the runner computes for rods with twist, their round trip through JSON, stored and
// compressed binary frames, old (version 1) folders still read, damaged directors refused.

#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "bristle/integrator/implicit_euler.hpp"
#include "bristle/io/frame_directors.hpp"
#include "bristle/io/frame_json.hpp"
#include "bristle/io/frame_npz.hpp"
#include "bristle/io/npz.hpp"
#include "bristle/io/output_error.hpp"
#include "bristle/io/output_reader.hpp"
#include "bristle/runner/run_simulation.hpp"
#include "io/frame_test_support.hpp"
#include "io/temp_folder.hpp"
#include "test_paths.hpp"

namespace fs = std::filesystem;
using namespace bristle;

namespace {

constexpr double kPi = 3.14159265358979323846;

/// Two rods with twist around one without: the mixed case every layout must keep apart.
Manifest twisted_manifest() {
  Manifest manifest;
  manifest.name = "directors";
  manifest.dimension = 3;
  manifest.dt = 0.01;
  manifest.frame_dt = 0.02;
  manifest.rods = {{"curl", 5, 1e-4, true}, {"plain", 3, 1e-4, false}, {"short", 2, 2e-4, true}};
  manifest.scene = {{"format", "bristle-scene/1"}, {"dimension", 3}};
  return manifest;
}

Vec3 random_unit(std::mt19937_64& random) {
  std::normal_distribution<double> normal;
  return Vec3(normal(random), normal(random), normal(random)).normalized();
}

Frame twisted_frame(const Manifest& manifest, int index, std::mt19937_64& random) {
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  Frame frame;
  frame.index = index;
  frame.time = index * manifest.frame_dt;
  for (const RodInfo& info : manifest.rods) {
    RodFrame rod;
    rod.name = info.name;
    for (int i = 0; i < info.vertex_count; ++i) {
      rod.positions.push_back(Vec3(0.01 * i, 1e-3 * uniform(random), 1e-3 * uniform(random)));
      rod.velocities.push_back(Vec3(uniform(random), uniform(random), uniform(random)));
    }
    if (info.twist)
      for (int j = 0; j + 1 < info.vertex_count; ++j) rod.directors.push_back(random_unit(random));
    frame.rods.push_back(rod);
  }
  frame.stats = {{"steps", 2}};
  return frame;
}

void check_same_directors(const Frame& read, const Frame& written) {
  REQUIRE(read.rods.size() == written.rods.size());
  for (std::size_t r = 0; r < read.rods.size(); ++r) {
    CAPTURE(r);
    REQUIRE(read.rods[r].directors.size() == written.rods[r].directors.size());
    for (std::size_t j = 0; j < read.rods[r].directors.size(); ++j)
      CHECK(read.rods[r].directors[j] == written.rods[r].directors[j]);  // bit for bit
    for (std::size_t i = 0; i < read.rods[r].positions.size(); ++i)
      CHECK(read.rods[r].positions[i] == written.rods[r].positions[i]);
  }
}

std::string read_text(const std::string& path) {
  std::ifstream stream(path, std::ios::binary);
  std::ostringstream text;
  text << stream.rdbuf();
  return text.str();
}

void write_text(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

}  // namespace

TEST_CASE("io directors round trip bit for bit in JSON, stored and compressed binary frames") {
  struct Layout {
    FrameLayout layout;
    NpzCompression compression;
  };
  for (const Layout& l : {Layout{FrameLayout::Json, NpzCompression::Stored}, Layout{FrameLayout::Npz, NpzCompression::Stored},
                          Layout{FrameLayout::Npz, NpzCompression::Deflated}}) {
    CAPTURE(static_cast<int>(l.layout));
    CAPTURE(static_cast<int>(l.compression));
    test::TempFolder folder("directors-round-trip");
    const std::string out = folder / "out";
    Manifest manifest = twisted_manifest();
    manifest.frame_layout = l.layout;
    std::mt19937_64 random(7);
    std::vector<Frame> written;
    {
      FrameWriterOptions options;
      options.manifest_interval_seconds = 0.0;
      options.npz_compression = l.compression;
      FrameWriter writer(out, manifest, options);
      for (int k = 0; k < 3; ++k) {
        written.push_back(twisted_frame(manifest, k, random));
        writer.write(written.back());
      }
      writer.finish("complete");
    }
    const OutputFolder read(out);
    CHECK(read.manifest().format == "bristle-frames/2");
    REQUIRE(read.manifest().rods.size() == 3);
    CHECK(read.manifest().rods[0].twist);
    CHECK_FALSE(read.manifest().rods[1].twist);
    CHECK(read.manifest().rods[2].twist);
    for (int k = 0; k < 3; ++k) check_same_directors(read.frame(k), written[k]);
    if (l.layout == FrameLayout::Json) {
      // Only the rods with twist carry the key; the manifest marks them.
      const nlohmann::json frame = nlohmann::json::parse(read_text(read.frame_path(1)));
      CHECK(frame["rods"][0]["directors"].size() == 4);
      CHECK_FALSE(frame["rods"][1].contains("directors"));
      const nlohmann::json m = nlohmann::json::parse(read_text(folder / "out/manifest.json"));
      CHECK(m["rods"][0]["twist"] == true);
      CHECK_FALSE(m["rods"][1].contains("twist"));
    }
  }
}

TEST_CASE("io a binary frame's directors array has a row per edge of every rod, zero without twist") {
  const Manifest manifest = twisted_manifest();
  std::mt19937_64 random(3);
  const Frame frame = twisted_frame(manifest, 0, random);
  const std::string bytes = frame_to_npz(frame, 3);
  const std::vector<NpzMember> members = read_npz(bytes);
  const NpzMember* directors = nullptr;
  for (const NpzMember& m : members)
    if (m.name == "directors") directors = &m;
  REQUIRE(directors != nullptr);
  CHECK(directors->array.shape == std::vector<std::int64_t>{4 + 2 + 1, 3});
  std::vector<double> values(7 * 3);
  std::memcpy(values.data(), directors->array.data.data(), values.size() * sizeof(double));
  for (int j = 0; j < 4; ++j)
    for (int k = 0; k < 3; ++k) CHECK(values[3 * j + k] == frame.rods[0].directors[j][k]);
  for (int k = 0; k < 6; ++k) CHECK(values[12 + k] == 0.0);  // "plain": no twist
  for (int k = 0; k < 3; ++k) CHECK(values[18 + k] == frame.rods[2].directors[0][k]);
}

TEST_CASE("io frames without twist stay version 1, byte for byte: a golden folder reads and rewrites identically") {
  // tests/golden/swing_3d was written by the version 1 writer, before directors existed (and
  // before frame_layout: its manifest has none).
  const std::string golden = std::string(test::kTestsDir) + "/golden/swing_3d";
  const OutputFolder old(golden);
  CHECK(old.manifest().format == "bristle-frames/1");
  CHECK_FALSE(old.manifest().has_twist());
  REQUIRE(old.frame_count() > 2);
  for (int k = 0; k < old.frame_count(); ++k) {
    const Frame frame = old.frame(k);
    for (const RodFrame& rod : frame.rods) CHECK(rod.directors.empty());
    // The writer gives the same bytes back: no directors key, nothing else changed.
    CHECK(frame_to_text(frame, 3) == read_text(old.frame_path(k)));
  }
  CHECK(std::string(manifest_format(old.manifest())) == "bristle-frames/1");
  // A binary frame of a scene without twist holds no directors array.
  const std::vector<NpzMember> members = read_npz(frame_to_npz(old.frame(1), 3));
  for (const NpzMember& m : members) CHECK(m.name != "directors");
}

TEST_CASE("io damaged or missing directors are refused, naming the file and the place") {
  test::TempFolder folder("directors-damaged");
  const Manifest manifest = twisted_manifest();
  std::mt19937_64 random(11);
  test::write_complete_run(folder / "json", manifest, 2, [&](int k) { return twisted_frame(manifest, k, random); });
  const std::string frame_path = folder / "json/frames/000001.json";
  const std::string original = read_text(frame_path);

  nlohmann::json frame = nlohmann::json::parse(original);
  frame["rods"][0].erase("directors");
  write_text(frame_path, frame.dump());
  std::string error = test::output_refusal(folder / "json");
  CHECK(error.find("000001.json") != std::string::npos);
  CHECK(error.find("/rods/0: missing key \"directors\"") != std::string::npos);

  frame = nlohmann::json::parse(original);
  frame["rods"][0]["directors"][2] = {0.5, 0.0, 0.0};
  write_text(frame_path, frame.dump());
  error = test::output_refusal(folder / "json");
  CHECK(error.find("/rods/0/directors/2: expected a unit vector") != std::string::npos);

  frame = nlohmann::json::parse(original);
  frame["rods"][2]["directors"] = nlohmann::json::array();
  write_text(frame_path, frame.dump());
  error = test::output_refusal(folder / "json");
  CHECK(error.find("/rods/2/directors: expected an array of 1 vectors") != std::string::npos);

  // A version 1 manifest cannot have rods with twist; a version 2 manifest reads.
  write_text(frame_path, original);
  const std::string manifest_path = folder / "json/manifest.json";
  const std::string manifest_text = read_text(manifest_path);
  nlohmann::json m = nlohmann::json::parse(manifest_text);
  m["format"] = "bristle-frames/1";
  write_text(manifest_path, m.dump());
  error = test::output_refusal(folder / "json");
  CHECK(error.find("/rods/0/twist: a rod with twist needs format \"bristle-frames/2\"") != std::string::npos);
  m["format"] = "bristle-frames/3";
  write_text(manifest_path, m.dump());
  error = test::output_refusal(folder / "json");
  CHECK(error.find("/format: expected \"bristle-frames/1\" or \"bristle-frames/2\"") != std::string::npos);
  write_text(manifest_path, manifest_text);
  CHECK(test::output_refusal(folder / "json") == "");

  // Binary: a zero director of a rod with twist, and the array missing.
  Manifest binary = manifest;
  binary.frame_layout = FrameLayout::Npz;
  Frame bad = twisted_frame(binary, 0, random);
  bad.rods[2].directors[0] = Vec3::Zero();
  const Manifest read_as = OutputFolder(folder / "json").manifest();
  Manifest npz_manifest = read_as;
  npz_manifest.frame_layout = FrameLayout::Npz;
  CHECK_THROWS_WITH_AS(frame_from_npz(frame_to_npz(bad, 3), npz_manifest, "f.npz"),
                       doctest::Contains("directors: row 6 (rod \"short\" edge 0): expected a finite unit vector"),
                       OutputError);
  Frame none = twisted_frame(binary, 0, random);
  for (RodFrame& rod : none.rods) rod.directors.clear();
  CHECK_THROWS_WITH_AS(frame_from_npz(frame_to_npz(none, 3), npz_manifest, "f.npz"),
                       doctest::Contains("directors: missing array"), OutputError);
}

TEST_CASE("io the frame writer refuses directors that do not match the manifest's rods") {
  test::TempFolder folder("directors-writer");
  const Manifest manifest = twisted_manifest();
  FrameWriter writer(folder / "out", manifest, {0.0});
  std::mt19937_64 random(5);
  Frame frame = twisted_frame(manifest, 0, random);
  frame.rods[0].directors.pop_back();
  CHECK_THROWS_WITH_AS(writer.write(frame), doctest::Contains("rod \"curl\": 3 material directors, expected 4"),
                       OutputError);
  frame = twisted_frame(manifest, 0, random);
  frame.rods[1].directors.push_back(Vec3::UnitX());
  CHECK_THROWS_WITH_AS(writer.write(frame), doctest::Contains("rod \"plain\": 1 material directors, expected 0"),
                       OutputError);
}

TEST_CASE("io vertex directors: means of the edges' directors, perpendicular to the vertex tangent") {
  const std::vector<Vec3> positions = {Vec3(0, 0, 0), Vec3(1, 0, 0), Vec3(2, 0, 0), Vec3(2, 1, 0)};
  const std::vector<Vec3> edge = {Vec3(0, 1, 0), Vec3(0, 0, 1), Vec3(0, 0, 1)};
  const std::vector<Vec3> v = vertex_directors(positions, edge);
  REQUIRE(v.size() == 4);
  CHECK((v[0] - Vec3(0, 1, 0)).norm() < 1e-15);
  CHECK((v[1] - Vec3(0, 1, 1).normalized()).norm() < 1e-15);
  CHECK((v[3] - Vec3(0, 0, 1)).norm() < 1e-15);
  // At the corner (tangent (1, 1, 0) / sqrt 2) the mean z is already perpendicular.
  CHECK((v[2] - Vec3(0, 0, 1)).norm() < 1e-15);
  CHECK(vertex_directors(positions, {}).empty());
}

TEST_CASE("runner directors: the reference director turned by each edge's twist angle") {
  // A straight rod along x whose material normal is +y: at rest m1 = y on every edge; an edge
  // turned by theta about x has m1 = cos(theta) y + sin(theta) z.
  Material nylon;
  nylon.density = 1140.0;
  nylon.radius = 1e-4;
  nylon.youngs_modulus = 3e9;
  for (int n : {2, 3, 6}) {
    CAPTURE(n);
    std::vector<Vec3> vertices;
    for (int i = 0; i < n; ++i) vertices.push_back(Vec3(0.01 * i, 0.0, 0.0));
    Model model;
    model.dimension = 3;
    model.rods.push_back(make_rod("rod", nylon, vertices, {0}, RestShape::Straight, 3));
    model.rods[0].twist = true;
    model.rods[0].material_normal = Vec3(0.3, 1.0, 0.0);  // made perpendicular to the edge
    model.finalize();
    State state = initial_state(model);
    std::vector<Vec3> m1 = rod_material_directors(model, state, 0);
    REQUIRE(static_cast<int>(m1.size()) == n - 1);
    for (const Vec3& m : m1) CHECK((m - Vec3::UnitY()).norm() < 1e-15);
    for (int j = 0; j + 1 < n; ++j) state.positions[model.layout.edge_dof(0, j)] = 0.4 * j - 0.3;
    m1 = rod_material_directors(model, state, 0);
    for (int j = 0; j + 1 < n; ++j) {
      const double theta = 0.4 * j - 0.3;
      CHECK((m1[j] - Vec3(0.0, std::cos(theta), std::sin(theta))).norm() < 1e-15);
    }
    // The frame written for that state carries them; a rod without twist would carry none.
    const Frame frame = make_frame(model, state, 0);
    CHECK(frame.rods[0].directors == m1);
  }
}

TEST_CASE("runner directors follow the integrator's committed frames: unit, perpendicular to their edges") {
  // A helix of 2 turns hanging from its clamped top: its edges turn as it swings, so the
  // reference frames are carried step after step.
  Material hair;
  hair.density = 1300.0;
  hair.radius = 2e-4;
  hair.youngs_modulus = 3e9;
  std::vector<Vec3> vertices;
  for (int k = 0; k <= 30; ++k) {
    const double phi = 2.0 * kPi * 2.0 * k / 30.0;
    vertices.push_back(Vec3(0.005 * std::cos(phi), -0.005 * phi / (2.0 * kPi), 0.005 * std::sin(phi)));
  }
  Model model;
  model.dimension = 3;
  model.gravity = Vec3(9.81, -9.81, 0.0);
  model.rods.push_back(make_rod("curl", hair, vertices, {0, 1}, RestShape::Initial, 3));
  model.rods[0].twist = true;
  model.finalize();
  State state = initial_state(model);
  ImplicitEuler integrator(model, SolverSettings{});
  const ElementTable<BendTwistTerm>* table = &integrator.assembler().table<BendTwistTerm>();
  // At rest the committed frames are the rest frames.
  CHECK(rod_material_directors(model, state, 0, table) == rod_material_directors(model, state, 0));
  for (int s = 0; s < 20; ++s) REQUIRE(integrator.step(state, 1e-3).ok);
  const std::vector<Vec3> m1 = rod_material_directors(model, state, 0, table);
  REQUIRE(m1.size() == 30);
  double moved = 0.0;
  for (int j = 0; j < 30; ++j) {
    const Vec3 edge = (vertex_position(model, state.positions, 0, j + 1) - vertex_position(model, state.positions, 0, j))
                          .normalized();
    CHECK(std::abs(m1[j].norm() - 1.0) < 1e-12);
    CHECK(std::abs(m1[j].dot(edge)) < 1e-12);
    moved = std::max(moved, (m1[j] - rod_material_directors(model, initial_state(model), 0)[j]).norm());
  }
  CHECK(moved > 1e-3);  // the rod did move
}

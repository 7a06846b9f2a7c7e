#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <regex>
#include <sstream>

#include "bristle/export/export_error.hpp"
#include "bristle/export/usd.hpp"
#include "export/export_test_support.hpp"

using namespace bristle;

namespace {

// The body of `<decl> = { ... }` (the time samples of one attribute).
std::string samples_block(const std::string& text, const std::string& decl) {
  const std::size_t at = text.find(decl + " = {");
  REQUIRE(at != std::string::npos);
  const std::size_t open = text.find('{', at) + 1;
  const std::size_t close = text.find("\n        }", open);
  REQUIRE(close != std::string::npos);
  return text.substr(open, close - open);
}

// "k: [ ... ]," lines -> (k, numbers inside the brackets, parentheses ignored).
std::vector<std::pair<int, std::vector<float>>> read_samples(const std::string& block) {
  std::vector<std::pair<int, std::vector<float>>> out;
  std::istringstream in(block);
  std::string line;
  while (std::getline(in, line)) {
    if (line.find_first_not_of(' ') == std::string::npos) continue;
    const std::size_t colon = line.find(':');
    REQUIRE(colon != std::string::npos);
    const int code = std::stoi(line.substr(0, colon));
    const std::size_t open = line.find('[', colon), close = line.rfind(']');
    REQUIRE(open != std::string::npos);
    CHECK(line.substr(close) == "],");
    std::string body = line.substr(open + 1, close - open - 1);
    for (char& c : body) {
      if (c == '(' || c == ')' || c == ',') c = ' ';
    }
    std::istringstream nums(body);
    std::vector<float> values;
    std::string t;
    while (nums >> t) values.push_back(std::stof(t));
    out.emplace_back(code, values);
  }
  return out;
}

std::string metadata(const std::string& text, const std::string& key) {
  const std::regex re("\\n    " + key + " = ([^\\n]*)\\n");
  std::smatch m;
  REQUIRE(std::regex_search(text, m, re));
  return m[1];
}

}  // namespace

TEST_CASE("export usd: one BasisCurves prim with time-sampled points and widths") {
  const test::SampleOutput s = test::sample_output();
  const std::string path = test::export_scratch_dir("usd") + "/out.usda";
  write_usda(s.manifest, s.frames, path);
  const std::string text = test::read_text(path);

  CHECK(text.rfind("#usda 1.0\n", 0) == 0);
  CHECK(metadata(text, "startTimeCode") == "0");
  CHECK(metadata(text, "endTimeCode") == "2");
  CHECK(metadata(text, "timeCodesPerSecond") == "100");
  CHECK(metadata(text, "framesPerSecond") == "100");
  CHECK(metadata(text, "upAxis") == "\"Y\"");
  CHECK(metadata(text, "metersPerUnit") == "1");
  CHECK(metadata(text, "defaultPrim") == "\"Bristle\"");
  CHECK(text.find("def Xform \"Bristle\"") != std::string::npos);
  CHECK(text.find("def BasisCurves \"Rods\"") != std::string::npos);
  CHECK(text.find("uniform token type = \"linear\"") != std::string::npos);
  CHECK(text.find("int[] curveVertexCounts = [3, 4]") != std::string::npos);
  CHECK(text.find("custom uniform string[] bristle:rodNames = [\"left\", \"right one\"]") !=
        std::string::npos);
  CHECK(text.find("float[] widths (\n            interpolation = \"vertex\"\n        )") !=
        std::string::npos);

  // Braces and brackets balance.
  CHECK(std::count(text.begin(), text.end(), '{') == std::count(text.begin(), text.end(), '}'));
  CHECK(std::count(text.begin(), text.end(), '[') == std::count(text.begin(), text.end(), ']'));
  CHECK(std::count(text.begin(), text.end(), '(') == std::count(text.begin(), text.end(), ')'));

  const auto points = read_samples(samples_block(text, "point3f[] points.timeSamples"));
  REQUIRE(points.size() == 3);
  for (std::size_t k = 0; k < 3; ++k) {
    CHECK(points[k].first == static_cast<int>(k));
    const auto& values = points[k].second;
    REQUIRE(values.size() == 21);
    std::size_t i = 0;
    for (const RodFrame& rod : s.frames[k].rods) {
      for (const Vec3& p : rod.positions) {
        for (int c = 0; c < 3; ++c) CHECK(values[i++] == static_cast<float>(p[c]));  // exact
      }
    }
  }
  const auto widths = read_samples(samples_block(text, "float[] widths.timeSamples"));
  REQUIRE(widths.size() == 3);
  for (const auto& w : widths) {
    REQUIRE(w.second.size() == 7);
    CHECK(w.second[0] == static_cast<float>(2.0 * s.manifest.rods[0].radius));
    CHECK(w.second[6] == static_cast<float>(2.0 * s.manifest.rods[1].radius));
  }
  const auto extents = read_samples(samples_block(text, "float3[] extent.timeSamples"));
  REQUIRE(extents.size() == 3);
  CHECK(extents[0].second.size() == 6);
}

TEST_CASE("export usd: display colours follow the scene's render palette") {
  test::SampleOutput s = test::sample_output();
  s.manifest.scene = {{"render", {{"colors", {"#ff0000", "#0000ff"}}}}};
  const std::string path = test::export_scratch_dir("usd_colors") + "/out.usda";
  write_usda(s.manifest, s.frames, path);
  CHECK(test::read_text(path).find("color3f[] primvars:displayColor = [(1, 0, 0), (0, 0, 1)]") !=
        std::string::npos);
}

TEST_CASE("export usd: identifiers, frames that do not match, unwritable paths") {
  CHECK(usd_identifier("my scene-1") == "my_scene_1");
  CHECK(usd_identifier("3d") == "_3d");
  CHECK(usd_identifier("") == "_");
  test::SampleOutput s = test::sample_output();
  CHECK_THROWS_AS(write_usda(s.manifest, s.frames, "/nonexistent-dir/x.usda"), ExportError);
  s.frames[1].rods[0].positions.pop_back();
  s.frames[1].rods[0].velocities.pop_back();
  const std::string path = test::export_scratch_dir("usd_bad") + "/bad.usda";
  CHECK_THROWS_AS(write_usda(s.manifest, s.frames, path), ExportError);
  // Nothing half-written is left: neither the layer nor its temporary file.
  CHECK_FALSE(std::filesystem::exists(path));
  CHECK(std::filesystem::is_empty(std::filesystem::path(path).parent_path()));
}

TEST_CASE("export usd: colliders are prims placed by a transform, time-sampled when a handle moves them") {
  const test::SampleOutput s = test::sample_output();
  ExportColliders colliders;
  Collider sphere;
  sphere.type = ColliderType::Sphere;
  sphere.center = Vec3(1.0, 2.0, 3.0);
  sphere.radius = 0.5;
  Collider box;
  box.type = ColliderType::Box;
  box.center = Vec3(0.0, -1.0, 0.0);
  box.half_extents = Vec3(0.5, 0.25, 2.0);
  Collider capsule;
  capsule.type = ColliderType::Capsule;
  capsule.a = Vec3(0.0, 0.0, 1.0);
  capsule.b = Vec3(0.0, 0.0, 3.0);
  capsule.radius = 0.25;
  Collider plane;  // y = 0, normal +y
  colliders.rest = {sphere, box, capsule, plane};
  Handle slide;
  slide.name = "slide";
  slide.keys = {HandleKey{0.0}, HandleKey{0.02, Vec3(4.0, 0.0, 0.0)}};
  colliders.handles = {slide};
  colliders.handle_of = {0, -1, -1, -1};
  const std::string path = test::export_scratch_dir("usd_colliders") + "/out.usda";
  write_usda(s.manifest, s.frames, path, colliders);
  const std::string text = test::read_text(path);

  CHECK(text.find("def Xform \"Colliders\"") != std::string::npos);
  CHECK(std::count(text.begin(), text.end(), '{') == std::count(text.begin(), text.end(), '}'));
  CHECK(std::count(text.begin(), text.end(), '(') == std::count(text.begin(), text.end(), ')'));
  const auto prim = [&](const std::string& head) {
    const std::size_t at = text.find(head);
    REQUIRE(at != std::string::npos);
    return text.substr(at, text.find("\n        }\n", at) - at);
  };
  // The sphere slides along x with its handle: one transform per frame, translation last.
  const std::string s0 = prim("def Sphere \"collider_0_sphere\"");
  CHECK(s0.find("double radius = 0.5") != std::string::npos);
  CHECK(s0.find("uniform token[] xformOpOrder = [\"xformOp:transform\"]") != std::string::npos);
  // "k: ( (..), (..), (..), (..) )," lines, up to the closing brace of the samples.
  const std::string decl = "matrix4d xformOp:transform.timeSamples = {\n";
  const std::size_t open = s0.find(decl);
  REQUIRE(open != std::string::npos);
  std::istringstream lines(s0.substr(open + decl.size(), s0.find("\n            }", open) - open - decl.size()));
  std::string line;
  std::size_t k = 0;
  while (std::getline(lines, line)) {
    const std::size_t colon = line.find(':');
    REQUIRE(colon != std::string::npos);
    CHECK(std::stoi(line.substr(0, colon)) == static_cast<int>(k));
    std::string body = line.substr(colon + 1);
    for (char& ch : body) {
      if (ch == '(' || ch == ')' || ch == ',') ch = ' ';
    }
    std::istringstream numbers(body);
    std::vector<double> m;
    double x;
    while (numbers >> x) m.push_back(x);
    REQUIRE(k < 3);
    const std::vector<double> expected = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 1.0 + 4.0 * s.frames[k].time / 0.02, 2, 3, 1};
    CHECK(m == expected);
    ++k;
  }
  CHECK(k == 3);
  // The box is a cube of size 2 scaled by its half extents; it does not move.
  const std::string b = prim("def Cube \"collider_1_box\"");
  CHECK(b.find("double size = 2") != std::string::npos);
  CHECK(b.find("matrix4d xformOp:transform = ( (0.5, 0, 0, 0), (0, 0.25, 0, 0), (0, 0, 2, 0), (0, -1, 0, 1) )") !=
        std::string::npos);
  CHECK(b.find("timeSamples") == std::string::npos);
  // The capsule: axis z, its height and radius, at the segment's midpoint.
  const std::string c = prim("def Capsule \"collider_2_capsule\"");
  CHECK(c.find("uniform token axis = \"Z\"") != std::string::npos);
  CHECK(c.find("double height = 2") != std::string::npos);
  CHECK(c.find("double radius = 0.25") != std::string::npos);
  CHECK(c.find("(0, 0, 2, 1) )") != std::string::npos);
  // The plane: one quad of a mesh.
  const std::string p = prim("def Mesh \"collider_3_plane\"");
  CHECK(p.find("int[] faceVertexCounts = [4]") != std::string::npos);
  CHECK(p.find("int[] faceVertexIndices = [0, 1, 2, 3]") != std::string::npos);
  CHECK(p.find("primvars:displayColor") != std::string::npos);
}

TEST_CASE("export usd: rods with twist orient the curves by per-vertex normals, their material director m1") {
  test::SampleOutput s = test::sample_output();
  const std::string dir = test::export_scratch_dir("usd_twist");
  // Without twist: no normals, the file as before.
  write_usda(s.manifest, s.frames, dir + "/plain.usda");
  CHECK(test::read_text(dir + "/plain.usda").find("normals") == std::string::npos);

  // "right one" (4 vertices along x) twists: edge j of frame k turned by 0.3 j + 0.1 k about x.
  s.manifest.rods[1].twist = true;
  for (Frame& f : s.frames)
    for (int j = 0; j < 3; ++j) {
      const double a = 0.3 * j + 0.1 * f.index;
      f.rods[1].directors.push_back(Vec3(0.0, std::cos(a), std::sin(a)));
    }
  write_usda(s.manifest, s.frames, dir + "/twist.usda");
  const std::string text = test::read_text(dir + "/twist.usda");
  CHECK(text.find("        normal3f[] normals (\n            interpolation = \"vertex\"\n        )\n") !=
        std::string::npos);
  const auto samples = read_samples(samples_block(text, "normal3f[] normals.timeSamples"));
  REQUIRE(samples.size() == 3);
  for (const auto& [code, values] : samples) {
    CAPTURE(code);
    REQUIRE(values.size() == 3 * 7);  // one normal per vertex of both rods
    for (int v = 0; v < 7; ++v) {
      const Vec3 n(values[3 * v], values[3 * v + 1], values[3 * v + 2]);
      CHECK(n.norm() == doctest::Approx(1.0).epsilon(1e-6));
      CHECK(std::abs(n.x()) < 1e-3);  // perpendicular to the rods (nearly along x)
    }
    // The twisted rod's vertices 0 and 3 take their edge's director; vertex 1 the mean of
    // edges 0 and 1 (angles 0.1 k and 0.3 + 0.1 k: the mean angle).
    const auto normal = [&](int v) { return Vec3(values[3 * v], values[3 * v + 1], values[3 * v + 2]); };
    const auto at = [](double a) { return Vec3(0.0, std::cos(a), std::sin(a)); };
    CHECK((normal(3) - at(0.1 * code)).norm() < 1e-3);
    CHECK((normal(4) - at(0.15 + 0.1 * code)).norm() < 1e-3);
    CHECK((normal(6) - at(0.6 + 0.1 * code)).norm() < 1e-3);
  }
}

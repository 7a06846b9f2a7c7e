#include <doctest/doctest.h>

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

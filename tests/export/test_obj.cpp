#include <doctest/doctest.h>

#include <sstream>

#include "bristle/export/export_error.hpp"
#include "bristle/export/obj.hpp"
#include "export/export_test_support.hpp"

using namespace bristle;

namespace {

// What the test reads back from an OBJ file: objects, vertices, polylines.
struct ObjData {
  std::vector<std::string> objects;
  std::vector<Vec3> vertices;
  std::vector<std::vector<int>> lines;  // 1-based indices
};

ObjData read_obj(const std::string& text) {
  ObjData d;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::string tag;
    ls >> tag;
    if (tag == "o") {
      std::string name;
      ls >> name;
      d.objects.push_back(name);
    } else if (tag == "v") {
      std::string x, y, z;
      ls >> x >> y >> z;
      d.vertices.emplace_back(std::stod(x), std::stod(y), std::stod(z));
    } else if (tag == "l") {
      std::vector<int> idx;
      int i;
      while (ls >> i) idx.push_back(i);
      d.lines.push_back(idx);
    } else {
      REQUIRE((tag.empty() || tag[0] == '#'));
    }
  }
  return d;
}

}  // namespace

TEST_CASE("export obj: vertices round-trip exactly, one polyline per rod") {
  const test::SampleOutput s = test::sample_output();
  const std::string dir = test::export_scratch_dir("obj");
  for (const Frame& f : s.frames) {
    const std::string path = dir + "/f" + std::to_string(f.index) + ".obj";
    write_obj(s.manifest, f, path);
    const ObjData d = read_obj(test::read_text(path));
    REQUIRE(d.objects.size() == 2);
    CHECK(d.objects[0] == "left");
    CHECK(d.objects[1] == "right_one");
    REQUIRE(d.vertices.size() == 7);
    REQUIRE(d.lines.size() == 2);
    CHECK(d.lines[0] == std::vector<int>{1, 2, 3});
    CHECK(d.lines[1] == std::vector<int>{4, 5, 6, 7});
    std::size_t v = 0;
    for (const RodFrame& rod : f.rods) {
      for (const Vec3& p : rod.positions) {
        CHECK(d.vertices[v].x() == p.x());  // exact: shortest round-trip printing
        CHECK(d.vertices[v].y() == p.y());
        CHECK(d.vertices[v].z() == p.z());
        ++v;
      }
    }
  }
}

TEST_CASE("export obj: mismatched frames and unwritable paths are errors") {
  test::SampleOutput s = test::sample_output();
  CHECK_THROWS_AS(write_obj(s.manifest, s.frames[0], "/nonexistent-dir/x.obj"), ExportError);
  s.frames[0].rods.pop_back();
  std::ostringstream out;
  CHECK_THROWS_AS(write_obj(s.manifest, s.frames[0], out), ExportError);
}

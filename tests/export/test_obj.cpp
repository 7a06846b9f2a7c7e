#include <doctest/doctest.h>

#include <sstream>

#include "bristle/export/collider_mesh.hpp"
#include "bristle/export/export_error.hpp"
#include "bristle/export/obj.hpp"
#include "export/export_test_support.hpp"

using namespace bristle;

namespace {

// What the test reads back from an OBJ file: objects, vertices, line and face elements, and
// the object each element belongs to.
struct ObjData {
  std::vector<std::string> objects;
  std::vector<Vec3> vertices;
  std::vector<std::vector<int>> lines;  // 1-based indices
  std::vector<std::size_t> line_object;
  std::vector<std::vector<int>> faces;  // 1-based indices
  std::vector<std::size_t> face_object;
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
      d.line_object.push_back(d.objects.size() - 1);
    } else if (tag == "f") {
      std::vector<int> idx;
      int i;
      while (ls >> i) idx.push_back(i);
      d.faces.push_back(idx);
      d.face_object.push_back(d.objects.size() - 1);
    } else {
      REQUIRE((tag.empty() || tag[0] == '#'));
    }
  }
  return d;
}

}  // namespace

TEST_CASE("export obj: vertices round-trip exactly, one two-vertex line per segment") {
  const test::SampleOutput s = test::sample_output();
  const std::string dir = test::export_scratch_dir("obj");
  for (const Frame& f : s.frames) {
    const std::string path = dir + "/f" + std::to_string(f.index) + ".obj";
    write_obj(s.manifest, f, ExportColliders{}, path);
    const ObjData d = read_obj(test::read_text(path));
    REQUIRE(d.objects.size() == 2);
    CHECK(d.objects[0] == "left");
    CHECK(d.objects[1] == "right_one");
    REQUIRE(d.vertices.size() == 7);
    // Blender 3.4's importer keeps only the first edge of a longer `l` element (obj.hpp):
    // every element has exactly two vertices, one per segment, in the rod's object.
    REQUIRE(d.lines.size() == 5);
    CHECK(d.lines[0] == std::vector<int>{1, 2});
    CHECK(d.lines[1] == std::vector<int>{2, 3});
    CHECK(d.lines[2] == std::vector<int>{4, 5});
    CHECK(d.lines[3] == std::vector<int>{5, 6});
    CHECK(d.lines[4] == std::vector<int>{6, 7});
    CHECK(d.line_object == std::vector<std::size_t>{0, 0, 1, 1, 1});
    CHECK(d.faces.empty());
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
  CHECK_THROWS_AS(write_obj(s.manifest, s.frames[0], ExportColliders{}, "/nonexistent-dir/x.obj"), ExportError);
  s.frames[0].rods.pop_back();
  std::ostringstream out;
  CHECK_THROWS_AS(write_obj(s.manifest, s.frames[0], ExportColliders{}, out), ExportError);
}

TEST_CASE("export obj: colliders are named objects of triangles at the frame's pose") {
  const test::SampleOutput s = test::sample_output();
  ExportColliders colliders;
  Collider sphere;
  sphere.type = ColliderType::Sphere;
  sphere.center = Vec3(0.1, 0.2, 0.3);
  sphere.radius = 0.05;
  Collider plane;  // y = 0, normal +y
  colliders.rest = {plane, sphere};
  Handle lift;
  lift.name = "lift";
  lift.keys = {HandleKey{0.0}, HandleKey{0.02, Vec3(0.0, 1.0, 0.0)}};
  colliders.handles = {lift};
  colliders.handle_of = {-1, 0};

  for (const Frame& f : s.frames) {
    std::ostringstream out;
    write_obj(s.manifest, f, colliders, out);
    const ObjData d = read_obj(out.str());
    REQUIRE(d.objects.size() == 4);
    CHECK(d.objects[2] == "collider_0_plane");
    CHECK(d.objects[3] == "collider_1_sphere");
    CHECK(d.lines.size() == 5);  // the rods' segments, as before
    const TriangleMesh plane_mesh = collider_mesh_at(colliders, 0, f.time);
    const TriangleMesh sphere_mesh = collider_mesh_at(colliders, 1, f.time);
    REQUIRE(d.vertices.size() == 7 + plane_mesh.vertices.size() + sphere_mesh.vertices.size());
    REQUIRE(d.faces.size() == plane_mesh.triangles.size() + sphere_mesh.triangles.size());
    // Faces index the collider's own vertices (after the 7 of the rods), in its object.
    for (std::size_t t = 0; t < d.faces.size(); ++t) {
      const bool in_plane = t < plane_mesh.triangles.size();
      CHECK(d.face_object[t] == (in_plane ? 2u : 3u));
      const auto& expected = in_plane ? plane_mesh.triangles[t]
                                      : sphere_mesh.triangles[t - plane_mesh.triangles.size()];
      const int base = in_plane ? 8 : 8 + static_cast<int>(plane_mesh.vertices.size());
      CHECK(d.faces[t] == std::vector<int>{base + expected[0], base + expected[1], base + expected[2]});
    }
    // The sphere's vertices are where its handle puts it at this frame's time, exactly.
    Vec3 mean = Vec3::Zero();
    for (std::size_t v = 0; v < sphere_mesh.vertices.size(); ++v) {
      const Vec3& p = d.vertices[7 + plane_mesh.vertices.size() + v];
      CHECK(p == sphere_mesh.vertices[v]);
      mean += p;
    }
    mean /= static_cast<double>(sphere_mesh.vertices.size());
    CHECK((mean - (sphere.center + Vec3(0.0, f.time / 0.02, 0.0))).norm() < 1e-12);
  }
}

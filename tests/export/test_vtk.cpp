#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <regex>
#include <sstream>

#include "bristle/export/collider_mesh.hpp"
#include "bristle/export/export_error.hpp"
#include "bristle/export/vtk.hpp"
#include "bristle/io/frame_directors.hpp"
#include "export/export_test_support.hpp"

using namespace bristle;

namespace {

// A binary XML PolyData file read back by following the format (VTK File Formats, "XML File
// Formats", appended data): the XML up to <AppendedData>, then after its '_' the raw blocks,
// each a little-endian UInt64 byte count and the bytes. A DataArray's offset is its block's.
struct Vtp {
  std::string xml;     // everything before the appended bytes
  std::string blocks;  // the bytes after '_'

  // The attribute `key` of the first <DataArray ... Name="name" ...>.
  std::string attribute(const std::string& name, const std::string& key) const {
    const std::regex array("<DataArray[^>]*Name=\"" + name + "\"[^>]*>");
    std::smatch m;
    REQUIRE(std::regex_search(xml, m, array));
    const std::string tag = m[0];
    const std::regex attr(" " + key + "=\"([^\"]*)\"");
    std::smatch a;
    if (!std::regex_search(tag, a, attr)) return "";
    return a[1];
  }

  // The bytes of array `name` (its block without the count), checked against its type.
  std::string block(const std::string& name, std::size_t width) const {
    CHECK(attribute(name, "format") == "appended");
    const std::size_t offset = std::stoul(attribute(name, "offset"));
    REQUIRE(offset + 8 <= blocks.size());
    std::uint64_t bytes = 0;
    for (int i = 7; i >= 0; --i) bytes = (bytes << 8) | static_cast<unsigned char>(blocks[offset + i]);
    REQUIRE(offset + 8 + bytes <= blocks.size());
    CHECK(bytes % width == 0);
    return blocks.substr(offset + 8, bytes);
  }

  static std::uint64_t le(const std::string& b, std::size_t at, int width) {
    std::uint64_t x = 0;
    for (int i = width - 1; i >= 0; --i) x = (x << 8) | static_cast<unsigned char>(b[at + i]);
    return x;
  }

  std::vector<double> float64(const std::string& name) const {
    CHECK(attribute(name, "type") == "Float64");
    const std::string b = block(name, 8);
    std::vector<double> out(b.size() / 8);
    for (std::size_t i = 0; i < out.size(); ++i) {
      const std::uint64_t bits = le(b, 8 * i, 8);
      std::memcpy(&out[i], &bits, 8);
    }
    return out;
  }

  std::vector<std::int64_t> int64(const std::string& name) const {
    CHECK(attribute(name, "type") == "Int64");
    const std::string b = block(name, 8);
    std::vector<std::int64_t> out(b.size() / 8);
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = static_cast<std::int64_t>(le(b, 8 * i, 8));
    return out;
  }

  std::vector<std::int32_t> int32(const std::string& name) const {
    CHECK(attribute(name, "type") == "Int32");
    const std::string b = block(name, 4);
    std::vector<std::int32_t> out(b.size() / 4);
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = static_cast<std::int32_t>(le(b, 4 * i, 4));
    return out;
  }
};

Vtp read_vtp(const std::string& text) {
  const std::string open = "<AppendedData encoding=\"raw\">";
  const std::size_t at = text.find(open);
  REQUIRE(at != std::string::npos);
  const std::size_t underscore = text.find('_', at + open.size());
  REQUIRE(underscore != std::string::npos);
  // Only blanks between the tag and the '_'.
  CHECK(text.substr(at + open.size(), underscore - at - open.size()).find_first_not_of(" \n") == std::string::npos);
  const std::string close = "\n  </AppendedData>\n</VTKFile>\n";
  REQUIRE(text.size() >= close.size());
  CHECK(text.substr(text.size() - close.size()) == close);
  return Vtp{text.substr(0, at), text.substr(underscore + 1, text.size() - close.size() - underscore - 1)};
}

}  // namespace

TEST_CASE("export vtk: binary XML PolyData reads back to the same points, lines and arrays") {
  const test::SampleOutput s = test::sample_output();
  const std::string dir = test::export_scratch_dir("vtp");
  for (const Frame& f : s.frames) {
    const std::string path = dir + "/f" + std::to_string(f.index) + ".vtp";
    write_vtp(s.manifest, f, path);
    const Vtp v = read_vtp(test::read_text(path));
    CHECK(v.xml.find("<VTKFile type=\"PolyData\" version=\"1.0\" byte_order=\"LittleEndian\" "
                     "header_type=\"UInt64\">") != std::string::npos);
    CHECK(v.xml.find("NumberOfPoints=\"7\"") != std::string::npos);
    CHECK(v.xml.find("NumberOfLines=\"2\"") != std::string::npos);
    CHECK(v.xml.find("NumberOfPolys=\"0\"") != std::string::npos);
    // The time is inline text, shortest round-trip form.
    const std::regex time("Name=\"TimeValue\" NumberOfTuples=\"1\" format=\"ascii\">([^<]*)<");
    std::smatch m;
    REQUIRE(std::regex_search(v.xml, m, time));
    CHECK(std::stod(m[1]) == f.time);

    const std::vector<double> points = v.float64("Points");
    const std::vector<double> velocity = v.float64("velocity");
    const std::vector<double> radius = v.float64("radius");
    CHECK(v.attribute("Points", "NumberOfComponents") == "3");
    CHECK(v.attribute("velocity", "NumberOfComponents") == "3");
    REQUIRE(points.size() == 21);
    REQUIRE(velocity.size() == 21);
    REQUIRE(radius.size() == 7);
    std::size_t i = 0;
    for (std::size_t r = 0; r < f.rods.size(); ++r) {
      for (std::size_t j = 0; j < f.rods[r].positions.size(); ++j, ++i) {
        for (int c = 0; c < 3; ++c) {
          CHECK(points[3 * i + c] == f.rods[r].positions[j][c]);  // exact: the same doubles
          CHECK(velocity[3 * i + c] == f.rods[r].velocities[j][c]);
        }
        CHECK(radius[i] == s.manifest.rods[r].radius);
      }
    }
    CHECK(v.int64("connectivity") == std::vector<std::int64_t>{0, 1, 2, 3, 4, 5, 6});
    CHECK(v.int64("offsets") == std::vector<std::int64_t>{3, 7});
    CHECK(v.int32("rod_id") == std::vector<std::int32_t>{0, 1});
  }
}

TEST_CASE("export vtk: rods with twist add each vertex's material director; without twist the file is as before") {
  test::SampleOutput s = test::sample_output();
  const std::string dir = test::export_scratch_dir("vtp_twist");
  write_vtp(s.manifest, s.frames.front(), dir + "/plain.vtp");
  CHECK(test::read_text(dir + "/plain.vtp").find("material_director") == std::string::npos);
  // The second rod (4 vertices along x) twists: edge j turned by 0.3 j about x.
  s.manifest.rods[1].twist = true;
  Frame& f = s.frames.front();
  for (int j = 0; j < 3; ++j) f.rods[1].directors.push_back(Vec3(0.0, std::cos(0.3 * j), std::sin(0.3 * j)));
  write_vtp(s.manifest, f, dir + "/twist.vtp");
  const Vtp v = read_vtp(test::read_text(dir + "/twist.vtp"));
  CHECK(v.attribute("material_director", "NumberOfComponents") == "3");
  const std::vector<double> m1 = v.float64("material_director");
  REQUIRE(m1.size() == 21);
  const auto at = [&](int vertex) { return Vec3(m1[3 * vertex], m1[3 * vertex + 1], m1[3 * vertex + 2]); };
  for (int vertex = 0; vertex < 3; ++vertex) CHECK(at(vertex).norm() == 0.0);  // the rod without twist
  const std::vector<Vec3> expected = vertex_directors(f.rods[1].positions, f.rods[1].directors);
  REQUIRE(expected.size() == 4);
  for (int vertex = 0; vertex < 4; ++vertex) CHECK((at(3 + vertex) - expected[vertex]).norm() == 0.0);
  CHECK((at(3) - Vec3(0.0, 1.0, 0.0)).norm() < 1e-3);  // an end takes its edge's director
  // The other arrays are where they were.
  CHECK(v.float64("Points").size() == 21);
  CHECK(v.int32("rod_id") == std::vector<std::int32_t>{0, 1});
}

TEST_CASE("export vtk: colliders as triangles with their index, at the time asked") {
  ExportColliders colliders;
  Collider box;
  box.type = ColliderType::Box;
  box.half_extents = Vec3(1.0, 2.0, 3.0);
  Collider sphere;
  sphere.type = ColliderType::Sphere;
  sphere.radius = 0.5;
  colliders.rest = {box, sphere};
  Handle slide;
  slide.name = "slide";
  slide.keys = {HandleKey{0.0}, HandleKey{1.0, Vec3(4.0, 0.0, 0.0)}};
  colliders.handles = {slide};
  colliders.handle_of = {0, -1};

  std::ostringstream out;
  write_colliders_vtp(colliders, 0.25, out);
  const Vtp v = read_vtp(out.str());
  const TriangleMesh b = collider_mesh_at(colliders, 0, 0.25), s = collider_mesh_at(colliders, 1, 0.25);
  const std::size_t triangles = b.triangles.size() + s.triangles.size();
  const std::size_t points = b.vertices.size() + s.vertices.size();
  CHECK(v.xml.find("NumberOfPoints=\"" + std::to_string(points) + "\"") != std::string::npos);
  CHECK(v.xml.find("NumberOfPolys=\"" + std::to_string(triangles) + "\"") != std::string::npos);
  CHECK(v.xml.find("NumberOfLines=\"0\"") != std::string::npos);
  const std::vector<double> xyz = v.float64("Points");
  REQUIRE(xyz.size() == 3 * points);
  for (std::size_t i = 0; i < b.vertices.size(); ++i) {
    for (int c = 0; c < 3; ++c) CHECK(xyz[3 * i + c] == b.vertices[i][c]);
  }
  // The box slid a quarter of the way: its corners span x in [0, 2].
  double lo = xyz[0], hi = xyz[0];
  for (std::size_t i = 0; i < b.vertices.size(); ++i) {
    lo = std::min(lo, xyz[3 * i]);
    hi = std::max(hi, xyz[3 * i]);
  }
  CHECK(lo == 0.0);
  CHECK(hi == 2.0);
  const std::vector<std::int64_t> offsets = v.int64("offsets");
  REQUIRE(offsets.size() == triangles);
  CHECK(offsets.back() == static_cast<std::int64_t>(3 * triangles));
  const std::vector<std::int64_t> connectivity = v.int64("connectivity");
  REQUIRE(connectivity.size() == 3 * triangles);
  // The sphere's triangles index its own vertices, after the box's.
  CHECK(connectivity[3 * b.triangles.size()] == static_cast<std::int64_t>(b.vertices.size() + s.triangles[0][0]));
  const std::vector<std::int32_t> ids = v.int32("collider_id");
  REQUIRE(ids.size() == triangles);
  CHECK(ids.front() == 0);
  CHECK(ids[b.triangles.size() - 1] == 0);
  CHECK(ids[b.triangles.size()] == 1);
  CHECK(ids.back() == 1);
}

TEST_CASE("export vtk: the ParaView collection lists each part at each time") {
  const std::vector<PvdEntry> entries = {{0.0, 0, "a_000000.vtp"}, {0.0, 1, "a_colliders.vtp"},
                                         {0.01, 0, "a_000001.vtp"}, {0.01, 1, "a_colliders.vtp"}};
  std::ostringstream out;
  write_pvd(entries, out);
  const std::string pvd = out.str();
  CHECK(pvd.find("<VTKFile type=\"Collection\"") != std::string::npos);
  const std::regex dataset("<DataSet timestep=\"([^\"]*)\" group=\"\" part=\"([0-9]+)\" file=\"([^\"]*)\"/>");
  std::vector<PvdEntry> found;
  for (auto it = std::sregex_iterator(pvd.begin(), pvd.end(), dataset); it != std::sregex_iterator(); ++it) {
    found.push_back(PvdEntry{std::stod((*it)[1]), std::stoi((*it)[2]), (*it)[3]});
  }
  REQUIRE(found.size() == entries.size());
  for (std::size_t k = 0; k < entries.size(); ++k) {
    CHECK(found[k].time == entries[k].time);
    CHECK(found[k].part == entries[k].part);
    CHECK(found[k].file == entries[k].file);
  }
}

TEST_CASE("export vtk: file names are escaped in the collection") {
  std::ostringstream out;
  write_pvd({PvdEntry{0.5, 0, "a&b<c>.vtp"}}, out);
  CHECK(out.str().find("file=\"a&amp;b&lt;c&gt;.vtp\"") != std::string::npos);
}

TEST_CASE("export vtk: mismatched frames and unwritable paths are errors") {
  test::SampleOutput s = test::sample_output();
  CHECK_THROWS_AS(write_vtp(s.manifest, s.frames[0], "/nonexistent-dir/x.vtp"), ExportError);
  s.frames[0].rods.pop_back();
  std::ostringstream out;
  CHECK_THROWS_AS(write_vtp(s.manifest, s.frames[0], out), ExportError);
}

#include <doctest/doctest.h>

#include <regex>
#include <sstream>

#include "bristle/export/export_error.hpp"
#include "bristle/export/vtk.hpp"
#include "export/export_test_support.hpp"

using namespace bristle;

namespace {

// A legacy VTK POLYDATA file read back by following the format's keywords.
struct LegacyVtk {
  std::string version, title, encoding, dataset;
  double time = -1.0;
  std::vector<Vec3> points;
  std::vector<std::vector<long>> lines;
  std::vector<int> rod_id;
  std::vector<double> radius;
  std::vector<Vec3> velocity;
};

LegacyVtk read_legacy_vtk(const std::string& text) {
  LegacyVtk v;
  std::istringstream in(text);
  std::getline(in, v.version);
  std::getline(in, v.title);
  std::getline(in, v.encoding);
  std::getline(in, v.dataset);
  auto number = [&]() {
    std::string t;
    in >> t;
    return std::stod(t);
  };
  std::string key;
  std::size_t n = 0;
  while (in >> key) {
    if (key == "FIELD") {
      std::string name;
      int arrays;
      in >> name >> arrays;
      REQUIRE(arrays == 1);
      std::string array, type;
      int comps, tuples;
      in >> array >> comps >> tuples >> type;
      CHECK(array == "TIME");
      CHECK(comps == 1);
      CHECK(tuples == 1);
      CHECK(type == "double");
      v.time = number();
    } else if (key == "POINTS") {
      std::string type;
      in >> n >> type;
      CHECK(type == "double");
      for (std::size_t i = 0; i < n; ++i) {
        const double x = number(), y = number(), z = number();
        v.points.emplace_back(x, y, z);
      }
    } else if (key == "LINES") {
      std::size_t cells, size, total = 0;
      in >> cells >> size;
      for (std::size_t c = 0; c < cells; ++c) {
        long count;
        in >> count;
        std::vector<long> ids(static_cast<std::size_t>(count));
        for (long& id : ids) in >> id;
        v.lines.push_back(ids);
        total += 1 + ids.size();
      }
      CHECK(total == size);
    } else if (key == "CELL_DATA") {
      std::size_t cells;
      std::string scalars, name, type, lut, lut_name;
      int comps;
      in >> cells >> scalars >> name >> type >> comps >> lut >> lut_name;
      CHECK(scalars == "SCALARS");
      CHECK(name == "rod_id");
      CHECK(lut == "LOOKUP_TABLE");
      v.rod_id.resize(cells);
      for (int& id : v.rod_id) in >> id;
    } else if (key == "POINT_DATA") {
      std::size_t count;
      in >> count;
      CHECK(count == n);
    } else if (key == "SCALARS") {
      std::string name, type, lut, lut_name;
      int comps;
      in >> name >> type >> comps >> lut >> lut_name;
      CHECK(name == "radius");
      CHECK(comps == 1);
      for (std::size_t i = 0; i < n; ++i) v.radius.push_back(number());
    } else if (key == "VECTORS") {
      std::string name, type;
      in >> name >> type;
      CHECK(name == "velocity");
      for (std::size_t i = 0; i < n; ++i) {
        const double x = number(), y = number(), z = number();
        v.velocity.emplace_back(x, y, z);
      }
    } else {
      FAIL("unexpected keyword " << key);
    }
  }
  return v;
}

// The whitespace-separated numbers inside the DataArray with the given Name.
std::vector<double> vtp_array(const std::string& text, const std::string& name) {
  const std::size_t at = text.find("Name=\"" + name + "\"");
  REQUIRE(at != std::string::npos);
  const std::size_t open = text.find('>', at) + 1;
  const std::size_t close = text.find("</DataArray>", open);
  std::istringstream in(text.substr(open, close - open));
  std::vector<double> out;
  std::string t;
  while (in >> t) out.push_back(std::stod(t));
  return out;
}

}  // namespace

TEST_CASE("export vtk: legacy POLYDATA files read back to the same points and data") {
  const test::SampleOutput s = test::sample_output();
  const std::string dir = test::export_scratch_dir("vtk");
  for (const Frame& f : s.frames) {
    const std::string path = dir + "/f" + std::to_string(f.index) + ".vtk";
    write_vtk_legacy(s.manifest, f, path);
    const LegacyVtk v = read_legacy_vtk(test::read_text(path));
    CHECK(v.version == "# vtk DataFile Version 3.0");
    CHECK(v.title.size() < 256);
    CHECK(v.encoding == "ASCII");
    CHECK(v.dataset == "DATASET POLYDATA");
    CHECK(v.time == f.time);
    REQUIRE(v.points.size() == 7);
    REQUIRE(v.lines.size() == 2);
    CHECK(v.lines[0] == std::vector<long>{0, 1, 2});
    CHECK(v.lines[1] == std::vector<long>{3, 4, 5, 6});
    CHECK(v.rod_id == std::vector<int>{0, 1});
    REQUIRE(v.radius.size() == 7);
    REQUIRE(v.velocity.size() == 7);
    std::size_t i = 0;
    for (std::size_t r = 0; r < f.rods.size(); ++r) {
      for (std::size_t j = 0; j < f.rods[r].positions.size(); ++j, ++i) {
        CHECK(v.points[i] == f.rods[r].positions[j]);
        CHECK(v.velocity[i] == f.rods[r].velocities[j]);
        CHECK(v.radius[i] == s.manifest.rods[r].radius);
      }
    }
  }
}

TEST_CASE("export vtk: XML PolyData and the ParaView collection") {
  const test::SampleOutput s = test::sample_output();
  const std::string dir = test::export_scratch_dir("vtp");
  std::vector<PvdEntry> entries;
  for (const Frame& f : s.frames) {
    const std::string name = "f" + std::to_string(f.index) + ".vtp";
    write_vtp(s.manifest, f, dir + "/" + name);
    entries.push_back(PvdEntry{f.time, name});
    const std::string text = test::read_text(dir + "/" + name);
    CHECK(text.find("<VTKFile type=\"PolyData\"") != std::string::npos);
    CHECK(text.find("NumberOfPoints=\"7\"") != std::string::npos);
    CHECK(text.find("NumberOfLines=\"2\"") != std::string::npos);
    const std::vector<double> pts = vtp_array(text, "Points");
    REQUIRE(pts.size() == 21);
    std::size_t i = 0;
    for (const RodFrame& rod : f.rods) {
      for (const Vec3& p : rod.positions) {
        CHECK(pts[i] == p.x());
        CHECK(pts[i + 1] == p.y());
        CHECK(pts[i + 2] == p.z());
        i += 3;
      }
    }
    CHECK(vtp_array(text, "connectivity") == std::vector<double>{0, 1, 2, 3, 4, 5, 6});
    CHECK(vtp_array(text, "offsets") == std::vector<double>{3, 7});
    CHECK(vtp_array(text, "radius").size() == 7);
    CHECK(vtp_array(text, "velocity").size() == 21);
    CHECK(vtp_array(text, "TimeValue") == std::vector<double>{f.time});
  }
  write_pvd(entries, dir + "/series.pvd");
  const std::string pvd = test::read_text(dir + "/series.pvd");
  CHECK(pvd.find("<VTKFile type=\"Collection\"") != std::string::npos);
  const std::regex dataset("<DataSet timestep=\"([^\"]*)\" group=\"\" part=\"0\" file=\"([^\"]*)\"/>");
  std::vector<std::pair<double, std::string>> found;
  for (auto it = std::sregex_iterator(pvd.begin(), pvd.end(), dataset); it != std::sregex_iterator();
       ++it) {
    found.emplace_back(std::stod((*it)[1]), (*it)[2]);
  }
  REQUIRE(found.size() == 3);
  for (std::size_t k = 0; k < 3; ++k) {
    CHECK(found[k].first == s.frames[k].time);
    CHECK(found[k].second == "f" + std::to_string(k) + ".vtp");
  }
}

TEST_CASE("export vtk: file names are escaped in the collection") {
  std::ostringstream out;
  write_pvd({PvdEntry{0.5, "a&b<c>.vtp"}}, out);
  CHECK(out.str().find("file=\"a&amp;b&lt;c&gt;.vtp\"") != std::string::npos);
}

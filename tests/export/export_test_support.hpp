#pragma once
// A small output for the exporters' tests: 2 rods (3 and 4 vertices), 3 frames, with
// coordinates that do not print short (thirds, sevenths, tiny offsets) so a lossy printer
// shows. And a scratch directory under the build tree.

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "bristle/io/frame.hpp"
#include "test_paths.hpp"

namespace bristle::test {

struct SampleOutput {
  Manifest manifest;
  std::vector<Frame> frames;
};

inline SampleOutput sample_output() {
  SampleOutput s;
  Manifest& m = s.manifest;
  m.name = "two rods";
  m.dimension = 3;
  m.dt = 0.001;
  m.frame_dt = 0.01;
  m.frame_count = 3;
  m.rods = {RodInfo{"left", 3, 1.0 / 3.0 * 1e-3}, RodInfo{"right one", 4, 2.5e-4}};
  m.status = "complete";
  for (int k = 0; k < 3; ++k) {
    Frame f;
    f.index = k;
    f.time = 0.01 * k;
    for (std::size_t r = 0; r < m.rods.size(); ++r) {
      RodFrame rod;
      rod.name = m.rods[r].name;
      for (int i = 0; i < m.rods[r].vertex_count; ++i) {
        rod.positions.push_back(Vec3(0.001 * i + 1.0 / 7.0 * k, 1e-7 * std::sin(1.0 + i + k),
                                     static_cast<double>(r) / 3.0 - 1e-17 * i));
        rod.velocities.push_back(Vec3(k / 3.0, -1.0 / 9.0 * i, 1e-300 * (1 + static_cast<int>(r))));
      }
      f.rods.push_back(rod);
    }
    s.frames.push_back(f);
  }
  return s;
}

inline std::string export_scratch_dir(const std::string& name) {
  const std::filesystem::path dir = std::filesystem::path(kBinaryDir) / "test_output" / "export" / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

inline std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace bristle::test

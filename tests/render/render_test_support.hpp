#pragma once
// Small scenes for the renderer's tests: rods built in code, a scratch directory under the
// build tree.

#include <filesystem>
#include <string>

#include "bristle/io/frame.hpp"
#include "test_paths.hpp"

namespace bristle::test {

/// A fresh, empty directory under the build tree for one test.
inline std::string render_scratch_dir(const std::string& name) {
  const std::filesystem::path dir = std::filesystem::path(kBinaryDir) / "test_output" / "render" / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

/// Adds a straight rod from a to b with `vertices` vertices and radius r.
inline void add_straight_rod(Manifest& m, Frame& f, const std::string& name, const Vec3& a,
                             const Vec3& b, int vertices, double r) {
  RodFrame rod;
  rod.name = name;
  for (int i = 0; i < vertices; ++i) {
    const double s = static_cast<double>(i) / (vertices - 1);
    rod.positions.push_back(a + s * (b - a));
    rod.velocities.push_back(Vec3::Zero());
  }
  f.rods.push_back(rod);
  m.rods.push_back(RodInfo{name, vertices, r});
}

inline Manifest empty_manifest(int dimension) {
  Manifest m;
  m.name = "test";
  m.dimension = dimension;
  m.dt = 0.001;
  m.frame_dt = 0.01;
  m.frame_count = 1;
  m.status = "complete";
  return m;
}

}  // namespace bristle::test

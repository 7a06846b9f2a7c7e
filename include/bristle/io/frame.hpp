#pragma once
/// One frame of an output folder in memory (interface.md section 3), independent of how it is
/// stored on disk. Frame writers and readers (io/), the renderer and exporters share it.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bristle/io/frame_layout.hpp"
#include "bristle/math/types.hpp"

namespace bristle {

struct RodFrame {
  std::string name;
  std::vector<Vec3> positions;   ///< [m]; z = 0 in 2D
  std::vector<Vec3> velocities;  ///< [m/s]
};

struct Frame {
  int index = 0;
  double time = 0.0;  ///< [s]
  std::vector<RodFrame> rods;  ///< in manifest order
  nlohmann::json stats = nlohmann::json::object();
};

struct RodInfo {
  std::string name;
  int vertex_count = 0;
  double radius = 0.0;  ///< [m]
};

/// The manifest of an output folder.
struct Manifest {
  std::string format = "bristle-frames/1";
  std::string name;
  int dimension = 3;
  double dt = 0.0;
  double frame_dt = 0.0;
  int frame_count = 0;
  std::vector<RodInfo> rods;
  /// How the frames are stored: "frame_layout" in the manifest, "json" when absent (folders
  /// written before binary frames existed).
  FrameLayout frame_layout = FrameLayout::Json;
  std::vector<std::string> frame_files;
  std::string status;  ///< "complete", "running", "interrupted" or "failed: <reason>"
  nlohmann::json scene;  ///< the scene as loaded, generators expanded
};

}  // namespace bristle

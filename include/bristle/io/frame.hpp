#pragma once
/// One frame of an output folder in memory (interface.md section 3), independent of how it is
/// stored on disk. Frame writers and readers (io/), the renderer and exporters share it.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bristle/io/frame_layout.hpp"
#include "bristle/math/types.hpp"

namespace bristle {

/// The format names of output folders (docs/output-format.md, "Format versions"): version 1
/// holds positions and velocities; version 2 adds the material directors of rods with twist.
/// A folder is written as version 2 only when one of its rods has twist, so folders without
/// twist stay byte for byte what version 1 wrote. Readers take both.
inline constexpr const char* kFramesFormat1 = "bristle-frames/1";
inline constexpr const char* kFramesFormat2 = "bristle-frames/2";

struct RodFrame {
  std::string name;
  std::vector<Vec3> positions;   ///< [m]; z = 0 in 2D
  std::vector<Vec3> velocities;  ///< [m/s]
  /// A rod with twist (RodInfo::twist, 3D only): the first material director m1 of each edge
  /// (unit, perpendicular to the edge; vertex_count - 1 of them). Empty for a rod without twist.
  std::vector<Vec3> directors;
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
  /// Whether the rod's edges carry twist: its frames then hold `directors` (format version 2).
  bool twist = false;
};

/// The manifest of an output folder.
struct Manifest {
  /// As read (kFramesFormat1 or 2). Writers ignore it: they write version 2 when a rod has
  /// twist and version 1 otherwise (manifest_format).
  std::string format = kFramesFormat1;
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

  bool has_twist() const {
    for (const RodInfo& rod : rods)
      if (rod.twist) return true;
    return false;
  }
};

/// The format a writer gives `manifest`: kFramesFormat2 when a rod has twist, else 1.
inline const char* manifest_format(const Manifest& manifest) {
  return manifest.has_twist() ? kFramesFormat2 : kFramesFormat1;
}

/// How far from unit length a director read from a frame may be: a frame holds unit vectors
/// to round-off, so anything further is damage.
inline constexpr double kDirectorUnitTolerance = 1e-6;

/// The number of edges of a rod of `vertex_count` vertices (0 for fewer than 2).
inline int edge_count_of(int vertex_count) { return vertex_count > 1 ? vertex_count - 1 : 0; }

}  // namespace bristle

#pragma once
// Shared checks of the exporters: a frame must match its manifest.

#include <string>

#include "bristle/export/export_error.hpp"
#include "bristle/io/frame.hpp"

namespace bristle::export_detail {

inline void check_frame(const Manifest& manifest, const Frame& frame) {
  if (frame.rods.size() != manifest.rods.size()) {
    throw ExportError("frame " + std::to_string(frame.index) + " has " +
                      std::to_string(frame.rods.size()) + " rods, the manifest " +
                      std::to_string(manifest.rods.size()));
  }
  for (std::size_t r = 0; r < frame.rods.size(); ++r) {
    const RodFrame& rod = frame.rods[r];
    if (!rod.velocities.empty() && rod.velocities.size() != rod.positions.size()) {
      throw ExportError("frame " + std::to_string(frame.index) + ", rod '" + rod.name + "': " +
                        std::to_string(rod.positions.size()) + " positions but " +
                        std::to_string(rod.velocities.size()) + " velocities");
    }
  }
}

inline std::size_t point_count(const Frame& frame) {
  std::size_t n = 0;
  for (const RodFrame& rod : frame.rods) n += rod.positions.size();
  return n;
}

}  // namespace bristle::export_detail

#pragma once
/// Export every frame of an output folder in one format, for `bristle export`. Frames come
/// from a loader, one at a time.

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "bristle/export/export_colliders.hpp"
#include "bristle/io/frame.hpp"

namespace bristle {

enum class ExportFormat { Obj, Vtk, Usd };

/// "obj", "vtk" or "usd" (also "usda"); throws ExportError otherwise.
ExportFormat parse_export_format(const std::string& name);

/// Writes into `out_dir` (which must exist), with stem = the manifest's name made safe for
/// file names ("bristle" when empty):
///   obj: <stem>_NNNNNN.obj per frame, rods and colliders
///   vtk: <stem>_NNNNNN.vtp per frame (the rods, binary XML PolyData); for colliders,
///        <stem>_colliders_NNNNNN.vtp per frame when a handle moves one, else one
///        <stem>_colliders.vtp; and <stem>.pvd listing them with their times (rods part 0,
///        colliders part 1)
///   usd: <stem>.usda, rods and colliders
/// Returns the paths written (the .pvd / .usda last). `progress(k)` is called after frame k.
std::vector<std::string> export_frames(const Manifest& manifest, int frame_count,
                                       const std::function<Frame(int)>& load, ExportFormat format,
                                       const std::string& out_dir, const ExportColliders& colliders = {},
                                       const std::function<void(int)>& progress = {});

/// Longest file-name stem: file names are at most 255 bytes, scene names have no limit.
inline constexpr std::size_t kLongestExportStem = 100;

/// The file-name stem for a manifest: its name with anything but [A-Za-z0-9._-] replaced by
/// '_', cut to kLongestExportStem bytes.
std::string export_stem(const Manifest& manifest);

}  // namespace bristle

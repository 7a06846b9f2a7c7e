#pragma once
/// Wavefront OBJ polylines, one file per frame.
///
/// Per rod, in manifest order: an object line `o <rod name>`, its vertices as `v x y z`, then
/// one polyline element `l i1 i2 ... in` with 1-based indices into all the `v` lines of the
/// file so far. Coordinates are written in the shortest form that reads back to the same
/// double. Blender's OBJ importer turns each rod into an object of loose edges (convert it to
/// a curve and give it a bevel depth to see it as a tube); see docs/export.md.

#include <iosfwd>
#include <string>

#include "bristle/io/frame.hpp"

namespace bristle {

/// Write `frame` as OBJ text to `out`.
void write_obj(const Manifest& manifest, const Frame& frame, std::ostream& out);

/// Write `frame` to the file `path`. Throws ExportError when it cannot be written or the
/// frame's rods do not match the manifest.
void write_obj(const Manifest& manifest, const Frame& frame, const std::string& path);

}  // namespace bristle

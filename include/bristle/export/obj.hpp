#pragma once
/// Wavefront OBJ, one file per frame: each rod as line segments, each collider as a triangle
/// mesh.
///
/// Per rod, in manifest order: an object line `o <rod name>`, its vertices as `v x y z`, then
/// one two-vertex line element `l i i+1` per segment, with 1-based indices into all the `v`
/// lines of the file so far. Then per collider an object `o collider_<i>_<type>` with its
/// vertices and `f a b c` triangles at the frame's pose (export/collider_mesh.hpp).
///
/// Why two-vertex lines rather than one polyline `l 1 2 ... n` per rod, which the format
/// allows: Blender 3.4's OBJ importer keeps only the first edge of a polyline element, so a
/// rod came in as a single segment; every reader we know of, Blender's included, keeps each
/// two-vertex element (docs/export.md, "OBJ", records the check). Coordinates are written in
/// the shortest form that reads back to the same double.

#include <iosfwd>
#include <string>

#include "bristle/export/export_colliders.hpp"
#include "bristle/io/frame.hpp"

namespace bristle {

/// Write `frame` (and the colliders at its time) as OBJ text to `out`.
void write_obj(const Manifest& manifest, const Frame& frame, const ExportColliders& colliders,
               std::ostream& out);

/// Write `frame` to the file `path`, whole. Throws ExportError when it cannot be written or
/// the frame's rods do not match the manifest.
void write_obj(const Manifest& manifest, const Frame& frame, const ExportColliders& colliders,
               const std::string& path);

}  // namespace bristle

#pragma once
/// One USD ASCII layer (.usda) holding the whole animation as a BasisCurves prim.
///
///     #usda 1.0
///     ( defaultPrim = "Bristle", startTimeCode = 0, endTimeCode = N - 1,
///       timeCodesPerSecond = 1 / frame_dt, framesPerSecond = 1 / frame_dt,
///       upAxis = "Y", metersPerUnit = 1 )
///     def Xform "Bristle" (kind = "component") {
///         def BasisCurves "Rods" {
///             uniform token type = "linear"
///             uniform token wrap = "nonperiodic"
///             int[] curveVertexCounts = [n0, n1, ...]           (one curve per rod)
///             point3f[] points.timeSamples = { k: [(x, y, z), ...], ... }
///             float[] widths (interpolation = "vertex")
///             float[] widths.timeSamples = { k: [2 r, ...], ... }   (diameters [m])
///             float3[] extent.timeSamples = { k: [(min), (max)], ... }
///             normal3f[] normals (interpolation = "vertex")         (rods with twist only:
///             normal3f[] normals.timeSamples = { k: [(x, y, z), ...], ... }   oriented ribbons)
///             color3f[] primvars:displayColor (interpolation = "uniform") = [...]
///             custom uniform string[] bristle:rodNames = [...]
///         }
///         def Xform "Colliders" {                (when the scene has colliders)
///             def Sphere "collider_0_sphere" { double radius, extent }
///             def Capsule "collider_1_capsule" { axis = "Z", height = |b - a|, radius }
///             def Cube "collider_2_box" { size = 2, scaled by the half extents }
///             def Mesh "collider_3_plane" { one square (export/collider_mesh.hpp) }
///             each with primvars:displayColor (the renderer's collider colour) and
///             matrix4d xformOp:transform, time-sampled per frame for a collider a handle moves
///         }
///     }
/// Time code k is frame k, so frame k is shown at k * frame_dt seconds. Points and widths are
/// single precision (the schema's point3f and float), written with 9 significant digits so
/// each float reads back exactly.
///
/// When a rod has twist (format version 2), the curves get per-vertex normals: the USD way to
/// orient curves drawn as ribbons. A rod with twist's normals are its material director m1 at
/// each vertex (io/frame_directors.hpp); a rod without twist in the same scene has no material
/// frame, and gets the twist-free (parallel-transported) normals that follow its shape.
/// Scenes without twist write no normals (the file is as before).

#include <fstream>
#include <string>
#include <vector>

#include "bristle/export/export_colliders.hpp"
#include "bristle/io/frame.hpp"

namespace bristle {

/// Writes a .usda file frame by frame: the points of each frame are written as they come;
/// the small per-frame extents are kept and written at the end.
class UsdaWriter {
 public:
  /// Opens `path` and writes the layer header for frames 0 .. frame_count - 1, with
  /// `colliders` as prims. Throws ExportError when the file cannot be opened.
  UsdaWriter(const std::string& path, const Manifest& manifest, int frame_count,
             ExportColliders colliders = {});
  ~UsdaWriter();
  UsdaWriter(const UsdaWriter&) = delete;
  UsdaWriter& operator=(const UsdaWriter&) = delete;

  /// Append the next frame (its index is its time code).
  void add_frame(const Frame& frame);
  /// Write the remaining attributes and move the file into place (it is written under a
  /// temporary name until then; a writer destroyed unfinished removes it). Throws
  /// ExportError on write errors.
  void finish();

 private:
  void write_colliders();

  std::string path_;
  std::string temporary_;  ///< written first, renamed to path_ by finish()
  Manifest manifest_;
  std::ofstream out_;
  ExportColliders colliders_;
  Vec3 collider_color_ = Vec3::Zero();  ///< rgb in [0, 1]
  std::vector<int> codes_;
  std::vector<double> times_;  ///< [s], per frame added
  std::vector<std::pair<Vec3, Vec3>> extents_;
  std::string normals_;  ///< the normals' time samples, written by finish() (rods with twist)
  bool finished_ = false;
};

/// Write every frame of `frames` (and the colliders) as one .usda file.
void write_usda(const Manifest& manifest, const std::vector<Frame>& frames,
                const std::string& path, const ExportColliders& colliders = {});

/// A valid USD identifier from any text (letters, digits, '_'; not starting with a digit).
std::string usd_identifier(const std::string& text);

}  // namespace bristle

#pragma once
/// What the renderer draws for a scene's keyframed handles (model/handle.hpp,
/// docs/scene-format.md#handles): the colliders a handle carries, moved to their pose at the
/// frame's time (frames record rods only), and, for a handle that carries rods, the brush they
/// belong to: a ferrule clamping the rods' fixed vertices and a handle above it.
///
/// The brush is built from the frame itself, so it follows the rods exactly: its axis is the
/// mean direction from each handled rod's first free vertex to its root (the fixed end), its
/// centre the mean of the innermost fixed vertices, its radius that of the cylinder holding
/// every fixed vertex. The ferrule hides the clamped part of the bristles and reaches 0.4
/// bristle lengths above the clamp; the handle continues for 2.5 bristle lengths, tapering.

#include <vector>

#include <nlohmann/json.hpp>

#include "bristle/io/frame.hpp"
#include "bristle/model/collider.hpp"
#include "bristle/model/handle.hpp"

namespace bristle {

/// A handle as the renderer needs it: its motion, the rods it carries (manifest indices) with
/// their fixed vertices, and the colliders it carries (indices into the scene's colliders).
struct RenderHandle {
  Handle handle;
  std::vector<int> rods;
  std::vector<std::vector<int>> fixed;  ///< per rod of `rods`: its fixed vertex indices
  std::vector<int> colliders;
};

/// scene["handles"] as recorded in a manifest (the expanded form: name, rods, colliders,
/// pivot, interpolation, keys), resolved against the manifest's rods: a name selects that rod,
/// or else every bristle "<name>_<k>" of a brush entry. None when absent. Throws RenderError
/// naming the JSON pointer (/scene/handles/...) of a malformed entry.
std::vector<RenderHandle> handles_from_scene(const nlohmann::json& scene, const Manifest& manifest);

/// `rest` (the scene's colliders) with each handled one moved to its handle's pose at `time`.
std::vector<Collider> colliders_at(const std::vector<Collider>& rest,
                                   const std::vector<RenderHandle>& handles, double time);

/// A piece of a drawn brush: a tube along a polyline whose radius varies linearly along each
/// piece, with round ends (a capsule when it has two points).
struct BrushPart {
  enum class Kind { Ferrule, Handle } kind = Kind::Ferrule;
  std::vector<Vec3> points;    ///< [m]
  std::vector<double> radii;   ///< [m], one per point
};

/// The brush of every handle carrying rods, at the rods' positions in `frame` (manifest
/// order). A handle whose rods have no usable root (no fixed end vertex, or a root edge of
/// zero length) draws nothing.
std::vector<BrushPart> brush_parts(const Manifest& manifest, const Frame& frame,
                                   const std::vector<RenderHandle>& handles);

}  // namespace bristle

#pragma once
/// What the renderer reads from a manifest's "scene" (the scene as loaded): the colliders,
/// and the optional `render` block, so `bristle render OUT` needs nothing but the output
/// folder.
///
/// The `render` block (an extension of interface.md, documented in docs/rendering.md):
///   "render": {
///     "width": 1280, "height": 720,                 // [px]
///     "background": "#f5f3ef",                      // or [r, g, b] in [0, 1]
///     "colors": ["#e69f00", [0.2, 0.4, 0.8]],       // per-rod palette, cycled
///     "collider_color": "#9aa3ad",
///     "min_line_width": 1.5,                        // [px]
///     "time_stamp": true,
///     "fps": 30,                                    // video frame rate [1/s]
///     "camera": { "type": "perspective" | "orthographic",
///                 "position": [..], "target": [..], "up": [..],
///                 "fov": 30,                        // vertical, [deg], perspective
///                 "height": 0.1 }                   // visible height [m], orthographic
///   }
/// Every key is optional; what is missing is fitted (fit_camera) or defaulted.

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bristle/io/frame.hpp"
#include "bristle/model/collider.hpp"
#include "bristle/render/camera.hpp"
#include "bristle/render/handle_shapes.hpp"
#include "bristle/render/render_options.hpp"

namespace bristle {

/// Parse one collider object (interface.md section 1, plus `box`):
///   plane {point, normal}, sphere {center, radius}, capsule {a, b, radius},
///   box {center, half_extents, rotation: {axis, angle [rad]}}; `friction` and `handle`
/// are read when present, other keys are ignored (they belong to the simulation).
/// Vectors have 2 or 3 components (2D: z = 0; a 2D box's z half extent is 0 and its
/// rotation may be a bare angle about z). Throws RenderError naming `pointer`.
Collider parse_collider(const nlohmann::json& value, const std::string& pointer);

/// scene["colliders"] (none when absent). Pointers in errors start at /scene/colliders.
std::vector<Collider> colliders_from_scene(const nlohmann::json& scene);

/// The scene's `render` block, every field optional.
struct RenderBlock {
  std::optional<int> width, height;
  std::optional<Color> background;
  std::vector<Color> colors;
  std::optional<Color> collider_color;
  std::optional<double> min_line_width;
  std::optional<double> fps;  ///< video frames per second
  std::optional<bool> time_stamp;
  std::optional<ProjectionType> camera_type;
  std::optional<Vec3> position, target, up;
  std::optional<double> fov_deg;
  std::optional<double> ortho_height;
};

/// Read scene["render"]; an empty block when absent. Unknown keys are errors (a typo must not
/// be silently ignored); throws RenderError with the JSON pointer (/scene/render/...).
RenderBlock parse_render_block(const nlohmann::json& scene);

/// Apply the block's image settings (size, background, colours, line width, time stamp).
void apply_render_block(const RenderBlock& block, RenderOptions& options);

/// The camera for `bounds` seen in an image of the given aspect: fit_camera for the
/// dimension, then the block's camera fields on top. A given position keeps its view
/// direction; a missing target is the box centre; a missing orthographic height (or, with no
/// position, a missing distance) is fitted to the box. The distance is fitted with the
/// default field of view (30 deg), and a given `fov` then applies from there: a smaller fov
/// zooms in, a larger one out, as a camera's lens would.
/// `points` (optional: the vertices inside `bounds`) tighten the fit as in fit_camera; they
/// are not used when the block gives the target.
Camera resolve_camera(const RenderBlock& block, const Bounds& bounds, int dimension,
                      double aspect, const Vec3& default_up,
                      const std::vector<PaddedPoint>& points = {});

/// Everything `bristle render` needs from an output folder apart from its frames.
struct RenderSetup {
  Camera camera;
  RenderOptions options;
  std::vector<Collider> colliders;
  std::vector<RenderHandle> handles;  ///< the scene's handles (moving colliders, brushes)
  std::optional<double> fps;  ///< the block's video frame rate, when given
};

/// From the manifest's scene: colliders, handles, `render` block, and the camera fitted to `bounds`
/// (the box of every frame, see frame_bounds) with the scene's up (scene_up).
RenderSetup render_setup_from_manifest(const Manifest& manifest, const Bounds& bounds);

}  // namespace bristle

#pragma once
/// Draw one frame of an output folder with cairo.
///
/// Design note. The picture is built from depth-sorted primitives (painter's algorithm):
///   - every segment of every rod is one primitive, at the depth of its midpoint;
///   - a sphere is one primitive at the depth of its centre, a capsule one at the depth of
///     its axis midpoint, a box one per face turned towards the eye;
///   - planes are infinite: drawn first, as a shaded quad with a grid (3D) or a shaded half
///     plane with its boundary line (2D), around the camera target.
/// Primitives are drawn from the farthest to the nearest; ties keep a fixed order (colliders
/// before rods, then by index), so the output is deterministic. A segment is drawn as a quad
/// between its projected end points, as wide as the rod's projected diameter at each end
/// (never below RenderOptions::min_line_width); neighbouring quads share mitred edges and
/// overlap by a fraction of a pixel so antialiasing leaves no seams; rod ends get round caps.
/// The colour of a segment comes from Kajiya-Kay hair lighting (shading.hpp); wide rods get a
/// gradient across their width so they read as tubes.

#include <string>
#include <vector>

#include "bristle/io/frame.hpp"
#include "bristle/model/collider.hpp"
#include "bristle/render/camera.hpp"
#include "bristle/render/image.hpp"
#include "bristle/render/render_options.hpp"

namespace bristle {

/// Draw `frame` into an image of options.width x options.height pixels.
/// The rods of `frame` are matched to manifest.rods by position (manifest order); their
/// radii come from the manifest. Throws RenderError when the sizes disagree.
Image render_image(const Manifest& manifest, const Frame& frame,
                   const std::vector<Collider>& colliders, const Camera& camera,
                   const RenderOptions& options);

/// render_image, written to `png_path` as an opaque RGB PNG. Throws RenderError when the file
/// cannot be written.
void render_frame(const Manifest& manifest, const Frame& frame,
                  const std::vector<Collider>& colliders, const Camera& camera,
                  const RenderOptions& options, const std::string& png_path);

/// The time stamp text drawn for a frame, "t = 1.234 s": at least three decimals, more when
/// the frame interval needs them (frame_dt = 0.0001 s gives four).
std::string time_stamp_text(double time, double frame_dt);

}  // namespace bristle

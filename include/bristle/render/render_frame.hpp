#pragma once
/// Draw one frame of an output folder by ray tracing (Embree, ray_scene.hpp).
///
/// Design note. Every pixel is computed on its own from the frame and the settings:
///   1. The frame's geometry goes into a RayScene: rods as round tubes of their true radius
///      (widened only below RenderOptions::min_line_width, when that is set), the brush of each
///      handle that carries rods (handle_shapes.hpp), the colliders at the frame's time.
///   2. A mask marks the pixels a rod, a brush part or a capsule may cover: the projected
///      segment grown by a pixel and a margin for perspective, so it never misses a fibre thinner
///      than a pixel.
///   3. Masked pixels are traced with supersampling^2 samples at fixed positions (a rotated
///      grid for 2 x 2): a fibre thinner than a pixel covers a share of the samples and comes out
///      as a faint line of its true width, with no minimum width flattening the depth (pixels
///      only such a fibre may cross take 16 samples, so the line does not break into dots). Other
///      pixels are traced once at their centre (only when the frame has colliders; else they are
///      background), then traced again with all samples where their surface or shadow differs
///      from a neighbour's (the edges of colliders and of shadows).
///   4. Each sample: the first hit; a shadow ray to the key light (a directional light fixed to
///      the camera, shading.hpp); rods shaded with Kajiya-Kay hair lighting, colliders and the
///      brush with Lambert's law, colliders darkened by the contact shadow of nearby rods
///      (occlusion.hpp). The samples of a pixel are averaged and rounded to 8 bits.
///   5. The time stamp is written with cairo in a band above the picture (the camera sees the
///      rows below it), so it never covers geometry.
/// No step depends on another pixel's samples except the edge test of step 3, which compares
/// first-pass results only, so the image is the same whatever thread draws it.

#include <string>
#include <vector>

#include "bristle/io/frame.hpp"
#include "bristle/model/collider.hpp"
#include "bristle/render/camera.hpp"
#include "bristle/render/handle_shapes.hpp"
#include "bristle/render/image.hpp"
#include "bristle/render/render_options.hpp"

namespace bristle {

/// Draw `frame` into an image of options.width x options.height pixels.
/// The rods of `frame` are matched to manifest.rods by position (manifest order); their
/// radii come from the manifest. `colliders` are the scene's (at rest); those a handle carries
/// are drawn at their pose at frame.time, and each handle carrying rods draws its brush.
/// Throws RenderError when the sizes disagree.
Image render_image(const Manifest& manifest, const Frame& frame,
                   const std::vector<Collider>& colliders, const Camera& camera,
                   const RenderOptions& options, const std::vector<RenderHandle>& handles = {});

/// render_image, written to `png_path` as an opaque RGB PNG (temporary file, then renamed).
/// Throws RenderError when the file cannot be written.
void render_frame(const Manifest& manifest, const Frame& frame,
                  const std::vector<Collider>& colliders, const Camera& camera,
                  const RenderOptions& options, const std::string& png_path,
                  const std::vector<RenderHandle>& handles = {});

/// The height [px] of the time stamp band along the top of the image: 0 without a time
/// stamp, or when the image is too small to spare it (under 3 band heights tall).
int time_stamp_band(const RenderOptions& options);

/// Width over height of the part of the image the camera sees (below the band).
double view_aspect(const RenderOptions& options);

/// The projector of the camera onto the part of the image below the band.
Projector view_projector(const Camera& camera, const RenderOptions& options);

/// The time stamp text drawn for a frame, "t = 1.234 s": at least three decimals, more when
/// the frame interval needs them (frame_dt = 0.0001 s gives four).
std::string time_stamp_text(double time, double frame_dt);

}  // namespace bristle

#pragma once
/// Draw one frame of an output folder by ray tracing (Embree, ray_scene.hpp).
///
/// Design note. Every pixel is computed on its own from the frame and the settings:
///   1. The frame's geometry goes into a RayScene: rods as occluder tubes of their true radius
///      (widened only below RenderOptions::min_line_width, when that is set), which only shadow
///      rays and the contact shadow see; the brush of each handle that carries rods
///      (handle_shapes.hpp) and the colliders at the frame's time, which rays hit.
///   2. The rods are found without rays: each rod segment's screen capsule, grown by the
///      coverage margin (half a pixel at its depth) and the perspective stretch, is rasterised
///      into per-row spans of columns, so a pixel's candidate segments are the spans covering
///      it (about a thousand segments in the demo, a few per pixel). A mask marks the pixels
///      a brush part or a capsule may cover (grown by a pixel and a margin).
///   3. Rod pixels (a span reaches the centre) take one coverage ray through their centre. It
///      meets every rod whose true tube passes within half a pixel of it (the distance from the
///      ray to each candidate segment, computed exactly); a rod adds its true share c of the
///      pixel's width (a box one pixel wide across the tube) times its shade and lets 1 - c
///      through, and the ray goes on behind it (front to back, each rod once, at most 8 rods),
///      until the first solid surface Embree finds along it, or the background. A fibre of
///      0.2 px is a faint unbroken line of 0.2 px, a wide rod is opaque in its interior and
///      antialiased at its silhouette: the hair renderers' widened, proportionally transparent
///      curves, instead of supersampling.
///      Pixels a brush part or capsule may cover take supersampling^2 such rays at fixed
///      positions (a rotated grid for 2 x 2). Other pixels are traced once at their centre
///      (only when the frame has colliders; else they are background), then again with all
///      samples where their surface or shadow differs from a neighbour's (the edges of
///      colliders and of shadows).
///   4. Each sample: the first hit; a shadow ray to the key light (a directional light fixed to
///      the camera, shading.hpp); rods shaded with Kajiya-Kay hair lighting, colliders and the
///      brush with Lambert's law, colliders darkened by the contact shadow of nearby rods
///      (occlusion.hpp); a rod with the normal of its true tube at the middle of the part it
///      covers. The samples of a pixel are averaged and rounded to 8 bits.
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

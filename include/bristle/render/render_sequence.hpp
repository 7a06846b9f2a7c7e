#pragma once
/// Render every frame of an output folder. Frames are supplied by a loader (the frame reader
/// of io/ in `bristle render`), one at a time, so long runs never sit in memory whole.

#include <functional>
#include <string>

#include "bristle/io/frame.hpp"
#include "bristle/render/camera.hpp"
#include "bristle/render/scene_render.hpp"

namespace bristle {

/// Loads frame k, 0 <= k < manifest.frame_count.
using FrameLoader = std::function<Frame(int k)>;

/// The box of every frame (frame_bounds of each, joined): one pass over the frames.
Bounds sequence_bounds(const Manifest& manifest, int frame_count, const FrameLoader& load);

/// The file name of frame k's image: six digits and ".png" (000000.png), matching the
/// ffmpeg pattern "%06d.png".
std::string frame_image_name(int k);

/// Draw frames [0, frame_count) into `out_dir`/NNNNNN.png (the directory must exist).
/// `progress(k)` is called after frame k is written, when given.
void render_sequence(const Manifest& manifest, int frame_count, const FrameLoader& load,
                     const RenderSetup& setup, const std::string& out_dir,
                     const std::function<void(int)>& progress = {});

}  // namespace bristle

#pragma once
/// Render every frame of an output folder. Frames are supplied by a loader (the frame reader
/// of io/ in `bristle render`), one at a time, so long runs never sit in memory whole.
///
/// Frames are independent pictures, so they can be drawn in parallel: `jobs` threads each
/// take the next frame not yet taken, load it, draw it and write it. Each image depends only
/// on its frame and the setup (no state is carried from one frame to the next), so the files
/// are byte for byte the same whatever `jobs` is; the tests check it.

#include <functional>
#include <string>
#include <vector>

#include "bristle/io/frame.hpp"
#include "bristle/render/camera.hpp"
#include "bristle/render/scene_render.hpp"

namespace bristle {

/// Loads frame k, 0 <= k < manifest.frame_count. With jobs > 1 it is called from several
/// threads at once and must be safe to call so (io's OutputFolder::frame is).
using FrameLoader = std::function<Frame(int k)>;

/// The box of every frame (frame_bounds of each, joined): one pass over the frames, on `jobs`
/// threads. The result does not depend on `jobs` (a union of boxes is exact).
/// With `points`, the same pass also collects every vertex of every frame (in frame order)
/// for a tight camera fit, unless there are more than `max_points`: then `points` is left
/// empty and the camera is fitted to the box.
Bounds sequence_bounds(const Manifest& manifest, int frame_count, const FrameLoader& load,
                       int jobs = 1, std::vector<PaddedPoint>* points = nullptr,
                       std::size_t max_points = 2'000'000);

/// The file name of frame k's image: six digits and ".png" (000000.png), matching the
/// ffmpeg pattern "%06d.png".
std::string frame_image_name(int k);

/// Draw frames [first, end) into `out_dir`/NNNNNN.png, NNNNNN the frame's index (the
/// directory must exist), on `jobs` threads (1: in order on the calling thread). Each PNG is written whole (temporary
/// file, then rename). `progress(done)` is called after each frame is written with the number
/// of frames written so far, one call at a time (under a lock when jobs > 1). The first error
/// (a frame that cannot be read or written) stops the other threads and is rethrown; frames
/// already written stay.
void render_sequence(const Manifest& manifest, int first, int end, const FrameLoader& load,
                     const RenderSetup& setup, const std::string& out_dir,
                     const std::function<void(int)>& progress = {}, int jobs = 1);

}  // namespace bristle

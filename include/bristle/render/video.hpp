#pragma once
/// Turn numbered PNG frames into a video with ffmpeg, run as a subprocess (posix_spawnp with
/// an argument vector: no shell, so no file name is ever interpreted as shell syntax).

#include <string>

namespace bristle {

/// The full path of `program` found on $PATH (as execvp would), or "" when absent. A name
/// containing '/' is checked as it stands.
std::string find_on_path(const std::string& program);

/// True when an `ffmpeg` executable is on $PATH.
bool ffmpeg_available();

/// Assemble the images matching `frames_pattern` (ffmpeg's image2 pattern, e.g.
/// "renders/%06d.png", numbered consecutively from `start_number`) into `out_file` at `fps` frames per
/// second, overwriting it. The codec follows the extension: .mp4/.mov/.mkv/.m4v H.264
/// (yuv420p, CRF 18, padded to even sizes, plays everywhere), .webm VP9, .gif a palette
/// GIF (one palette per clip, ordered dither, only changed rectangles re-encoded), anything else ffmpeg's default for that container.
/// Throws RenderError: ffmpeg not on PATH (with a hint to install it), fps not positive, or
/// ffmpeg failing (its exit status and the last lines of its error output).
void assemble_video(const std::string& frames_pattern, double fps, const std::string& out_file,
                    int start_number = 0);

}  // namespace bristle

#pragma once
/// How an output folder stores its frames (docs/output-format.md, "Frame layouts"): one JSON
/// file per frame (the diffable default) or one numpy .npz archive per frame (big scenes).
/// The manifest names the layout in "frame_layout"; a manifest without it is JSON.

#include <optional>
#include <string>

namespace bristle {

enum class FrameLayout {
  Json,  ///< frames/NNNNNN.json (frame_json.hpp)
  Npz,   ///< frames/NNNNNN.npz: a zip of .npy arrays, stored or deflated (frame_npz.hpp)
};

/// How the members of .npz frames are written: stored (the default binary layout, fastest to
/// write) or deflated (smaller, slower; `--frames compressed`). The manifest says "npz" for
/// both: a reader tells them apart member by member, and takes either.
enum class NpzCompression {
  Stored,    ///< zip method 0, as numpy.savez
  Deflated,  ///< zip method 8 (zlib), as numpy.savez_compressed
};

/// The manifest's name of a layout: "json" or "npz".
const char* frame_layout_name(FrameLayout layout);

/// The layout a manifest's "frame_layout" names; nothing for an unknown name.
std::optional<FrameLayout> frame_layout_from_name(const std::string& name);

/// ".json" or ".npz": the extension of the layout's frame files.
const char* frame_file_extension(FrameLayout layout);

/// "frames/000012.json" (or ".npz"): the path of frame `index` relative to the output folder;
/// six digits at least, more from frame 1 000 000 on.
std::string frame_file_name(int index, FrameLayout layout = FrameLayout::Json);

/// Whether `name` is a frame file name as frame_file_name makes them for `layout`: "frames/",
/// 6 to 10 digits, the layout's extension. Anything else (`../outside.json`, an absolute path)
/// would let a damaged manifest make a reader open files outside its folder.
bool is_frame_file_name(const std::string& name, FrameLayout layout);

}  // namespace bristle

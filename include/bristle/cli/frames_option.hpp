#pragma once
/// The `--frames json|binary|compressed` option of the commands that write an output folder
/// (run, batch, modes --shapes): how the frames are stored (docs/output-format.md, "Frame
/// layouts").

#include "bristle/cli/args.hpp"
#include "bristle/io/frame_layout.hpp"

namespace bristle::cli {

/// What `--frames` asks for: the layout, and for .npz whether members are deflated.
struct FramesChoice {
  FrameLayout layout = FrameLayout::Json;
  NpzCompression compression = NpzCompression::Stored;
};

/// The choice `--frames` names: "json" (also the default when absent), "binary" (numpy .npz,
/// members stored; "npz" is accepted too, the manifest's name for it) or "compressed" (.npz,
/// members deflated). Throws UsageError otherwise.
FramesChoice frames_option(const ParsedArgs& parsed);

/// "json", "binary" or "compressed": the option's value for `choice`, to pass it on to another
/// command.
const char* frames_option_value(const FramesChoice& choice);

}  // namespace bristle::cli

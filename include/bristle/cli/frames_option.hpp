#pragma once
/// The `--frames json|binary` option of the commands that write an output folder (run,
/// batch, modes --shapes): how the frames are stored (docs/output-format.md, "Frame layouts").

#include "bristle/cli/args.hpp"
#include "bristle/io/frame_layout.hpp"

namespace bristle::cli {

/// The layout `--frames` asks for: "json" (also the default when absent) or "binary" (numpy
/// .npz; "npz" is accepted too, the manifest's name for it). Throws UsageError otherwise.
FrameLayout frames_option(const ParsedArgs& parsed);

/// "json" or "binary": the option's value for `layout`, to pass it on to another command.
const char* frames_option_value(FrameLayout layout);

}  // namespace bristle::cli

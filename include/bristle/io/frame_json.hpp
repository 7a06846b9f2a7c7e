#pragma once
/// The JSON form of frames and manifests (interface.md section 3; docs/output-format.md).
/// Conversion only: no files here (frame_writer.hpp writes, output_reader.hpp reads).

#include <string>

#include <nlohmann/json.hpp>

#include "bristle/io/frame.hpp"
#include "bristle/io/frame_layout.hpp"

namespace bristle {

/// The text of frames/NNNNNN.json: {"frame", "time", "rods": [{"name", "positions",
/// "velocities"}], "stats"}, vectors with `dimension` components.
/// The JSON pointer (in the frame file) of the first number of `frame` that is not finite:
/// a position, a velocity, the time or a number in its stats; "" when all are finite. JSON
/// cannot hold them (they would be written as null), so no frame with one is ever written.
std::string first_non_finite(const Frame& frame);

std::string frame_to_text(const Frame& frame, int dimension);

/// The text of manifest.json.
std::string manifest_to_text(const Manifest& manifest);

/// Parses a frame. `file` labels error messages; `manifest` gives the dimension and the rods
/// the frame must hold (names and vertex counts, in order). Throws OutputError naming the
/// file and the JSON pointer of what is wrong.
Frame frame_from_json(const nlohmann::json& json, const Manifest& manifest, const std::string& file);

/// Parses a manifest. Throws OutputError naming the file and the offending key.
Manifest manifest_from_json(const nlohmann::json& json, const std::string& file);

}  // namespace bristle

#pragma once
/// The binary form of a frame: frames/NNNNNN.npz, a numpy archive of named arrays
/// (docs/output-format.md, "Binary frames"). Conversion only, like frame_json.hpp.
///
///   frame       int64, shape ()          the frame index k
///   time        float64, shape ()        [s]
///   positions   float64, shape (V, D)    [m]   every rod's vertices, rods in manifest order
///   velocities  float64, shape (V, D)    [m/s]
///   directors   float64, shape (E, 3)    format version 2 only (a rod with twist): each edge's
///                                        material director m1, E = sum of vertex_count - 1;
///                                        rows of rods without twist are zero
///   stats       uint8, shape (n,)        the frame's stats object as compact JSON text (UTF-8)
///
/// V is the sum of the manifest's vertex_count over its rods and D its dimension. A per-vertex
/// array's first axis runs over every rod's vertices in turn; a per-edge array added later
/// (twist, material frames) runs over every rod's vertex_count - 1 edges. Readers ignore
/// arrays they do not know, so new arrays need neither a new container nor a new format.

#include <string>
#include <string_view>

#include "bristle/io/frame.hpp"

namespace bristle {

/// The zlib level of NpzCompression::Deflated. Levels 6 and 9 leave frames only 0.5 to 1% of
/// their stored size smaller than level 1 does, for up to 4 times its time on 50,000-vertex
/// frames (docs/output-format.md, "Compressed binary frames": the demo and 1000 strands).
constexpr int kFrameDeflateLevel = 1;

/// The bytes of frames/NNNNNN.npz for `frame`, vectors with `dimension` components. Every
/// float is kept exactly (IEEE 754 binary64, little-endian), stored or deflated.
std::string frame_to_npz(const Frame& frame, int dimension, NpzCompression compression = NpzCompression::Stored);

/// Parses the bytes of an .npz frame (stored or deflated members) and checks them against `manifest` (the shapes its rods
/// and dimension give). `file` labels error messages. Throws OutputError naming the file and
/// the array (and the rod and vertex of a non-finite value).
Frame frame_from_npz(std::string_view bytes, const Manifest& manifest, const std::string& file);

}  // namespace bristle

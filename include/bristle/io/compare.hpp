#pragma once
/// Compares two output folders frame by frame, rod by rod, vertex by vertex: what
/// `bristle compare` and the golden-frame tests run.
///
/// Two values a, b agree when |a - b| <= atol + rtol * max(|a|, |b|), component by
/// component. Positions are compared always, frame times too; velocities only when asked
/// (they are a derivative of the positions and noisier: a change in the CG tolerance moves
/// them far more than it moves positions). Folders with different dimensions, rods (names,
/// order, vertex counts, twist) or frame counts are different.
///
/// Rods with twist (format version 2) also carry each edge's material director m1; two
/// directors agree when the angle between them is at most angle_tol [rad] (one value each).

#include <array>
#include <optional>
#include <string>
#include <vector>

namespace bristle {

struct CompareOptions {
  double atol = 1e-9;       ///< absolute tolerance [m] (and [m/s], [s])
  double rtol = 1e-7;       ///< relative tolerance
  bool velocities = false;  ///< also compare velocities
  double angle_tol = 1e-6;  ///< largest angle between two agreeing material directors [rad]
};

/// One value that differs: where it is and by how much.
struct ValueDifference {
  int frame = -1;
  int rod = -1;          ///< -1 for the frame's time
  std::string rod_name;
  int vertex = -1;       ///< the vertex; for a director, its edge
  std::string quantity;  ///< "position", "velocity", "time" or "director"
  int component = 0;     ///< 0, 1, 2 = x, y, z (not for a director)
  double a = 0.0, b = 0.0;
  double difference = 0.0;  ///< |a - b|; for a director the angle between them [rad]
  std::array<double, 3> director_a{}, director_b{};  ///< a director's two vectors
};

struct CompareResult {
  bool same = true;
  /// Differences in structure (dimension, rods, frame counts), one sentence each.
  std::vector<std::string> structure;
  /// The first value beyond tolerance, in frame, rod, vertex, component order.
  std::optional<ValueDifference> first;
  /// The largest |a - b| over every position, velocity and time compared (within tolerance or
  /// not).
  std::optional<ValueDifference> largest;
  /// The largest angle between two directors compared (rods with twist only) [rad].
  std::optional<ValueDifference> largest_director;
  std::size_t directors_compared = 0;  ///< also counted in values_compared
  int frames_compared = 0;
  std::size_t values_compared = 0;
  std::size_t values_beyond_tolerance = 0;
  std::string status_a, status_b;  ///< the manifests' statuses (reported, not compared)
};

/// Compares output folders `a` and `b`. Throws OutputError when either cannot be read.
CompareResult compare_outputs(const std::string& a, const std::string& b, const CompareOptions& options = {});

/// A few lines describing the result, for people: the verdict, the first difference, the
/// largest difference.
std::string describe(const CompareResult& result, const CompareOptions& options);

}  // namespace bristle

#pragma once
/// Compares two output folders frame by frame, rod by rod, vertex by vertex: what
/// `bristle compare` and the golden-frame tests run.
///
/// Two values a, b agree when |a - b| <= atol + rtol * max(|a|, |b|), component by
/// component. Positions are compared always, frame times too; velocities only when asked
/// (they are a derivative of the positions and noisier: a change in the CG tolerance moves
/// them far more than it moves positions). Folders with different dimensions, rods (names,
/// order, vertex counts) or frame counts are different.

#include <optional>
#include <string>
#include <vector>

namespace bristle {

struct CompareOptions {
  double atol = 1e-9;       ///< absolute tolerance [m] (and [m/s], [s])
  double rtol = 1e-7;       ///< relative tolerance
  bool velocities = false;  ///< also compare velocities
};

/// One value that differs: where it is and by how much.
struct ValueDifference {
  int frame = -1;
  int rod = -1;          ///< -1 for the frame's time
  std::string rod_name;
  int vertex = -1;
  std::string quantity;  ///< "position", "velocity" or "time"
  int component = 0;     ///< 0, 1, 2 = x, y, z
  double a = 0.0, b = 0.0;
  double difference = 0.0;  ///< |a - b|
};

struct CompareResult {
  bool same = true;
  /// Differences in structure (dimension, rods, frame counts), one sentence each.
  std::vector<std::string> structure;
  /// The first value beyond tolerance, in frame, rod, vertex, component order.
  std::optional<ValueDifference> first;
  /// The largest |a - b| over every value compared (within tolerance or not).
  std::optional<ValueDifference> largest;
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

#pragma once
/// Material directors at a rod's vertices, for drawing and exporting (render/, export/usd.cpp).
/// A frame holds one director m1 per edge (docs/output-format.md, "directors"); a curve
/// drawn through the vertices wants one per vertex, varying smoothly along the rod.

#include <cmath>
#include <vector>

#include "bristle/math/types.hpp"

namespace bristle {

/// One unit vector per vertex from the per-edge directors of a rod with twist: at an interior
/// vertex the mean of its two edges' directors, at an end its edge's, each made perpendicular
/// to the vertex's tangent (the mean of its edges' unit tangents). Where the mean vanishes
/// (the two edges' directors opposite), the later edge's director. Empty when `directors` is
/// empty or its size is not positions.size() - 1.
inline std::vector<Vec3> vertex_directors(const std::vector<Vec3>& positions, const std::vector<Vec3>& directors) {
  const std::size_t n = positions.size();
  if (n < 2 || directors.size() != n - 1) return {};
  std::vector<Vec3> out(n, Vec3::Zero());
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t before = i > 0 ? i - 1 : 0, after = i + 1 < n ? i : n - 2;
    Vec3 tangent = (positions[before + 1] - positions[before]).normalized() +
                   (positions[after + 1] - positions[after]).normalized();
    Vec3 m = directors[before] + directors[after];
    if (!(m.norm() > 1e-6)) m = directors[after];
    if (tangent.norm() > 1e-12) {
      tangent.normalize();
      m -= m.dot(tangent) * tangent;
    }
    // A director along the tangent cannot be made perpendicular: keep the edge's own.
    out[i] = m.norm() > 1e-12 ? Vec3(m.normalized()) : directors[after];
  }
  return out;
}

}  // namespace bristle

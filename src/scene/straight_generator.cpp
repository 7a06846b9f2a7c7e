#include <cassert>

#include "bristle/scene/generators.hpp"

namespace bristle {

std::vector<Vec3> straight_rod(const Vec3& from, const Vec3& to, int segments) {
  assert(segments >= 1);
  std::vector<Vec3> vertices(static_cast<std::size_t>(segments) + 1);
  // (1 - t) from + t to rather than from + t (to - from): both ends come out exact.
  for (int k = 0; k <= segments; ++k) {
    const double t = static_cast<double>(k) / segments;
    vertices[k] = (1.0 - t) * from + t * to;
  }
  return vertices;
}

}  // namespace bristle

/// The helix generator (include/bristle/scene/generators.hpp).

#include <cmath>

#include "bristle/scene/generators.hpp"

namespace bristle {

std::vector<Vec3> helix_rod(const HelixSpec& spec) {
  constexpr double kTwoPi = 6.28318530717958647692;
  const auto [u, v] = brush_base_axes(spec.axis, 3);
  const double handedness = spec.right_handed ? 1.0 : -1.0;
  std::vector<Vec3> vertices;
  vertices.reserve(spec.segments + 1);
  for (int k = 0; k <= spec.segments; ++k) {
    const double phi = kTwoPi * spec.turns * k / spec.segments;
    vertices.push_back(spec.centre + spec.radius * (std::cos(phi) * u + handedness * std::sin(phi) * v) +
                       (spec.pitch * phi / kTwoPi) * spec.axis);
  }
  return vertices;
}

}  // namespace bristle

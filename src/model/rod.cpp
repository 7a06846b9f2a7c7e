#include "bristle/model/rod.hpp"

#include <algorithm>
#include <cassert>

#include "bristle/energy/bend.hpp"

namespace bristle {

bool Rod::is_fixed(int vertex) const {
  return std::binary_search(fixed.begin(), fixed.end(), vertex);
}

double Rod::vertex_mass(int vertex) const {
  double length = 0.0;
  if (vertex > 0) length += rest_lengths[vertex - 1];
  if (vertex < edge_count()) length += rest_lengths[vertex];
  return material.linear_density() * 0.5 * length;
}

double Rod::stretch_stiffness(int edge) const {
  return material.axial_stiffness() / rest_lengths[edge];
}

double Rod::voronoi_length(int vertex) const {
  assert(vertex > 0 && vertex < edge_count());
  return 0.5 * (rest_lengths[vertex - 1] + rest_lengths[vertex]);
}

double Rod::bend_stiffness(int vertex) const {
  return material.bending_stiffness() / voronoi_length(vertex);
}

double Rod::rest_length() const {
  double total = 0.0;
  for (double l : rest_lengths) total += l;
  return total;
}

Rod make_rod(std::string name, const Material& material, std::vector<Vec3> positions,
             std::vector<int> fixed, RestShape rest, int dimension) {
  assert(positions.size() >= 2);
  assert(dimension == 2 || dimension == 3);
  Rod rod;
  rod.name = std::move(name);
  rod.material = material;
  rod.initial_positions = std::move(positions);
  if (dimension == 2)
    for (Vec3& p : rod.initial_positions) p.z() = 0.0;
  std::sort(fixed.begin(), fixed.end());
  fixed.erase(std::unique(fixed.begin(), fixed.end()), fixed.end());
  rod.fixed = std::move(fixed);

  const int n = rod.vertex_count();
  rod.rest_lengths.resize(n - 1);
  for (int j = 0; j + 1 < n; ++j) {
    rod.rest_lengths[j] = (rod.initial_positions[j + 1] - rod.initial_positions[j]).norm();
    assert(rod.rest_lengths[j] > 0.0);
  }
  rod.rest_angles.assign(n, 0.0);
  if (rest == RestShape::Initial) {
    const auto& p = rod.initial_positions;
    for (int i = 1; i + 1 < n; ++i) {
      if (dimension == 2) {
        rod.rest_angles[i] = turning_angle<2>({p[i - 1].head<2>(), p[i].head<2>(), p[i + 1].head<2>()});
      } else {
        rod.rest_angles[i] = turning_angle<3>({p[i - 1], p[i], p[i + 1]});
      }
    }
  }
  return rod;
}

}  // namespace bristle

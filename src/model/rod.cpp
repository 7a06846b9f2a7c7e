#include "bristle/model/rod.hpp"

#include <algorithm>
#include <limits>
#include <cassert>

#include "bristle/energy/bend.hpp"

namespace bristle {

bool Rod::is_fixed(int vertex) const {
  return std::binary_search(fixed.begin(), fixed.end(), vertex);
}

bool Rod::is_twist_fixed(int edge) const {
  if (!twist) return false;
  const int n = vertex_count(), count = static_cast<int>(fixed.size());
  assert(edge >= 0 && edge + 1 < n);
  const bool clamped = is_fixed(edge) && is_fixed(edge + 1);
  // `fixed` is sorted and unique: vertices 0..edge+1 are all fixed iff fixed[edge + 1] is
  // edge + 1, and vertices edge..n-1 iff the (n - edge)-th entry from the back is edge.
  const bool root_run = edge == 0 || (count > edge + 1 && fixed[edge + 1] == edge + 1);
  const bool tip_run = edge + 2 == n || (count >= n - edge && fixed[count - (n - edge)] == edge);
  const bool by_root = root_run && twist_root != TwistEnd::Default;
  const bool by_tip = tip_run && twist_tip != TwistEnd::Default;
  if (by_root && by_tip) return twist_root == TwistEnd::Fixed || twist_tip == TwistEnd::Fixed;
  if (by_root) return twist_root == TwistEnd::Fixed;
  if (by_tip) return twist_tip == TwistEnd::Fixed;
  return clamped;
}

std::vector<double> Rod::initial_twists() const {
  std::vector<double> theta;
  if (!twist) return theta;
  theta.assign(edge_count(), 0.0);
  if (rest_twist == 0.0) return theta;
  for (int j = 1; j < edge_count(); ++j) theta[j] = theta[j - 1] + rest_twist * voronoi_length(j);
  return theta;
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
        // Vertices given along a generic direction are collinear only up to rounding, and the
        // unsigned 3D angle then comes out as ~1e-15 instead of 0. A rest angle that is not
        // exactly zero makes straight a cone tip of the energy (no stiffness across the bending
        // plane, docs/physics.md): such a rod would lose half its bending stiffness at rest.
        // Angles within rounding of zero are zero.
        const Vec3 v1 = p[i] - p[i - 1], v2 = p[i + 1] - p[i];
        const double round_off = 64.0 * std::numeric_limits<double>::epsilon() * v1.norm() * v2.norm();
        rod.rest_angles[i] = v1.cross(v2).norm() <= round_off && v1.dot(v2) > 0.0
                                 ? 0.0
                                 : turning_angle<3>({p[i - 1], p[i], p[i + 1]});
      }
    }
  }
  return rod;
}

}  // namespace bristle

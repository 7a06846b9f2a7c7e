// The brush generator: a tuft of straight bristles planted on a base plane.
//
//        direction
//            ^      bristle k: root + offset_k, then `segments` edges of length_k / segments
//        |   |   |  along direction_k (direction, jittered)
//        |   |   |
//   -----o---o---o-----  base plane through `root`, perpendicular to direction, spanned by
//           root         (u, v); offsets are lattice points of the layout in that plane

#include <cassert>
#include <cmath>

#include "bristle/scene/generators.hpp"
#include "bristle/scene/random.hpp"

namespace bristle {
namespace {

constexpr double kPi = 3.14159265358979323846;
// A lattice point exactly on the disk's rim counts as inside despite rounding.
constexpr double kRimSlack = 1e-9;

std::vector<Vec3> grid_offsets(const BrushSpec& spec, const Vec3& u, const Vec3& v) {
  std::vector<Vec3> offsets;
  offsets.reserve(static_cast<std::size_t>(spec.rows) * spec.columns);
  for (int r = 0; r < spec.rows; ++r) {
    const double y = (r - 0.5 * (spec.rows - 1)) * spec.spacing;
    for (int c = 0; c < spec.columns; ++c) {
      const double x = (c - 0.5 * (spec.columns - 1)) * spec.spacing;
      offsets.push_back(x * u + y * v);
    }
  }
  return offsets;
}

// 2D: the disk's diameter along u, one root every `spacing`, the centre included.
std::vector<Vec3> diameter_offsets(const BrushSpec& spec, const Vec3& u) {
  const int half = static_cast<int>(std::floor(spec.disk_radius / spec.spacing * (1.0 + kRimSlack)));
  std::vector<Vec3> offsets;
  for (int i = -half; i <= half; ++i) offsets.push_back((i * spec.spacing) * u);
  return offsets;
}

// 3D: a hexagonal lattice (every root `spacing` from its six neighbours, the densest
// packing of equal bristles), rows along u, odd rows shifted by half a spacing, clipped to
// the disk. The centre is a lattice point, so the tuft is symmetric about it.
std::vector<Vec3> hexagonal_disk_offsets(const BrushSpec& spec, const Vec3& u, const Vec3& v) {
  const double s = spec.spacing, radius = spec.disk_radius;
  const double row_pitch = s * std::sqrt(3.0) / 2.0;
  const double limit = radius * radius * (1.0 + 2.0 * kRimSlack);
  const int max_row = static_cast<int>(std::floor(radius / row_pitch * (1.0 + kRimSlack)));
  const int max_column = static_cast<int>(std::ceil(radius / s)) + 1;
  std::vector<Vec3> offsets;
  for (int j = -max_row; j <= max_row; ++j) {
    const double y = j * row_pitch;
    const double shift = (j % 2 != 0) ? 0.5 : 0.0;
    for (int i = -max_column; i <= max_column; ++i) {
      const double x = (i + shift) * s;
      if (x * x + y * y <= limit) offsets.push_back(x * u + y * v);
    }
  }
  return offsets;
}

// Rotates `direction` away from itself by `tilt` [rad] towards the in-plane unit vector w.
Vec3 tilted(const Vec3& direction, const Vec3& w, double tilt) {
  return std::cos(tilt) * direction + std::sin(tilt) * w;
}

}  // namespace

std::pair<Vec3, Vec3> brush_base_axes(const Vec3& direction, int dimension) {
  const Vec3 d = direction.normalized();
  if (dimension == 2) return {Vec3(-d.y(), d.x(), 0.0), Vec3::Zero()};
  const Vec3 reference = std::abs(d.x()) > 0.9 ? Vec3::UnitY() : Vec3::UnitX();
  const Vec3 u = (reference - reference.dot(d) * d).normalized();
  return {u, d.cross(u)};
}

std::vector<Vec3> brush_root_offsets(const BrushSpec& spec) {
  const auto [u, v] = brush_base_axes(spec.direction, spec.dimension);
  if (spec.layout == BrushLayout::Grid) {
    BrushSpec row = spec;
    if (spec.dimension == 2) row.rows = 1;
    return grid_offsets(row, u, v);
  }
  return spec.dimension == 2 ? diameter_offsets(spec, u) : hexagonal_disk_offsets(spec, u, v);
}

double brush_bristle_estimate(const BrushSpec& spec) {
  if (spec.layout == BrushLayout::Grid)
    return static_cast<double>(spec.dimension == 2 ? 1 : spec.rows) * spec.columns;
  const double ratio = spec.disk_radius / spec.spacing;
  if (spec.dimension == 2) return 2.0 * std::floor(ratio) + 1.0;
  // Disk area over the area per lattice point (sqrt(3)/2 s^2), plus a rim allowance.
  return kPi * ratio * ratio / (std::sqrt(3.0) / 2.0) + 2.0 * kPi * ratio + 1.0;
}

std::vector<std::vector<Vec3>> brush_bristles(const BrushSpec& spec) {
  assert(spec.length > 0.0 && spec.segments >= 1 && spec.spacing > 0.0);
  const Vec3 d = spec.direction.normalized();
  const auto [u, v] = brush_base_axes(d, spec.dimension);
  SplitMix64 rng(spec.jitter.seed);

  std::vector<std::vector<Vec3>> bristles;
  for (const Vec3& offset : brush_root_offsets(spec)) {
    // Always three draws per bristle, in this order, so the streams stay aligned.
    const double length_draw = rng.symmetric();
    const double tilt_draw = rng.uniform();
    const double azimuth_draw = rng.uniform();

    const double length = spec.length * (1.0 + spec.jitter.length * length_draw);
    Vec3 direction = d;
    if (spec.jitter.direction > 0.0) {
      if (spec.dimension == 2) {
        // Signed tilt in [-max, max) within the plane.
        direction = tilted(d, u, spec.jitter.direction * (2.0 * tilt_draw - 1.0));
      } else {
        // Tilt in [0, max) about a uniformly random azimuth: inside a cone of half-angle max.
        const double azimuth = 2.0 * kPi * azimuth_draw;
        const Vec3 w = std::cos(azimuth) * u + std::sin(azimuth) * v;
        direction = tilted(d, w, spec.jitter.direction * tilt_draw);
      }
    }
    const Vec3 base = spec.root + offset;
    bristles.push_back(straight_rod(base, base + length * direction, spec.segments));
  }
  return bristles;
}

}  // namespace bristle

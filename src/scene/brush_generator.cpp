// The brush generator: a tuft of straight bristles planted on a base plane.
//
//        direction
//            ^      bristle k: root + offset_k, then `segments` edges of length_k / segments
//        |   |   |  along direction_k (direction, jittered)
//        |   |   |
//   -----o---o---o-----  base plane through `root`, perpendicular to direction, spanned by
//           root         (u, v); offsets are lattice points of the layout in that plane

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdint>
#include <map>

#include "bristle/contact/rod_overlaps.hpp"
#include "bristle/contact/segment_distance.hpp"
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

// The bristles planted so far, as capsules from root to tip, bucketed by root in the base
// plane so that a new bristle meets only those that could reach it: a bristle of length
// at most L_max tilted at most theta from `direction` stays within L_max sin(theta) of its
// root's line, so two can come within 2 r only if their roots are closer than
// reach = 2 L_max sin(theta) + 2 r. Cells are `reach` wide: the 3 x 3 cells around a root
// hold every root within reach.
class BristleField {
 public:
  BristleField(const BrushSpec& spec, const Vec3& u, const Vec3& v) : u_(u), v_(v) {
    const double longest = spec.length * (1.0 + spec.jitter.length);
    reach_ = 2.0 * longest * std::sin(spec.jitter.direction) + 2.0 * spec.bristle_radius;
    // Stricter than the overlap check of `bristle validate` by half its slack, so that
    // nothing planted here is reported there, whatever the rounding of the vertices along
    // the bristle; as lenient as the spacing check, so that bristles exactly 2 r apart fit.
    clearance_ = 2.0 * spec.bristle_radius * (1.0 - 0.5 * kOverlapSlack);
    radius_ = spec.bristle_radius;
  }

  // The planted bristles whose roots are within reach of `offset`, in increasing order.
  std::vector<int> neighbours(const Vec3& offset) const {
    const Cell c = cell(offset);
    std::vector<int> found;
    for (std::int64_t i = c.first - 1; i <= c.first + 1; ++i)
      for (std::int64_t j = c.second - 1; j <= c.second + 1; ++j) {
        const auto bucket = cells_.find({i, j});
        if (bucket != cells_.end()) found.insert(found.end(), bucket->second.begin(), bucket->second.end());
      }
    std::sort(found.begin(), found.end());
    return found;
  }

  // The first of `neighbours` that the capsule base-tip overlaps, or -1.
  int conflict(const Vec3& base, const Vec3& tip, const std::vector<int>& neighbours) const {
    // Non-finite tips (an overflowing length) are refused by the scene reader afterwards.
    if (!base.allFinite() || !tip.allFinite()) return -1;
    const Vec3 lo = base.cwiseMin(tip).array() - radius_, hi = base.cwiseMax(tip).array() + radius_;
    for (const int k : neighbours) {
      const Capsule& other = planted_[k];
      if ((hi.array() < other.lo.array()).any() || (other.hi.array() < lo.array()).any()) continue;
      if (segment_distance(base, tip, other.base, other.tip).distance < clearance_) return k;
    }
    return -1;
  }

  // Bristles are added in order, so planted_[k] is bristle k.
  void add(const Vec3& base, const Vec3& tip, const Vec3& offset) {
    if (base.allFinite() && tip.allFinite()) cells_[cell(offset)].push_back(static_cast<int>(planted_.size()));
    planted_.push_back({base, tip, base.cwiseMin(tip).array() - radius_, base.cwiseMax(tip).array() + radius_});
  }

 private:
  using Cell = std::pair<std::int64_t, std::int64_t>;
  struct Capsule {
    Vec3 base, tip, lo, hi;
  };

  // Cell coordinates, clamped so that no offset overflows them (clamping is monotone: roots
  // within reach still fall in neighbouring or equal cells). A NaN offset (an overflowing
  // layout, refused by the scene reader afterwards) goes to the lowest cell.
  Cell cell(const Vec3& offset) const {
    auto index = [&](double x) {
      const double q = reach_ > 0.0 && std::isfinite(reach_) ? std::floor(x / reach_) : 0.0;
      return static_cast<std::int64_t>(q > -1e15 ? std::min(q, 1e15) : -1e15);
    };
    return {index(offset.dot(u_)), index(offset.dot(v_))};
  }

  Vec3 u_, v_;
  double reach_ = 0.0, clearance_ = 0.0, radius_ = 0.0;
  std::map<Cell, std::vector<int>> cells_;
  std::vector<Capsule> planted_;
};

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

BrushPlanting plant_brush(const BrushSpec& spec) {
  assert(spec.length > 0.0 && spec.segments >= 1 && spec.spacing > 0.0);
  const Vec3 d = spec.direction.normalized();
  // Named copies, not a structured binding: a lambda below uses them, which C++17 allows only
  // for variables (clang refuses captured bindings).
  const std::pair<Vec3, Vec3> axes = brush_base_axes(d, spec.dimension);
  const Vec3 u = axes.first, v = axes.second;
  const std::vector<Vec3> offsets = brush_root_offsets(spec);
  SplitMix64 rng(spec.jitter.seed);
  SplitMix64 redraw(spec.jitter.seed ^ kBrushRedrawSalt);

  // The jittered direction for a tilt draw b and an azimuth draw c, both in [0, 1).
  auto jittered = [&](double tilt_draw, double azimuth_draw) {
    if (spec.jitter.direction <= 0.0) return d;
    // 2D: a signed tilt in [-max, max) within the plane.
    if (spec.dimension == 2) return tilted(d, u, spec.jitter.direction * (2.0 * tilt_draw - 1.0));
    // 3D: a tilt in [0, max) about a uniformly random azimuth, inside a cone of half-angle max.
    const double azimuth = 2.0 * kPi * azimuth_draw;
    const Vec3 w = std::cos(azimuth) * u + std::sin(azimuth) * v;
    return tilted(d, w, spec.jitter.direction * tilt_draw);
  };

  // Parallel bristles planted on one base plane are clear of each other when the spacing
  // is at least 2 r (checked by the scene reader); only tilted ones can meet.
  const bool check = spec.bristle_radius > 0.0 && spec.jitter.direction > 0.0 && offsets.size() > 1;
  BristleField field(spec, u, v);

  BrushPlanting planting;
  planting.bristles.reserve(offsets.size());
  for (std::size_t k = 0; k < offsets.size(); ++k) {
    // Always three draws per bristle from the first stream, in this order, so the streams
    // stay aligned.
    const double length_draw = rng.symmetric();
    const double tilt_draw = rng.uniform();
    const double azimuth_draw = rng.uniform();

    const double length = spec.length * (1.0 + spec.jitter.length * length_draw);
    const Vec3 base = spec.root + offsets[k];
    Vec3 tip = base + length * jittered(tilt_draw, azimuth_draw);
    if (check) {
      const std::vector<int> neighbours = field.neighbours(offsets[k]);
      int draws = 1;
      for (int neighbour = field.conflict(base, tip, neighbours); neighbour >= 0;
           neighbour = field.conflict(base, tip, neighbours)) {
        if (draws == kMaxBristleDraws) {
          planting.bristles.clear();
          planting.failed = true;
          planting.conflict = {static_cast<int>(k), neighbour, draws};
          return planting;
        }
        const double tilt_redraw = redraw.uniform();
        const double azimuth_redraw = redraw.uniform();
        tip = base + length * jittered(tilt_redraw, azimuth_redraw);
        ++draws;
      }
      if (draws > 1) ++planting.redrawn;
      field.add(base, tip, offsets[k]);
    }
    planting.bristles.push_back(straight_rod(base, tip, spec.segments));
  }
  return planting;
}

std::vector<std::vector<Vec3>> brush_bristles(const BrushSpec& spec) { return plant_brush(spec).bristles; }

}  // namespace bristle

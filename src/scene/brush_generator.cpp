// The brush generator: a tuft of straight (or curly) bristles planted on a base plane.
//
//        direction
//            ^      bristle k: root + offset_k, then `segments` edges of length_k / segments
//        |   |   |  along direction_k (direction, jittered)
//        |   |   |
//   -----o---o---o-----  base plane through `root`, perpendicular to direction, spanned by
//           root         (u, v); offsets are lattice points of the layout in that plane
//
// A curly bristle is a helix about that straight bristle as its axis (plant_brush in
// scene/generators.hpp; docs/scene-format.md, "Curly bristles").

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdint>
#include <limits>

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

// The bristles planted so far, as capsules from root to tip, indexed by their shadows on the
// base plane: two capsules can come within 2 r of each other only if their projections onto
// the plane (2D segments from root to the tip's foot) do. Each shadow is sampled every h or
// closer, and each sample is listed in the cell of a uniform grid, c = h + 2 r wide, that
// holds it. If two shadows come within 2 r at points p and q, the samples nearest to p and q
// are within h/2 + 2 r + h/2 = c of each other, so in the same or adjacent cells: a new
// capsule meets only the shadows listed in the 3 x 3 cells around its own samples.
//
// h is the root spacing, but at least 1/64 of the longest shadow, so that a capsule has at
// most 65 samples: the work per bristle is then bounded by the samples and the shadows
// crossing a cell, which stay few unless bristles are long and strongly tilted for their
// spacing. Every cell visited and candidate tested counts against kMaxBrushOverlapWork.
//
// Curly bristles are checked as their axes inflated by the largest coil radius R: capsules
// of radius r + R, which hold the helices (plant_brush), so the check stays conservative.
class BristleField {
 public:
  BristleField(const BrushSpec& spec, const Vec3& u, const Vec3& v, const std::vector<Vec3>& offsets)
      : u_(u), v_(v), origin_(spec.root) {
    const double longest = spec.length * (1.0 + spec.jitter.length);
    const double shadow = longest * std::sin(spec.jitter.direction);
    const double coil = spec.curl.max_radius();  // 0 for straight bristles
    radius_ = spec.bristle_radius + coil;
    // Stricter than the overlap check of `bristle validate` by half its slack, so that
    // nothing planted here is reported there, whatever the rounding of the vertices along
    // the bristle; as lenient as the spacing check, so that bristles exactly 2 r apart fit.
    // The slack applies to the bristles' own radius only: helices whose axes are 2 (r + R)
    // apart come within 2 r of each other at worst.
    clearance_ = 2.0 * coil + 2.0 * spec.bristle_radius * (1.0 - 0.5 * kOverlapSlack);
    step_ = std::max({spec.spacing, 2.0 * radius_, shadow / kMaxShadowSteps});

    // The box holding every root, grown by the longest shadow and a cell on each side.
    Eigen::Vector2d lo = Eigen::Vector2d::Constant(std::numeric_limits<double>::infinity());
    Eigen::Vector2d hi = -lo;
    for (const Vec3& offset : offsets) {
      const Eigen::Vector2d p(offset.dot(u_), offset.dot(v_));
      if (!p.allFinite()) continue;
      lo = lo.cwiseMin(p);
      hi = hi.cwiseMax(p);
    }
    double cell = (step_ + 2.0 * radius_) * (1.0 + 1e-9);
    lo.array() -= shadow + cell;
    hi.array() += shadow + cell;
    // Nothing to index (no finite root), or an overflowing layout the scene reader refuses
    // afterwards: no check.
    if (!(lo.x() <= hi.x()) || !(hi - lo).allFinite() || !std::isfinite(cell)) return;
    // Coarser cells (still correct, only less selective) keep the grid's memory bounded.
    auto count = [&](double width) { return std::floor(width / cell) + 1.0; };
    while (count(hi.x() - lo.x()) * count(hi.y() - lo.y()) > kMaxCells) cell *= 2.0;
    if (!std::isfinite(count(hi.x() - lo.x()) * count(hi.y() - lo.y()))) return;
    cell_ = cell;
    lo_ = lo;
    columns_ = static_cast<std::int64_t>(count(hi.x() - lo.x()));
    rows_ = static_cast<std::int64_t>(count(hi.y() - lo.y()));
    head_.assign(static_cast<std::size_t>(columns_ * rows_), -1);
    cell_seen_.assign(head_.size(), 0);
    indexed_ = true;
  }

  // The first earlier bristle the capsule base-tip comes closer than 2 r to, or -1. Its
  // work (cells visited, candidates tested) is added to `work`.
  int conflict(const Vec3& base, const Vec3& tip, std::int64_t& work) {
    // Non-finite tips (an overflowing length) are refused by the scene reader afterwards.
    if (!indexed_ || !base.allFinite() || !tip.allFinite()) return -1;
    ++query_;
    const Vec3 lo = base.cwiseMin(tip).array() - radius_, hi = base.cwiseMax(tip).array() + radius_;
    const Vec3 axis = tip - base;
    // The 3 x 3 blocks around consecutive samples overlap; each cell is visited once.
    for (const std::int64_t cell : shadow_cells(base, tip)) {
      const std::int64_t i = cell % columns_, j = cell / columns_;
      for (std::int64_t jj = std::max<std::int64_t>(j - 1, 0); jj <= std::min(j + 1, rows_ - 1); ++jj)
        for (std::int64_t ii = std::max<std::int64_t>(i - 1, 0); ii <= std::min(i + 1, columns_ - 1); ++ii) {
          const auto visited = static_cast<std::size_t>(jj * columns_ + ii);
          if (cell_seen_[visited] == query_) continue;
          cell_seen_[visited] = query_;
          ++work;
          for (int e = head_[visited]; e >= 0; e = entries_[e].next) {
            const int k = entries_[e].bristle;
            if (seen_[k] == query_) continue;
            seen_[k] = query_;
            ++work;
            const Capsule& other = planted_[k];
            if ((hi.array() < other.lo.array()).any() || (other.hi.array() < lo.array()).any()) continue;
            if (lines_clear(base, axis, other)) continue;
            if (segment_distance(base, tip, other.base, other.tip).distance < clearance_) return k;
          }
        }
    }
    return -1;
  }

  // Bristles are added in order, so planted_[k] is bristle k.
  void add(const Vec3& base, const Vec3& tip) {
    const int k = static_cast<int>(planted_.size());
    planted_.push_back({base, tip, base.cwiseMin(tip).array() - radius_, base.cwiseMax(tip).array() + radius_});
    seen_.push_back(0);
    if (!indexed_ || !base.allFinite() || !tip.allFinite()) return;
    for (const std::int64_t cell : shadow_cells(base, tip)) {
      entries_.push_back({k, head_[static_cast<std::size_t>(cell)]});
      head_[static_cast<std::size_t>(cell)] = static_cast<int>(entries_.size() - 1);
    }
  }

 private:
  static constexpr double kMaxShadowSteps = 64.0;
  static constexpr double kMaxCells = 1 << 22;

  struct Capsule {
    Vec3 base, tip, lo, hi;
  };

  // Whether the infinite lines through two capsules' axes are clearly farther apart than
  // the clearance: a cheap lower bound on the segments' distance, |(b2 - b1) . n| / |n| with
  // n = a1 x a2, which rejects most candidates of long, strongly tilted bristles without the
  // exact segment distance. Nearly parallel axes (n tiny, the bound ill-conditioned) and
  // bounds within a relative 1e-6 of the clearance are left to the exact test.
  bool lines_clear(const Vec3& base, const Vec3& axis, const Capsule& other) const {
    const Vec3 other_axis = other.tip - other.base;
    const Vec3 n = axis.cross(other_axis);
    const double nn = n.squaredNorm();
    if (!(nn > 1e-12 * axis.squaredNorm() * other_axis.squaredNorm())) return false;
    const double w = (other.base - base).dot(n);
    const double margin = clearance_ * (1.0 + 1e-6);
    return w * w > margin * margin * nn;
  }

  struct Entry {
    int bristle, next;  // the bristle whose shadow has a sample in this cell; the cell's next entry
  };

  // The distinct cells (row-major indices) of the shadow's samples, at most h apart, both
  // ends included, in order along the shadow.
  std::vector<std::int64_t> shadow_cells(const Vec3& base, const Vec3& tip) const {
    const Eigen::Vector2d a((base - origin_).dot(u_), (base - origin_).dot(v_));
    const Eigen::Vector2d b((tip - origin_).dot(u_), (tip - origin_).dot(v_));
    const int steps = static_cast<int>(std::min(std::ceil((b - a).norm() / step_), kMaxShadowSteps + 1.0));
    std::vector<std::int64_t> cells;
    for (int s = 0; s <= steps; ++s) {
      const Eigen::Vector2d p = steps == 0 ? a : Eigen::Vector2d(a + (b - a) * (static_cast<double>(s) / steps));
      auto index = [&](double x, double from, std::int64_t n) {
        const double q = std::floor((x - from) / cell_);
        return static_cast<std::int64_t>(std::clamp(q, 0.0, static_cast<double>(n - 1)));
      };
      const std::int64_t cell = index(p.y(), lo_.y(), rows_) * columns_ + index(p.x(), lo_.x(), columns_);
      if (cells.empty() || cells.back() != cell) cells.push_back(cell);
    }
    return cells;
  }

  Vec3 u_, v_, origin_;
  double radius_ = 0.0, clearance_ = 0.0, step_ = 0.0, cell_ = 0.0;
  Eigen::Vector2d lo_ = Eigen::Vector2d::Zero();
  std::int64_t columns_ = 0, rows_ = 0;
  bool indexed_ = false;
  std::vector<int> head_;  // per cell, its latest entry, or -1
  std::vector<Entry> entries_;
  std::vector<Capsule> planted_;
  std::vector<std::uint32_t> seen_;       // per bristle, the last query that tested it
  std::vector<std::uint32_t> cell_seen_;  // per cell, the last query that visited it
  std::uint32_t query_ = 0;
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

namespace {

// The helix of one curly bristle about its axis from `base` along the unit `axis`, `length`
// long (the formula in scene/generators.hpp, plant_brush).
std::vector<Vec3> curly_bristle(const Vec3& base, const Vec3& axis, double length, double radius, double pitch,
                                double phase, double sense, int segments) {
  const std::pair<Vec3, Vec3> frame = brush_base_axes(axis, 3);
  const double turns = length / pitch;
  std::vector<Vec3> vertices;
  vertices.reserve(static_cast<std::size_t>(segments) + 1);
  for (int i = 0; i <= segments; ++i) {
    const double t = static_cast<double>(i) / segments;
    const double angle = 2.0 * kPi * turns * t + phase;
    vertices.push_back(base + radius * (std::cos(angle) * frame.first + sense * std::sin(angle) * frame.second) +
                       (length * t) * axis);
  }
  return vertices;
}

}  // namespace

BrushPlanting plant_brush(const BrushSpec& spec) {
  assert(spec.length > 0.0 && spec.segments >= 1 && spec.spacing > 0.0);
  assert(!spec.curl.enabled || (spec.dimension == 3 && spec.curl.radius > 0.0 && spec.curl.pitch > 0.0));
  const Vec3 d = spec.direction.normalized();
  // Named copies, not a structured binding: a lambda below uses them, which C++17 allows only
  // for variables (clang refuses captured bindings).
  const std::pair<Vec3, Vec3> axes = brush_base_axes(d, spec.dimension);
  const Vec3 u = axes.first, v = axes.second;
  const std::vector<Vec3> offsets = brush_root_offsets(spec);
  SplitMix64 rng(spec.jitter.seed);
  SplitMix64 redraw(spec.jitter.seed ^ kBrushRedrawSalt);
  SplitMix64 curl_rng(spec.jitter.seed ^ kBrushCurlSalt);  // drawn from only for a curl

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
  BristleField field(spec, u, v, offsets);
  std::int64_t work = 0;

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
    Vec3 direction = jittered(tilt_draw, azimuth_draw);
    Vec3 tip = base + length * direction;
    if (check) {
      int draws = 1;
      for (int neighbour = field.conflict(base, tip, work); neighbour >= 0 || work > kMaxBrushOverlapWork;
           neighbour = field.conflict(base, tip, work)) {
        if (draws == kMaxBristleDraws || work > kMaxBrushOverlapWork) {
          planting.bristles.clear();
          planting.axes.clear();
          planting.failed = true;
          planting.conflict = {static_cast<int>(k), neighbour, draws, work > kMaxBrushOverlapWork};
          return planting;
        }
        const double tilt_redraw = redraw.uniform();
        const double azimuth_redraw = redraw.uniform();
        direction = jittered(tilt_redraw, azimuth_redraw);
        tip = base + length * direction;
        ++draws;
      }
      if (draws > 1) ++planting.redrawn;
      field.add(base, tip);
    }
    planting.axes.emplace_back(base, tip);
    if (!spec.curl.enabled) {
      planting.bristles.push_back(straight_rod(base, tip, spec.segments));
      continue;
    }
    // Always four draws per curly bristle, in this order.
    const double radius_draw = curl_rng.symmetric();
    const double pitch_draw = curl_rng.symmetric();
    const double phase_draw = curl_rng.uniform();
    const double hand_draw = curl_rng.uniform();
    const BrushCurl& curl = spec.curl;
    const bool right = curl.handedness == CurlHandedness::Random ? hand_draw < 0.5
                                                                : curl.handedness == CurlHandedness::Right;
    planting.bristles.push_back(curly_bristle(base, direction.normalized(), length, curl.radius * (1.0 + curl.jitter * radius_draw),
                                              curl.pitch * (1.0 + curl.jitter * pitch_draw), 2.0 * kPi * phase_draw,
                                              right ? 1.0 : -1.0, spec.segments));
  }
  return planting;
}

std::vector<std::vector<Vec3>> brush_bristles(const BrushSpec& spec) { return plant_brush(spec).bristles; }

}  // namespace bristle

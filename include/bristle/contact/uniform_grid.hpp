#pragma once
/// The uniform grid of cubic cells both segment broad phases use (contact/rod_overlaps.hpp at
/// a scene's start, contact/rod_contact.hpp in the step): a cell index per axis and a 64-bit
/// key, 21 bits per axis. Cells beyond are clamped to the last one: clamping is monotone, so
/// two boxes that overlap still share a cell (the grid stays conservative); NaN and overflowed
/// coordinates land in a border cell rather than in undefined behaviour.

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>

#include "bristle/math/types.hpp"

namespace bristle {

struct UniformGrid {
  static constexpr std::int64_t kMaxCell = (std::int64_t{1} << 21) - 1;
  using Cell = std::array<std::int64_t, 3>;

  Vec3 origin = Vec3::Zero();
  double size = 1.0;

  Cell cell(const Vec3& x) const {
    Cell c{};
    for (int k = 0; k < 3; ++k) {
      const double u = (x[k] - origin[k]) / size;
      c[k] = u >= 0.0 ? static_cast<std::int64_t>(std::min(std::floor(u), static_cast<double>(kMaxCell))) : 0;
    }
    return c;
  }
  static std::uint64_t key(const Cell& c) {
    return (static_cast<std::uint64_t>(c[0]) << 42) | (static_cast<std::uint64_t>(c[1]) << 21) |
           static_cast<std::uint64_t>(c[2]);
  }

  /// The grid both broad phases lay over their boxes (anything with Vec3 `lo` and `hi`): its
  /// origin the boxes' lower corner, its cells the mean box's largest side, and at least the
  /// extent over kMaxCell - 1, so that clamping is for overflow only. A box about as large as
  /// the mean touches a few cells. Size 1 where that is zero or not finite.
  template <class Boxes>
  static UniformGrid over(const Boxes& boxes) {
    UniformGrid grid;
    if (boxes.empty()) return grid;
    Vec3 lo = boxes.front().lo, hi = boxes.front().hi;
    double sides = 0.0;
    for (const auto& b : boxes) {
      lo = lo.cwiseMin(b.lo);
      hi = hi.cwiseMax(b.hi);
      sides += (b.hi - b.lo).maxCoeff();
    }
    grid.origin = lo;
    const double size = std::max(sides / static_cast<double>(boxes.size()), (hi - lo).maxCoeff() / (kMaxCell - 1));
    grid.size = size > 0.0 && std::isfinite(size) ? size : 1.0;
    return grid;
  }
};

}  // namespace bristle

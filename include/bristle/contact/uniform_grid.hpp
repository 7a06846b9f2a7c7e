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
};

}  // namespace bristle

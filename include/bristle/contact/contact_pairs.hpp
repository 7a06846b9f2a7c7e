#pragma once
/// Which pairs of rod segments rod-rod contact acts on: the one rule that RodContact (the
/// barrier) and ContactChecker (`bristle check-contact`) share (docs/contact.md, "Rod-rod
/// contact").

#include <cstdlib>

namespace bristle {

/// Whether segments a and b are left out of rod-rod contact. `Segment` has rod, index (within
/// the rod), arc_start (rest length of the rod before it), rest_length and radius.
/// - Segments of different rods: always in.
/// - Of one rod (self-contact): in only with `self`, when they share no vertex and more than
///   (pi / 2) (r_a + r_b) of the rod's rest length lies between them (a rod folded back onto
///   itself counts; neighbours along a tight bend do not).
template <class Segment>
bool contact_pair_excluded(const Segment& a, const Segment& b, bool self) {
  constexpr double kHalfPi = 1.57079632679489661923;
  if (a.rod != b.rod) return false;
  if (!self || std::abs(a.index - b.index) < 2) return true;
  const Segment& first = a.index < b.index ? a : b;
  const Segment& second = a.index < b.index ? b : a;
  return second.arc_start - (first.arc_start + first.rest_length) <= kHalfPi * (a.radius + b.radius);
}

}  // namespace bristle

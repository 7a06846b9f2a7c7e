#pragma once
/// Potential of a constant force on one vertex: gravity (f = m g) or a point load (f = F).
///
///   E = -f . x,   dE/dx = -f,   d2E/dx2 = 0
///
/// The Hessian is zero, so this term only enters the gradient.

#include "bristle/math/types.hpp"

namespace bristle {

template <int D>
inline double constant_force_energy(const Vec<D>& x, const Vec<D>& force) {
  return -force.dot(x);
}

template <int D>
inline Vec<D> constant_force_gradient(const Vec<D>& /*x*/, const Vec<D>& force) {
  return -force;
}

}  // namespace bristle

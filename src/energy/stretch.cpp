#include "bristle/energy/stretch.hpp"

#include <cassert>
#include <cmath>

namespace bristle {

template <int D>
double stretch_energy(const StretchStencil<D>& s, double rest_length, double stiffness) {
  const double strain = (s.x1 - s.x0).norm() - rest_length;
  return 0.5 * stiffness * strain * strain;
}

template <int D>
Vec<2 * D> stretch_gradient(const StretchStencil<D>& s, double rest_length, double stiffness) {
  const Vec<D> d = s.x1 - s.x0;
  const double length = d.norm();
  assert(length > 0.0 && "stretch gradient of a zero-length edge");
  const Vec<D> g1 = stiffness * (length - rest_length) / length * d;
  Vec<2 * D> g;
  g << -g1, g1;
  return g;
}

template <int D>
Mat<D, D> stretch_hessian_block(const StretchStencil<D>& s, double rest_length, double stiffness,
                                bool project) {
  const Vec<D> d = s.x1 - s.x0;
  const double length = d.norm();
  assert(length > 0.0 && "stretch Hessian of a zero-length edge");
  const Vec<D> t = d / length;
  const Mat<D, D> tt = t * t.transpose();
  double transverse = 1.0 - rest_length / length;
  if (project) transverse = std::max(0.0, transverse);
  return stiffness * (tt + transverse * (Mat<D, D>::Identity() - tt));
}

template <int D>
static Mat<2 * D, 2 * D> expand_block(const Mat<D, D>& b) {
  Mat<2 * D, 2 * D> h;
  h << b, -b, -b, b;
  return h;
}

template <int D>
Mat<2 * D, 2 * D> stretch_hessian(const StretchStencil<D>& s, double rest_length, double stiffness) {
  return expand_block<D>(stretch_hessian_block<D>(s, rest_length, stiffness, false));
}

template <int D>
Mat<2 * D, 2 * D> stretch_hessian_projected(const StretchStencil<D>& s, double rest_length,
                                            double stiffness) {
  return expand_block<D>(stretch_hessian_block<D>(s, rest_length, stiffness, true));
}

template <int D>
StretchLocal<D> stretch_local(const StretchStencil<D>& s, double rest_length, double stiffness, bool project) {
  const Vec<D> d = s.x1 - s.x0;
  const double length = d.norm();
  assert(length > 0.0 && "stretch kernel on a zero-length edge");
  const double strain = length - rest_length;
  const double inverse_length = 1.0 / length;  // one division, then products
  const Vec<D> t = d * inverse_length;
  StretchLocal<D> out;
  out.energy = 0.5 * stiffness * strain * strain;
  out.gradient1 = (stiffness * strain) * t;
  double transverse = 1.0 - rest_length * inverse_length;
  if (project) transverse = std::max(0.0, transverse);
  const Mat<D, D> tt = t * t.transpose();
  out.block = stiffness * (tt + transverse * (Mat<D, D>::Identity() - tt));
  return out;
}

#define BRISTLE_INSTANTIATE_STRETCH(D)                                                          \
  template double stretch_energy<D>(const StretchStencil<D>&, double, double);                 \
  template Vec<2 * D> stretch_gradient<D>(const StretchStencil<D>&, double, double);           \
  template Mat<2 * D, 2 * D> stretch_hessian<D>(const StretchStencil<D>&, double, double);     \
  template Mat<2 * D, 2 * D> stretch_hessian_projected<D>(const StretchStencil<D>&, double,    \
                                                          double);                             \
  template Mat<D, D> stretch_hessian_block<D>(const StretchStencil<D>&, double, double, bool); \
  template StretchLocal<D> stretch_local<D>(const StretchStencil<D>&, double, double, bool);

BRISTLE_INSTANTIATE_STRETCH(2)
BRISTLE_INSTANTIATE_STRETCH(3)

}  // namespace bristle

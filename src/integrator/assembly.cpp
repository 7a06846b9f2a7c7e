#include "bristle/integrator/assembly.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>

#include "bristle/energy/bend.hpp"
#include "bristle/energy/gravity.hpp"
#include "bristle/energy/stretch.hpp"
#include "bristle/math/psd_projection.hpp"

namespace bristle {
namespace {

/// Index of entry (row, col) in a compressed column-major matrix, or -1.
int find_slot(const SparseMatrix& m, int row, int col) {
  const int* begin = m.innerIndexPtr() + m.outerIndexPtr()[col];
  const int* end = m.innerIndexPtr() + m.outerIndexPtr()[col + 1];
  const int* it = std::lower_bound(begin, end, row);
  return (it != end && *it == row) ? static_cast<int>(it - m.innerIndexPtr()) : -1;
}

template <int D, int K>
Vec<K * D> gather(const VecX& x, const int (&dof)[K]) {
  Vec<K * D> local;
  for (int a = 0; a < K; ++a) local.template segment<D>(a * D) = x.segment<D>(dof[a]);
  return local;
}

template <int D, int K>
void scatter_add(VecX& y, const int (&dof)[K], const Vec<K * D>& local) {
  for (int a = 0; a < K; ++a) y.segment<D>(dof[a]) += local.template segment<D>(a * D);
}

/// Adds scale * H into the matrix values through an element's precomputed slots.
template <int D, int K>
void scatter_matrix(double* values, const int* slots, const Mat<K * D, K * D>& h, double scale) {
  for (int a = 0; a < K; ++a)
    for (int b = 0; b < K; ++b)
      for (int j = 0; j < D; ++j) {
        const int slot = slots[(a * K + b) * D + j];
        if (slot < 0) continue;
        for (int i = 0; i < D; ++i) values[slot + i] += scale * h(a * D + i, b * D + j);
      }
}

template <int D>
Mat<3 * D, 3 * D> bend_hessian_for(const BendStencil<D>& s, const BendElement& e,
                                   HessianProjection projection) {
  switch (projection) {
    case HessianProjection::Exact:
      return bend_hessian<D>(s, e.rest_angle, e.stiffness);
    case HessianProjection::GaussNewton:
      return bend_hessian_gauss_newton<D>(s, e.rest_angle, e.stiffness);
    case HessianProjection::Projected:
    default:
      return project_to_psd<3 * D>(bend_hessian<D>(s, e.rest_angle, e.stiffness));
  }
}

}  // namespace

int SystemAssembler::find_collapsed_edge(const VecX& x) const {
  const int d = model_.dimension;
  for (std::size_t k = 0; k < stretch_.size(); ++k) {
    const StretchElement& e = stretch_[k];
    const double squared_length = (x.segment(e.dof[1], d) - x.segment(e.dof[0], d)).squaredNorm();
    if (!(squared_length > 0.0) || !std::isfinite(squared_length)) return static_cast<int>(k);
  }
  return -1;
}

SystemAssembler::SystemAssembler(const Model& model) : model_(model) {
  const DofLayout& layout = model.layout;
  const int D = model.dimension;
  gravity_force_ = model.dof_masses();
  for (int dof = 0; dof < layout.dof_count(); dof += D)
    for (int k = 0; k < D; ++k) gravity_force_[dof + k] *= model.gravity[k];

  for (int r = 0; r < static_cast<int>(model.rods.size()); ++r) {
    const Rod& rod = model.rods[r];
    for (int j = 0; j < rod.edge_count(); ++j)
      stretch_.push_back({{layout.vertex_dof(r, j), layout.vertex_dof(r, j + 1)}, r,
                          rod.rest_lengths[j], rod.stretch_stiffness(j)});
    for (int i = 1; i + 1 < rod.vertex_count(); ++i)
      bend_.push_back({{layout.vertex_dof(r, i - 1), layout.vertex_dof(r, i), layout.vertex_dof(r, i + 1)},
                       r, i, rod.rest_angles[i], rod.bend_stiffness(i)});
  }
  build_pattern();
}

void SystemAssembler::build_pattern() {
  const DofLayout& layout = model_.layout;
  const int D = model_.dimension;
  const int n = layout.free_dof_count();

  std::vector<Eigen::Triplet<double, int>> entries;
  auto add_blocks = [&](const int* dof, int k) {
    for (int a = 0; a < k; ++a)
      for (int b = 0; b < k; ++b) {
        const int fa = layout.free_index(dof[a]), fb = layout.free_index(dof[b]);
        if (fa < 0 || fb < 0) continue;
        for (int i = 0; i < D; ++i)
          for (int j = 0; j < D; ++j) entries.emplace_back(fa + i, fb + j, 0.0);
      }
  };
  for (const auto& e : stretch_) add_blocks(e.dof, 2);
  for (const auto& e : bend_) add_blocks(e.dof, 3);
  for (int i = 0; i < n; ++i) entries.emplace_back(i, i, 0.0);  // the mass diagonal
  matrix_.resize(n, n);
  matrix_.setFromTriplets(entries.begin(), entries.end());
  matrix_.makeCompressed();

  auto slots_of = [&](const int* dof, int k, std::vector<int>& out) {
    for (int a = 0; a < k; ++a)
      for (int b = 0; b < k; ++b)
        for (int j = 0; j < D; ++j) {
          const int fa = layout.free_index(dof[a]), fb = layout.free_index(dof[b]);
          out.push_back(fa < 0 || fb < 0 ? -1 : find_slot(matrix_, fa, fb + j));
        }
  };
  for (const auto& e : stretch_) slots_of(e.dof, 2, stretch_slots_);
  for (const auto& e : bend_) slots_of(e.dof, 3, bend_slots_);
  diagonal_slots_.resize(n);
  for (int i = 0; i < n; ++i) diagonal_slots_[i] = find_slot(matrix_, i, i);
}

template <int D>
EnergyBreakdown SystemAssembler::energies_impl(const VecX& x, double time) const {
  EnergyBreakdown e;
  for (const auto& s : stretch_) {
    const Vec<2 * D> local = gather<D>(x, s.dof);
    e.stretch += stretch_energy<D>({local.template head<D>(), local.template tail<D>()},
                                   s.rest_length, s.stiffness);
  }
  for (const auto& b : bend_) {
    const Vec<3 * D> local = gather<D>(x, b.dof);
    e.bend += bend_energy<D>({local.template segment<D>(0), local.template segment<D>(D),
                              local.template segment<D>(2 * D)},
                             b.rest_angle, b.stiffness);
  }
  e.gravity = -gravity_force_.dot(x);
  for (const PointLoad& load : model_.loads) {
    const int dof = model_.layout.vertex_dof(load.rod, load.vertex);
    e.load += constant_force_energy<D>(x.segment<D>(dof), load.force_at(time).head<D>());
  }
  return e;
}

EnergyBreakdown SystemAssembler::potential_energies(const VecX& x, double time) const {
  return model_.dimension == 2 ? energies_impl<2>(x, time) : energies_impl<3>(x, time);
}

template <int D>
void SystemAssembler::assemble_impl(const VecX& x, double time, HessianProjection projection,
                                    double matrix_scale, VecX& gradient, const VecX* w,
                                    VecX* kw) {
  const bool want_matrix = matrix_scale != 0.0;
  const bool want_product = w != nullptr && kw != nullptr;
  double* values = matrix_.valuePtr();
  if (want_matrix) std::fill(values, values + matrix_.nonZeros(), 0.0);
  gradient = -gravity_force_;
  if (want_product) kw->setZero(x.size());

  for (std::size_t k = 0; k < stretch_.size(); ++k) {
    const StretchElement& e = stretch_[k];
    const Vec<2 * D> local = gather<D>(x, e.dof);
    const StretchStencil<D> s{local.template head<D>(), local.template tail<D>()};
    scatter_add<D>(gradient, e.dof, stretch_gradient<D>(s, e.rest_length, e.stiffness));
    if (!want_matrix && !want_product) continue;
    const Mat<2 * D, 2 * D> h = projection == HessianProjection::Exact
                                    ? stretch_hessian<D>(s, e.rest_length, e.stiffness)
                                    : stretch_hessian_projected<D>(s, e.rest_length, e.stiffness);
    if (want_matrix) scatter_matrix<D, 2>(values, &stretch_slots_[k * 4 * D], h, matrix_scale);
    if (want_product) scatter_add<D>(*kw, e.dof, Vec<2 * D>(h * gather<D>(*w, e.dof)));
  }
  for (std::size_t k = 0; k < bend_.size(); ++k) {
    const BendElement& e = bend_[k];
    const Vec<3 * D> local = gather<D>(x, e.dof);
    const BendStencil<D> s{local.template segment<D>(0), local.template segment<D>(D),
                           local.template segment<D>(2 * D)};
    scatter_add<D>(gradient, e.dof, bend_gradient<D>(s, e.rest_angle, e.stiffness));
    if (!want_matrix && !want_product) continue;
    const Mat<3 * D, 3 * D> h = bend_hessian_for<D>(s, e, projection);
    if (want_matrix) scatter_matrix<D, 3>(values, &bend_slots_[k * 9 * D], h, matrix_scale);
    if (want_product) scatter_add<D>(*kw, e.dof, Vec<3 * D>(h * gather<D>(*w, e.dof)));
  }
  for (const PointLoad& load : model_.loads) {
    const int dof = model_.layout.vertex_dof(load.rod, load.vertex);
    gradient.segment<D>(dof) += constant_force_gradient<D>(x.segment<D>(dof), load.force_at(time).head<D>());
  }
}

void SystemAssembler::assemble(const VecX& x, double time, HessianProjection projection,
                               double matrix_scale, VecX& gradient, const VecX* w,
                               VecX* stiffness_times_w) {
  if (model_.dimension == 2)
    assemble_impl<2>(x, time, projection, matrix_scale, gradient, w, stiffness_times_w);
  else
    assemble_impl<3>(x, time, projection, matrix_scale, gradient, w, stiffness_times_w);
}

}  // namespace bristle

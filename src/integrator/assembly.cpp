#include "bristle/integrator/assembly.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>

#include <omp.h>

#include "bristle/energy/bend.hpp"
#include "bristle/energy/gravity.hpp"
#include "bristle/energy/stretch.hpp"

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

/// Where an element's lower D x D blocks start in its rod's band: pair (a, b), a >= b, is
/// base(a, b); entry (free(a) + i, free(b) + j) is at base(a, b) + i w + j (band_storage.hpp:
/// consecutive rows are w + 1 apart and one column further from the diagonal).
template <int K>
struct ElementBases {
  const int* data;
  int w;
  static constexpr int kPairs = K * (K + 1) / 2;
  int base(int a, int b) const { return data[a * (a + 1) / 2 + b]; }
};

/// Adds scale * H into the band: the element's lower blocks, H's (row a, column b) entries.
template <int D, int K>
void scatter_matrix(double* band, ElementBases<K> bases, const Mat<K * D, K * D>& h, double scale) {
  for (int a = 0; a < K; ++a)
    for (int b = 0; b <= a; ++b) {
      const int base = bases.base(a, b);
      if (base < 0) continue;
      for (int i = 0; i < D; ++i)
        for (int j = 0; j < (a == b ? i + 1 : D); ++j) band[base + i * bases.w + j] += scale * h(a * D + i, b * D + j);
    }
}

/// Adds scale * [[B, -B], [-B, B]] into the band (lower blocks (0, 0), (1, 0), (1, 1)).
template <int D>
void scatter_stretch_block(double* band, ElementBases<2> bases, const Mat<D, D>& block, double scale) {
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b <= a; ++b) {
      const int base = bases.base(a, b);
      if (base < 0) continue;
      const double sign = a == b ? scale : -scale;
      for (int i = 0; i < D; ++i)
        for (int j = 0; j < (a == b ? i + 1 : D); ++j) band[base + i * bases.w + j] += sign * block(i, j);
    }
}

/// Adds scale * sum_k value_k G_k G_k^T over the positive terms of the spectrum into the band.
/// Lower block (a, b), a > b, is the transpose of sum_t (w_t G_b) G_a^T, diagonal block (a, a)
/// sum_t (w_t G_a) G_a^T; the same products, in the same order, as when the upper triangle
/// was summed too.
template <int D>
void scatter_projected_spectrum(double* band, ElementBases<3> bases, const BendHessianSpectrum<D>& spectrum,
                                double scale) {
  constexpr int kCount = BendHessianSpectrum<D>::kCount;
  double weight[kCount];
  int terms[kCount];
  int count = 0;
  for (int k = 0; k < kCount; ++k)
    if (spectrum.value[k] > 0.0) {
      weight[count] = scale * spectrum.value[k];
      terms[count++] = k;
    }
  for (int a = 0; a < 3; ++a)
    for (int b = 0; b <= a; ++b) {
      const int base = bases.base(a, b);
      if (base < 0) continue;
      Mat<D, D> block = Mat<D, D>::Zero();  // rows: vertex b, columns: vertex a
      for (int t = 0; t < count; ++t) {
        const Vec<3 * D>& g = spectrum.vector[terms[t]];
        block.noalias() += (weight[t] * g.template segment<D>(b * D)) * g.template segment<D>(a * D).transpose();
      }
      for (int i = 0; i < D; ++i)
        for (int j = 0; j < (a == b ? i + 1 : D); ++j) band[base + i * bases.w + j] += a == b ? block(i, j) : block(j, i);
    }
}

// Rods per chunk of the threaded assembly loop: small enough to even out, large enough that
// handing chunks out costs nothing next to assembling them.
constexpr int kRodChunk = 8;

constexpr std::size_t kStretchPairs = ElementBases<2>::kPairs;
constexpr std::size_t kBendPairs = ElementBases<3>::kPairs;

}  // namespace

int SystemAssembler::find_collapsed_edge(const VecX& x) const {
  // The first such edge: a min-reduction, the same answer for every thread count.
  const int d = model_.dimension;
  const int edges = static_cast<int>(stretch_.size());
  int first = edges;
#pragma omp parallel for schedule(static) num_threads(threads_) if (threads_ > 1 && edges > 5000) reduction(min : first)
  for (int k = 0; k < edges; ++k) {
    const StretchElement& e = stretch_[k];
    const double squared_length = (x.segment(e.dof[1], d) - x.segment(e.dof[0], d)).squaredNorm();
    if (!(squared_length > 0.0) || !std::isfinite(squared_length)) first = std::min(first, k);
  }
  return first < edges ? first : -1;
}

SystemAssembler::SystemAssembler(const Model& model) : model_(model) {
  const DofLayout& layout = model.layout;
  const int D = model.dimension;
  const int rods = static_cast<int>(model.rods.size());
  gravity_force_ = model.dof_masses();
  for (int g = 0; g < layout.vertex_count(); ++g)
    for (int k = 0; k < D; ++k) gravity_force_[layout.vertex_dof(g) + k] *= model.gravity[k];

  rod_stretch_.assign(1, 0);
  rod_bend_.assign(1, 0);
  for (int r = 0; r < rods; ++r) {
    const Rod& rod = model.rods[r];
    for (int j = 0; j < rod.edge_count(); ++j)
      stretch_.push_back({{layout.vertex_dof(r, j), layout.vertex_dof(r, j + 1)}, r,
                          rod.rest_lengths[j], rod.stretch_stiffness(j)});
    for (int i = 1; i + 1 < rod.vertex_count(); ++i)
      bend_.push_back({{layout.vertex_dof(r, i - 1), layout.vertex_dof(r, i), layout.vertex_dof(r, i + 1)},
                       r, i, rod.rest_angles[i], rod.bend_stiffness(i)});
    rod_stretch_.push_back(static_cast<int>(stretch_.size()));
    rod_bend_.push_back(static_cast<int>(bend_.size()));
  }
  rod_loads_.assign(rods + 1, 0);
  for (const PointLoad& load : model.loads) ++rod_loads_[load.rod + 1];
  for (int r = 0; r < rods; ++r) rod_loads_[r + 1] += rod_loads_[r];
  loads_by_rod_.assign(model.loads.size(), 0);
  std::vector<int> next_load(rod_loads_.begin(), rod_loads_.end() - 1);
  for (std::size_t k = 0; k < model.loads.size(); ++k) loads_by_rod_[next_load[model.loads[k].rod]++] = static_cast<int>(k);
  rod_stretch_energy_.assign(rods, 0.0);
  rod_bend_energy_.assign(rods, 0.0);
  thread_bands_.resize(1);
  build_pattern();
}

void SystemAssembler::build_pattern() {
  const DofLayout& layout = model_.layout;
  const int D = model_.dimension;
  const int n = layout.free_dof_count();
  const int vertices = layout.vertex_count();

  // Vertex adjacency (with itself) from the elements, as compressed rows: count, fill, sort.
  std::vector<int> vertex_of_dof(layout.dof_count(), -1);
  for (int g = 0; g < vertices; ++g) vertex_of_dof[layout.vertex_dof(g)] = g;
  std::vector<int> start(vertices + 1, 0);
  auto for_each_pair = [&](auto&& visit) {
    for (const auto& e : stretch_)
      for (int a = 0; a < 2; ++a)
        for (int b = 0; b < 2; ++b) visit(vertex_of_dof[e.dof[a]], vertex_of_dof[e.dof[b]]);
    for (const auto& e : bend_)
      for (int a = 0; a < 3; ++a)
        for (int b = 0; b < 3; ++b) visit(vertex_of_dof[e.dof[a]], vertex_of_dof[e.dof[b]]);
    for (int g = 0; g < vertices; ++g) visit(g, g);  // the mass diagonal
  };
  for_each_pair([&](int a, int) { ++start[a + 1]; });
  for (int g = 0; g < vertices; ++g) start[g + 1] += start[g];
  std::vector<int> neighbours(start[vertices]);
  std::vector<int> fill(start.begin(), start.end() - 1);
  for_each_pair([&](int a, int b) { neighbours[fill[a]++] = b; });
  std::vector<int> unique_end(vertices);
  for (int g = 0; g < vertices; ++g) {
    auto first = neighbours.begin() + start[g], last = neighbours.begin() + start[g + 1];
    std::sort(first, last);
    unique_end[g] = static_cast<int>(std::unique(first, last) - neighbours.begin());
  }

  // Column j of the free-free matrix (free DOF j of vertex g) holds the free DOFs of g's
  // neighbours, in increasing order (free numbering follows the vertex order).
  std::vector<int> outer(n + 1, 0), inner;
  std::vector<int> free_vertex_dof(n);
  for (int g = 0; g < vertices; ++g) {
    const int dof = layout.vertex_dof(g);
    for (int j = 0; j < D; ++j)
      if (layout.free_index(dof + j) >= 0) free_vertex_dof[layout.free_index(dof + j)] = g;
  }
  for (int col = 0; col < n; ++col) {
    const int g = free_vertex_dof[col];
    for (int k = start[g]; k < unique_end[g]; ++k) {
      const int dof = layout.vertex_dof(neighbours[k]);
      for (int i = 0; i < D; ++i) {
        const int f = layout.free_index(dof + i);
        if (f >= 0) inner.push_back(f);
      }
    }
    outer[col + 1] = static_cast<int>(inner.size());
  }
  std::vector<double> zeros(inner.size(), 0.0);
  matrix_ = Eigen::Map<const SparseMatrix>(n, n, static_cast<int>(inner.size()), outer.data(), inner.data(), zeros.data());
  matrix_.makeCompressed();

  diagonal_slots_.resize(n);
  for (int i = 0; i < n; ++i) diagonal_slots_[i] = find_slot(matrix_, i, i);
  const int* outer_index = matrix_.outerIndexPtr();
  const int* inner_index = matrix_.innerIndexPtr();

  // Each rod's block: its free DOFs (contiguous) and its half-bandwidth.
  const int rods = static_cast<int>(model_.rods.size());
  rod_free_.assign(rods + 1, 0);
  rod_band_width_.assign(rods, 0);
  std::vector<int> rod_of_free(n, -1);
  std::size_t longest_band = 0;
  for (int r = 0; r < rods; ++r) {
    const auto [begin, end] = layout.rod_free_range(r);
    rod_free_[r] = begin;
    rod_free_[r + 1] = end;
    int w = 0;
    for (int col = begin; col < end; ++col) {
      rod_of_free[col] = r;
      for (int k = outer_index[col]; k < outer_index[col + 1]; ++k) w = std::max(w, inner_index[k] - col);
    }
    rod_band_width_[r] = w;
    longest_band = std::max(longest_band, static_cast<std::size_t>(band_length(end - begin, w)));
  }
  for (auto& band : thread_bands_) band.assign(longest_band, 0.0);

  // Band bases of each element's lower blocks.
  auto bases_of = [&](const int* dof, int k, std::vector<int>& out) {
    for (int a = 0; a < k; ++a)
      for (int b = 0; b <= a; ++b) {
        const int fa = layout.free_index(dof[a]), fb = layout.free_index(dof[b]);
        if (fa < 0 || fb < 0) {
          out.push_back(-1);
          continue;
        }
        const int r = rod_of_free[fa];
        out.push_back(band_index(fa - rod_free_[r], fb - rod_free_[r], rod_band_width_[r]));
      }
  };
  stretch_bases_.clear();
  bend_bases_.clear();
  stretch_bases_.reserve(stretch_.size() * kStretchPairs);
  bend_bases_.reserve(bend_.size() * kBendPairs);
  for (const auto& e : stretch_) bases_of(e.dof, 2, stretch_bases_);
  for (const auto& e : bend_) bases_of(e.dof, 3, bend_bases_);

  // The runs that copy each rod's band into matrix_: every stored entry (row, col) of the rod's
  // columns comes from band entry (max(row, col), min(row, col)).
  expand_runs_.clear();
  rod_runs_.assign(rods + 1, 0);
  for (int r = 0; r < rods; ++r) {
    const int first = rod_free_[r], w = rod_band_width_[r];
    for (int col = rod_free_[r]; col < rod_free_[r + 1]; ++col)
      for (int k = outer_index[col]; k < outer_index[col + 1]; ++k) {
        const int i = inner_index[k] - first, j = col - first;
        const int source = i >= j ? band_index(i, j, w) : band_index(j, i, w);
        ExpandRun* last = expand_runs_.size() > static_cast<std::size_t>(rod_runs_[r]) ? &expand_runs_.back() : nullptr;
        if (last != nullptr && last->value_target + last->count == k &&
            (last->count == 1 ? source > last->band_source
                              : last->band_source + last->count * last->stride == source)) {
          if (last->count == 1) last->stride = source - last->band_source;
          ++last->count;
        } else {
          expand_runs_.push_back({source, k, 1, 1});
        }
      }
    rod_runs_[r + 1] = static_cast<int>(expand_runs_.size());
  }
}

void SystemAssembler::set_threads(int threads) {
  threads_ = threads < 1 ? 1 : threads;
  const std::size_t length = thread_bands_.empty() ? 0 : thread_bands_.front().size();
  thread_bands_.assign(threads_, std::vector<double>(length, 0.0));
}

template <int D>
void SystemAssembler::rod_energies(int rod, const VecX& x) const {
  double stretch = 0.0, bend = 0.0;
  for (int k = rod_stretch_[rod]; k < rod_stretch_[rod + 1]; ++k) {
    const StretchElement& s = stretch_[k];
    stretch += stretch_energy<D>({x.segment<D>(s.dof[0]), x.segment<D>(s.dof[1])}, s.rest_length, s.stiffness);
  }
  for (int k = rod_bend_[rod]; k < rod_bend_[rod + 1]; ++k) {
    const BendElement& b = bend_[k];
    bend += bend_energy<D>({x.segment<D>(b.dof[0]), x.segment<D>(b.dof[1]), x.segment<D>(b.dof[2])},
                           b.rest_angle, b.stiffness);
  }
  rod_stretch_energy_[rod] = stretch;
  rod_bend_energy_[rod] = bend;
}

EnergyBreakdown SystemAssembler::sum_rod_energies(const VecX& x, double time) const {
  EnergyBreakdown e;
  for (std::size_t r = 0; r < rod_stretch_energy_.size(); ++r) {
    e.stretch += rod_stretch_energy_[r];
    e.bend += rod_bend_energy_[r];
  }
  e.gravity = -gravity_force_.dot(x);
  const int D = model_.dimension;
  for (const PointLoad& load : model_.loads) {
    const int dof = model_.layout.vertex_dof(load.rod, load.vertex);
    e.load -= load.force_at(time).head(D).dot(x.segment(dof, D));
  }
  return e;
}

EnergyBreakdown SystemAssembler::potential_energies(const VecX& x, double time) const {
  const int rods = static_cast<int>(model_.rods.size());
  if (model_.dimension == 2) {
#pragma omp parallel for schedule(static) num_threads(threads_) if (threads_ > 1)
    for (int r = 0; r < rods; ++r) rod_energies<2>(r, x);
  } else {
#pragma omp parallel for schedule(static) num_threads(threads_) if (threads_ > 1)
    for (int r = 0; r < rods; ++r) rod_energies<3>(r, x);
  }
  return sum_rod_energies(x, time);
}

template <int D>
void SystemAssembler::assemble_rod(int rod, const VecX& x, double time, HessianProjection projection,
                                   double matrix_scale, VecX& gradient, const VecX* w, VecX* kw, bool want_energy,
                                   double* band) {
  const bool want_matrix = matrix_scale != 0.0;
  const bool want_product = w != nullptr && kw != nullptr;
  const bool want_hessian = want_matrix || want_product;
  const int band_width = rod_band_width_[rod];
  const auto [dof_begin, dof_end] = model_.layout.rod_dof_range(rod);
  gradient.segment(dof_begin, dof_end - dof_begin) = -gravity_force_.segment(dof_begin, dof_end - dof_begin);
  if (want_product) kw->segment(dof_begin, dof_end - dof_begin).setZero();
  if (want_matrix) std::fill(band, band + band_length(rod_free_[rod + 1] - rod_free_[rod], band_width), 0.0);
  double stretch_energy_sum = 0.0, bend_energy_sum = 0.0;

  for (int k = rod_stretch_[rod]; k < rod_stretch_[rod + 1]; ++k) {
    const StretchElement& e = stretch_[k];
    const StretchStencil<D> s{x.segment<D>(e.dof[0]), x.segment<D>(e.dof[1])};
    const StretchLocal<D> local =
        stretch_local<D>(s, e.rest_length, e.stiffness, projection != HessianProjection::Exact);
    stretch_energy_sum += local.energy;
    gradient.segment<D>(e.dof[0]) -= local.gradient1;
    gradient.segment<D>(e.dof[1]) += local.gradient1;
    if (want_matrix) scatter_stretch_block<D>(band, ElementBases<2>{&stretch_bases_[k * kStretchPairs], band_width}, local.block, matrix_scale);
    if (want_product) {
      const Vec<D> f = local.block * (w->segment<D>(e.dof[1]) - w->segment<D>(e.dof[0]));
      kw->segment<D>(e.dof[0]) -= f;
      kw->segment<D>(e.dof[1]) += f;
    }
  }
  for (int k = rod_bend_[rod]; k < rod_bend_[rod + 1]; ++k) {
    const BendElement& e = bend_[k];
    const BendStencil<D> s{x.segment<D>(e.dof[0]), x.segment<D>(e.dof[1]), x.segment<D>(e.dof[2])};
    Mat<3 * D, 3 * D> h;
    if (projection == HessianProjection::Projected || projection == HessianProjection::BendingModes) {
      // The fused kernel: energy, gradient and the closed-form spectrum from one set of frames.
      const BendLocal<D> local = projection == HessianProjection::Projected
                                     ? bend_local<D>(s, e.rest_angle, e.stiffness, true)
                                     : bend_local_bending_modes<D>(s, e.rest_angle, e.stiffness);
      bend_energy_sum += local.energy;
      scatter_add<D>(gradient, e.dof, local.gradient);
      if (!want_hessian) continue;
      if (want_matrix) scatter_projected_spectrum<D>(band, ElementBases<3>{&bend_bases_[k * kBendPairs], band_width}, local.spectrum, matrix_scale);
      if (want_product) {
        // K w from the rank-one terms: sum of value G (G . w), no 9 x 9 product.
        const Vec<3 * D> local_w = gather<D>(*w, e.dof);
        Vec<3 * D> kw_local = Vec<3 * D>::Zero();
        for (int m = 0; m < BendHessianSpectrum<D>::kCount; ++m)
          if (local.spectrum.value[m] > 0.0)
            kw_local += (local.spectrum.value[m] * local.spectrum.vector[m].dot(local_w)) * local.spectrum.vector[m];
        scatter_add<D>(*kw, e.dof, kw_local);
      }
      continue;
    } else {
      if (want_energy) bend_energy_sum += bend_energy<D>(s, e.rest_angle, e.stiffness);
      scatter_add<D>(gradient, e.dof, bend_gradient<D>(s, e.rest_angle, e.stiffness));
      if (!want_hessian) continue;
      h = projection == HessianProjection::Exact ? bend_hessian<D>(s, e.rest_angle, e.stiffness)
                                                 : bend_hessian_gauss_newton<D>(s, e.rest_angle, e.stiffness);
    }
    if (want_matrix) scatter_matrix<D, 3>(band, ElementBases<3>{&bend_bases_[k * kBendPairs], band_width}, h, matrix_scale);
    if (want_product) scatter_add<D>(*kw, e.dof, Vec<3 * D>(h * gather<D>(*w, e.dof)));
  }
  rod_stretch_energy_[rod] = stretch_energy_sum;
  rod_bend_energy_[rod] = bend_energy_sum;
  // Point loads on this rod, in the order the scene lists them.
  for (int k = rod_loads_[rod]; k < rod_loads_[rod + 1]; ++k) {
    const PointLoad& load = model_.loads[loads_by_rod_[k]];
    const int dof = model_.layout.vertex_dof(load.rod, load.vertex);
    gradient.segment<D>(dof) -= load.force_at(time).template head<D>();
  }
}

void SystemAssembler::add_diagonal_and_expand(int rod, double* band, const VecX* matrix_diagonal) {
  const int first = rod_free_[rod], w = rod_band_width_[rod];
  if (matrix_diagonal != nullptr) {
    const auto [dof_begin, dof_end] = model_.layout.rod_dof_range(rod);
    for (int dof = dof_begin; dof < dof_end; ++dof) {
      const int f = model_.layout.free_index(dof);
      if (f >= 0) band[band_index(f - first, f - first, w)] += (*matrix_diagonal)[dof];
    }
  }
  double* values = matrix_.valuePtr();
  for (int k = rod_runs_[rod]; k < rod_runs_[rod + 1]; ++k) {
    const ExpandRun& run = expand_runs_[k];
    const double* from = band + run.band_source;
    double* to = values + run.value_target;
    // One loop for both strides: runs are short (a vertex's neighbours, 15 entries per column
    // in 3D), too short for a library copy's call to pay off.
    for (int r = 0; r < run.count; ++r) to[r] = from[static_cast<std::ptrdiff_t>(r) * run.stride];
  }
}

void SystemAssembler::assemble(const VecX& x, double time, HessianProjection projection, double matrix_scale,
                               VecX& gradient, const VecX* w, VecX* stiffness_times_w, EnergyBreakdown* potential,
                               const RodCallback& after_rod, const VecX* matrix_diagonal) {
  const int rods = static_cast<int>(model_.rods.size());
  gradient.resize(x.size());
  if (w != nullptr && stiffness_times_w != nullptr) stiffness_times_w->resize(x.size());
  const bool want_energy = potential != nullptr;
  const bool want_matrix = matrix_scale != 0.0;
  auto assemble_one = [&](int r) {
    double* band = thread_bands_[omp_get_thread_num()].data();
    if (model_.dimension == 2)
      assemble_rod<2>(r, x, time, projection, matrix_scale, gradient, w, stiffness_times_w, want_energy, band);
    else
      assemble_rod<3>(r, x, time, projection, matrix_scale, gradient, w, stiffness_times_w, want_energy, band);
    BandView block;
    if (want_matrix) {
      add_diagonal_and_expand(r, band, matrix_diagonal);
      block = {band, rod_free_[r + 1] - rod_free_[r], rod_band_width_[r]};
    }
    if (after_rod) after_rod(r, block);
  };
  // Rods in chunks handed out as threads finish (each rod computed by one thread, the same
  // arithmetic on any): on a shared machine a thread can be held up for a while, and a fixed
  // split would leave the other waiting at the end of the loop.
#pragma omp parallel for schedule(dynamic, kRodChunk) num_threads(threads_) if (threads_ > 1)
  for (int r = 0; r < rods; ++r) assemble_one(r);
  if (want_energy) *potential = sum_rod_energies(x, time);
}

}  // namespace bristle

#include "bristle/integrator/assembly.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstring>

#include <omp.h>

#include "bristle/energy/gravity.hpp"

namespace bristle {
namespace {

/// Index of entry (row, col) in a compressed column-major matrix, or -1.
int find_slot(const SparseMatrix& m, int row, int col) {
  const int* begin = m.innerIndexPtr() + m.outerIndexPtr()[col];
  const int* end = m.innerIndexPtr() + m.outerIndexPtr()[col + 1];
  const int* it = std::lower_bound(begin, end, row);
  return (it != end && *it == row) ? static_cast<int>(it - m.innerIndexPtr()) : -1;
}

// Rods per chunk of the threaded assembly loop: small enough to even out, large enough that
// handing chunks out costs nothing next to assembling them.
constexpr int kRodChunk = 8;

}  // namespace

int SystemAssembler::find_collapsed_edge(const VecX& x) const {
  // The first such edge: a min-reduction, the same answer for every thread count.
  const int d = model_.dimension;
  const ElementTable<StretchTerm>& stretch = std::get<ElementTable<StretchTerm>>(terms_);
  const int edges = stretch.size();
  int first = edges;
#pragma omp parallel for schedule(static) num_threads(threads_) if (threads_ > 1 && edges > 5000) reduction(min : first)
  for (int k = 0; k < edges; ++k) {
    const auto& dof = stretch.dofs(k);
    const double squared_length = (x.segment(dof[1], d) - x.segment(dof[0], d)).squaredNorm();
    if (!(squared_length > 0.0) || !std::isfinite(squared_length)) first = std::min(first, k);
  }
  return first < edges ? first : -1;
}

std::pair<int, int> SystemAssembler::stretch_edge(int edge) const {
  return model_.layout.dof_owner(std::get<ElementTable<StretchTerm>>(terms_).dofs(edge)[0]);
}

SystemAssembler::SystemAssembler(const Model& model) : model_(model) {
  const DofLayout& layout = model.layout;
  const int D = model.dimension;
  const int rods = static_cast<int>(model.rods.size());
  // m_i g on vertex DOFs; none on twist DOFs (their "mass" is a moment of inertia).
  const VecX masses = model.dof_masses();
  gravity_force_ = VecX::Zero(layout.dof_count());
  for (int g = 0; g < layout.vertex_count(); ++g)
    for (int k = 0; k < D; ++k) gravity_force_[layout.vertex_dof(g) + k] = masses[layout.vertex_dof(g) + k] * model.gravity[k];

  std::apply([&](auto&... table) { (table.build(model), ...); }, terms_);
  for_each_term([&](const auto& table) {
    if constexpr (HasKeptState<typename std::decay_t<decltype(table)>::Term>::value)
      keeps_state_ = keeps_state_ || (model.dimension == 3 && table.size() > 0);
  });
  rod_loads_.assign(rods + 1, 0);
  for (const PointLoad& load : model.loads) ++rod_loads_[load.rod + 1];
  for (int r = 0; r < rods; ++r) rod_loads_[r + 1] += rod_loads_[r];
  loads_by_rod_.assign(model.loads.size(), 0);
  std::vector<int> next_load(rod_loads_.begin(), rod_loads_.end() - 1);
  for (std::size_t k = 0; k < model.loads.size(); ++k) loads_by_rod_[next_load[model.loads[k].rod]++] = static_cast<int>(k);
  thread_bands_.resize(1);
  build_pattern();
}

void SystemAssembler::build_pattern() {
  const DofLayout& layout = model_.layout;
  const int n = layout.free_dof_count();
  const int vertices = layout.node_count();  // nodes: vertices and twist edges

  // Node adjacency (with itself) from the elements, as compressed rows: count, fill, sort.
  std::vector<int> vertex_of_dof(layout.dof_count(), -1);
  for (int g = 0; g < vertices; ++g) vertex_of_dof[layout.node_dof(g)] = g;
  std::vector<int> start(vertices + 1, 0);
  auto for_each_pair = [&](auto&& visit) {
    for_each_term([&](const auto& table) {
      table.for_each_slot_pair([&](int a, int b) { visit(vertex_of_dof[a], vertex_of_dof[b]); });
    });
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

  // Column j of the free-free matrix (free DOF j of node g) holds the free DOFs of g's
  // neighbours, in increasing order (free numbering follows the node order).
  std::vector<int> outer(n + 1, 0), inner;
  std::vector<int> free_vertex_dof(n);
  for (int g = 0; g < vertices; ++g)
    for (int dof = layout.node_dof(g); dof < layout.node_dof(g + 1); ++dof)
      if (layout.free_index(dof) >= 0) free_vertex_dof[layout.free_index(dof)] = g;
  for (int col = 0; col < n; ++col) {
    const int g = free_vertex_dof[col];
    for (int k = start[g]; k < unique_end[g]; ++k) {
      const int node = neighbours[k];
      for (int dof = layout.node_dof(node); dof < layout.node_dof(node + 1); ++dof) {
        const int f = layout.free_index(dof);
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
  std::apply(
      [&](auto&... table) {
        (table.compute_bases(layout,
                             [&](int free) {
                               const int r = rod_of_free[free];
                               return std::pair<int, int>{rod_free_[r], rod_band_width_[r]};
                             }),
         ...);
      },
      terms_);

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

bool SystemAssembler::same_as_kept(const VecX& x) const {
  return kept_positions_.size() == x.size() &&
         std::memcmp(kept_positions_.data(), x.data(), sizeof(double) * static_cast<std::size_t>(x.size())) == 0;
}

void SystemAssembler::advance(const VecX& x) {
  // Only 3D rods carry frames (rods with twist); the 2D instantiation has nothing to commit.
  if (model_.dimension != 3) return;
  // The step commits the positions its convergence test's gradient pass has just carried the
  // frames to: taking those saves carrying every edge's frame again (6% of a step of rods with
  // twist, docs/performance.md). Only where the positions are the same bit for bit and nothing
  // was committed since that pass; otherwise the frames are carried here.
  const bool kept = kept_valid_ && same_as_kept(x);
  kept_valid_ = false;
  forget_unchanged_rods();  // the frames change
  last_advance_reused_ = kept;
  locals_valid_ = kept;  // the kept results are at these positions with these frames
  std::apply([&](auto&... table) { (table.template advance<3>(x, kept), ...); }, terms_);
}

SystemAssembler::ElementState SystemAssembler::element_state() const {
  ElementState state;
  std::apply(
      [&](auto&... saved) {
        std::apply(
            [&](const auto&... table) {
              // Only terms that commit state are saved; the others' constants never change.
              auto save = [](auto& into, const auto& from) {
                if constexpr (HasAdvance<typename std::decay_t<decltype(from)>::Term>::value) into = from.constants();
              };
              (save(saved, table), ...);
            },
            terms_);
      },
      state);
  return state;
}

void SystemAssembler::restore_element_state(const ElementState& saved) {
  kept_valid_ = false;  // kept from the frames being replaced
  locals_valid_ = false;
  forget_unchanged_rods();
  std::apply(
      [&](const auto&... from) {
        std::apply(
            [&](auto&... table) {
              auto restore = [](auto& into, const auto& state) {
                if constexpr (HasAdvance<typename std::decay_t<decltype(into)>::Term>::value)
                  into.restore_constants(state);
              };
              (restore(table, from), ...);
            },
            terms_);
      },
      saved);
}

void SystemAssembler::set_reuse_unchanged_rods(bool on) {
  reuse_enabled_ = on;
  forget_unchanged_rods();
}

void SystemAssembler::forget_unchanged_rods() { reuse_valid_.assign(model_.rods.size(), 0); }

bool SystemAssembler::rod_unchanged(int rod, const VecX& x, const VecX* matrix_diagonal) const {
  if (!reuse_valid_[rod]) return false;
  const auto [begin, end] = model_.layout.rod_dof_range(rod);
  const std::size_t bytes = sizeof(double) * static_cast<std::size_t>(end - begin);
  return std::memcmp(x.data() + begin, reuse_x_.data() + begin, bytes) == 0 &&
         (matrix_diagonal == nullptr ||
          std::memcmp(matrix_diagonal->data() + begin, reuse_diagonal_.data() + begin, bytes) == 0);
}

void SystemAssembler::set_threads(int threads) {
  threads_ = threads < 1 ? 1 : threads;
  const std::size_t length = thread_bands_.empty() ? 0 : thread_bands_.front().size();
  thread_bands_.assign(threads_, std::vector<double>(length, 0.0));
}

template <int D>
void SystemAssembler::rod_energies(int rod, const VecX& x) const {
  for_each_term([&](const auto& table) { table.template rod_energy<D>(rod, x); });
}

EnergyBreakdown SystemAssembler::sum_rod_energies(const VecX& x, double time) const {
  EnergyBreakdown e;
  e.has_twist = model_.layout.twist_dof_count() > 0;
  e.has_rod_contact = model_.rod_contact.enabled;
  const int rods = static_cast<int>(model_.rods.size());
  for_each_term([&](const auto& table) {
    constexpr auto entries = EnergyEntries<typename std::decay_t<decltype(table)>::Term>::value;
    for (std::size_t p = 0; p < entries.size(); ++p) {
      double& sum = e.of(entries[p]);
      for (int r = 0; r < rods; ++r) sum += table.last_rod_energy_parts(r)[p];
      if (table.coupling_size() > 0) sum += table.last_coupling_energy_parts()[p];
    }
  });
  e.gravity = -gravity_force_.dot(x);
  const int D = model_.dimension;
  for (const PointLoad& load : model_.loads) {
    const int dof = model_.layout.vertex_dof(load.rod, load.vertex);
    e.load -= load.force_at(time).head(D).dot(x.segment(dof, D));
  }
  return e;
}

void SystemAssembler::all_rod_energies(const VecX& x) const {
  const int rods = static_cast<int>(model_.rods.size());
  if (model_.dimension == 2) {
#pragma omp parallel for schedule(static) num_threads(threads_) if (threads_ > 1)
    for (int r = 0; r < rods; ++r) rod_energies<2>(r, x);
  } else {
#pragma omp parallel for schedule(static) num_threads(threads_) if (threads_ > 1)
    for (int r = 0; r < rods; ++r) rod_energies<3>(r, x);
  }
}

EnergyBreakdown SystemAssembler::potential_energies(const VecX& x, double time) const {
  all_rod_energies(x);
  for_each_term([&](const auto& table) {
    if (table.coupling_size() == 0) return;
    if (model_.dimension == 2)
      table.template coupling_energy<2>(x);
    else
      table.template coupling_energy<3>(x);
  });
  return sum_rod_energies(x, time);
}

void SystemAssembler::rod_potentials(const VecX& x, double time, std::vector<double>& per_rod) const {
  assert(!has_coupling());
  all_rod_energies(x);
  const int rods = static_cast<int>(model_.rods.size());
  per_rod.assign(rods, 0.0);
  const int D = model_.dimension;
  for (int r = 0; r < rods; ++r) {
    double sum = 0.0;
    for_each_term([&](const auto& table) {
      for (const double part : table.last_rod_energy_parts(r)) sum += part;
    });
    const auto [begin, end] = model_.layout.rod_dof_range(r);
    sum -= gravity_force_.segment(begin, end - begin).dot(x.segment(begin, end - begin));
    for (int k = rod_loads_[r]; k < rod_loads_[r + 1]; ++k) {
      const PointLoad& load = model_.loads[loads_by_rod_[k]];
      sum -= load.force_at(time).head(D).dot(x.segment(model_.layout.vertex_dof(load.rod, load.vertex), D));
    }
    per_rod[r] = sum;
  }
}

template <int D>
void SystemAssembler::assemble_rod(int rod, const VecX& x, double time, const LocalRequest& request,
                                   double matrix_scale, VecX& gradient, const VecX* w, VecX* kw, double* band,
                                   bool keep_for_reuse) {
  const bool want_matrix = matrix_scale != 0.0;
  const int band_width = rod_band_width_[rod];
  const auto [dof_begin, dof_end] = model_.layout.rod_dof_range(rod);
  gradient.segment(dof_begin, dof_end - dof_begin) = -gravity_force_.segment(dof_begin, dof_end - dof_begin);
  if (w != nullptr && kw != nullptr) kw->segment(dof_begin, dof_end - dof_begin).setZero();
  if (want_matrix) std::fill(band, band + band_length(rod_free_[rod + 1] - rod_free_[rod], band_width), 0.0);
  RodAssemblyTarget target;
  target.gradient = &gradient;
  target.band = want_matrix ? band : nullptr;
  target.band_width = band_width;
  target.matrix_scale = matrix_scale;
  target.w = w;
  target.kw = kw;
  for_each_term([&](const auto& table) { table.template assemble_rod<D>(rod, x, request, target); });
  if (keep_for_reuse) {
    const int count = dof_end - dof_begin;
    reuse_x_.segment(dof_begin, count) = x.segment(dof_begin, count);
    reuse_gradient_.segment(dof_begin, count) = gradient.segment(dof_begin, count);
    for_each_term([&](const auto& table) { table.save_rod_energy(rod); });
  }
  add_coupling_and_loads<D>(rod, time, gradient, w, kw);
}

template <int D>
void SystemAssembler::add_coupling_and_loads(int rod, double time, VecX& gradient, const VecX* w, VecX* kw) const {
  const auto [dof_begin, dof_end] = model_.layout.rod_dof_range(rod);
  if (has_coupling_) {
    // The coupling elements' share of this rod's entries, summed before the rods (assemble()).
    gradient.segment(dof_begin, dof_end - dof_begin) += coupling_gradient_.segment(dof_begin, dof_end - dof_begin);
    if (w != nullptr && kw != nullptr)
      kw->segment(dof_begin, dof_end - dof_begin) += coupling_kw_.segment(dof_begin, dof_end - dof_begin);
  }
  // Point loads on this rod, in the order the scene lists them.
  for (int k = rod_loads_[rod]; k < rod_loads_[rod + 1]; ++k) {
    const PointLoad& load = model_.loads[loads_by_rod_[k]];
    const int dof = model_.layout.vertex_dof(load.rod, load.vertex);
    gradient.segment<D>(dof) -= load.force_at(time).template head<D>();
  }
}

void SystemAssembler::add_diagonal(int rod, double* band, const VecX* matrix_diagonal) const {
  if (matrix_diagonal == nullptr) return;
  const int first = rod_free_[rod], w = rod_band_width_[rod];
  const auto [dof_begin, dof_end] = model_.layout.rod_dof_range(rod);
  for (int dof = dof_begin; dof < dof_end; ++dof) {
    const int f = model_.layout.free_index(dof);
    if (f >= 0) band[band_index(f - first, f - first, w)] += (*matrix_diagonal)[dof];
  }
}

void SystemAssembler::expand(int rod, const double* band) {
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

bool SystemAssembler::has_coupling() const {
  bool any = false;
  for_each_term([&](const auto& table) { any = any || table.coupling_size() > 0; });
  return any;
}

void SystemAssembler::clear_coupling() {
  std::apply([](auto&... table) { (table.clear_coupling(), ...); }, terms_);
}

void SystemAssembler::assemble_coupling(const VecX& x, const LocalRequest& request, double matrix_scale,
                                        const VecX* w, bool want_product) {
  ++coupling_version_;
  has_coupling_ = has_coupling();
  const int n = model_.layout.free_dof_count();
  if (!has_coupling_) {
    if (coupling_matrix_.nonZeros() > 0 || coupling_matrix_.rows() != n) coupling_matrix_.resize(n, n);
    return;
  }
  // Serially, term after term and element after element: the sums do not depend on threads.
  coupling_gradient_.setZero(x.size());
  CouplingTarget target;
  target.gradient = &coupling_gradient_;
  target.matrix_scale = matrix_scale;
  coupling_triplets_.clear();
  if (matrix_scale != 0.0) target.triplets = &coupling_triplets_;
  if (w != nullptr && want_product) {
    coupling_kw_.setZero(x.size());
    target.w = w;
    target.kw = &coupling_kw_;
  }
  for_each_term([&](const auto& table) {
    if (table.coupling_size() == 0) return;
    if (model_.dimension == 2)
      table.template assemble_coupling<2>(x, request, model_.layout, target);
    else
      table.template assemble_coupling<3>(x, request, model_.layout, target);
  });
  if (matrix_scale != 0.0) {
    sparse_from_triplets(n, n, coupling_triplets_, coupling_matrix_, coupling_order_);
  }
}

void SystemAssembler::assemble(const VecX& x, double time, HessianProjection projection, double matrix_scale,
                               VecX& gradient, const VecX* w, VecX* stiffness_times_w, EnergyBreakdown* potential,
                               const RodCallback& after_rod, const VecX* matrix_diagonal, bool fill_matrix) {
  const int rods = static_cast<int>(model_.rods.size());
  gradient.resize(x.size());
  if (w != nullptr && stiffness_times_w != nullptr) stiffness_times_w->resize(x.size());
  const bool want_matrix = matrix_scale != 0.0;
  LocalRequest request;
  request.projection = projection;
  request.energy = potential != nullptr;
  request.hessian = want_matrix || (w != nullptr && stiffness_times_w != nullptr);
  // A gradient pass is at positions the step may commit (the convergence test's): it keeps the
  // frames it carries there for advance().
  request.keep_state = keeps_state_ && !request.hessian;
  // A pass with a Hessian at the positions the last committed frames were kept at (the next
  // step's first pass, at the positions just committed) replays what that pass kept: the same
  // DOFs and the same frames give the same values, bit for bit.
  request.replay_kept = keeps_state_ && request.hessian && locals_valid_ && same_as_kept(x);
  last_pass_replayed_ = request.replay_kept;
  if (request.replay_kept) ++replayed_passes_;
  if (request.keep_state) {  // valid once the pass has kept every element's (below)
    kept_valid_ = false;
    locals_valid_ = false;
    kept_positions_ = x;
  }
  assemble_coupling(x, request, matrix_scale, w, stiffness_times_w != nullptr);
  // Not filling is for a caller that takes every block in its callback.
  const bool fill = fill_matrix || !after_rod;
  if (want_matrix) matrix_filled_ = fill;
  // Reuse of unchanged rods (set_reuse_unchanged_rods): a pass whose results are a function of
  // each rod's DOFs and diagonal alone keeps them, and takes those of rods that did not change
  // since the last such pass with the same settings. Any other pass that writes the matrix
  // leaves blocks that pass did not keep: nothing kept holds after it.
  const bool reusable = reuse_enabled_ && want_matrix && fill && !after_rod &&
                        !(w != nullptr && stiffness_times_w != nullptr) && !request.replay_kept && !request.keep_state;
  const bool reuse = reusable && reuse_projection_ == projection && reuse_scale_ == matrix_scale &&
                     (reuse_energy_ || !request.energy) && reuse_with_diagonal_ == (matrix_diagonal != nullptr);
  if (want_matrix && !reuse) forget_unchanged_rods();
  if (reusable) {
    if (!reuse) {
      reuse_projection_ = projection;
      reuse_scale_ = matrix_scale;
      reuse_with_diagonal_ = matrix_diagonal != nullptr;
    }
    // A pass without energies may assemble rods again without them: what it keeps holds
    // energies only if it formed them.
    reuse_energy_ = request.energy;
    reuse_x_.resize(x.size());
    reuse_gradient_.resize(x.size());
    if (matrix_diagonal != nullptr) reuse_diagonal_.resize(x.size());
    reused_.assign(rods, 0);
  }
  auto assemble_one = [&](int r) {
    if (reuse && rod_unchanged(r, x, matrix_diagonal)) {
      const auto [begin, end] = model_.layout.rod_dof_range(r);
      gradient.segment(begin, end - begin) = reuse_gradient_.segment(begin, end - begin);
      if (model_.dimension == 2)
        add_coupling_and_loads<2>(r, time, gradient, nullptr, nullptr);
      else
        add_coupling_and_loads<3>(r, time, gradient, nullptr, nullptr);
      for_each_term([&](const auto& table) { table.restore_rod_energy(r); });
      reused_[r] = 1;
      return;
    }
    double* band = thread_bands_[omp_get_thread_num()].data();
    if (model_.dimension == 2)
      assemble_rod<2>(r, x, time, request, matrix_scale, gradient, w, stiffness_times_w, band, reusable);
    else
      assemble_rod<3>(r, x, time, request, matrix_scale, gradient, w, stiffness_times_w, band, reusable);
    BandView block;
    if (want_matrix) {
      add_diagonal(r, band, matrix_diagonal);
      if (fill) expand(r, band);
      block = {band, rod_free_[r + 1] - rod_free_[r], rod_band_width_[r]};
    }
    if (after_rod) after_rod(r, block);
    if (reusable) {
      if (matrix_diagonal != nullptr) {
        const auto [begin, end] = model_.layout.rod_dof_range(r);
        reuse_diagonal_.segment(begin, end - begin) = matrix_diagonal->segment(begin, end - begin);
      }
      reuse_valid_[r] = 1;
    }
  };
  // Rods in chunks handed out as threads finish (each rod computed by one thread, the same
  // arithmetic on any): on a shared machine a thread can be held up for a while, and a fixed
  // split would leave the other waiting at the end of the loop.
#pragma omp parallel for schedule(dynamic, kRodChunk) num_threads(threads_) if (threads_ > 1)
  for (int r = 0; r < rods; ++r) assemble_one(r);
  last_reused_rods_ = 0;
  if (reuse)
    for (const char r : reused_) last_reused_rods_ += r;
  kept_valid_ = kept_valid_ || request.keep_state;
  if (potential != nullptr) *potential = sum_rod_energies(x, time);
}

void sparse_from_triplets(int rows, int cols, const std::vector<Eigen::Triplet<double>>& triplets,
                          SparseMatrix& matrix, std::vector<int>& order) {
  const int count = static_cast<int>(triplets.size());
  matrix.resize(rows, cols);
  // The triplets by column, in the order listed (a counting sort), then each column's by row,
  // stably (an insertion sort: a column holds a few contacts' entries): each entry's
  // duplicates stay in the order listed, and are summed in it, as Eigen sums them.
  std::vector<int> start(static_cast<std::size_t>(cols) + 1, 0);
  for (const auto& t : triplets) ++start[t.col() + 1];
  for (int c = 0; c < cols; ++c) start[c + 1] += start[c];
  order.resize(count);
  {
    std::vector<int> next(start.begin(), start.end() - 1);
    for (int k = 0; k < count; ++k) order[next[triplets[k].col()]++] = k;
  }
  int entries = 0;
  int* outer = matrix.outerIndexPtr();
  for (int c = 0; c < cols; ++c) {
    outer[c] = entries;
    for (int k = start[c] + 1; k < start[c + 1]; ++k) {
      const int moved = order[k];
      int p = k;
      for (; p > start[c] && triplets[order[p - 1]].row() > triplets[moved].row(); --p) order[p] = order[p - 1];
      order[p] = moved;
    }
    for (int k = start[c]; k < start[c + 1]; ++k)
      if (k == start[c] || triplets[order[k]].row() != triplets[order[k - 1]].row()) ++entries;
  }
  outer[cols] = entries;
  matrix.resizeNonZeros(entries);
  int* inner = matrix.innerIndexPtr();
  double* values = matrix.valuePtr();
  int e = -1;
  for (int c = 0; c < cols; ++c)
    for (int k = start[c]; k < start[c + 1]; ++k) {
      const auto& t = triplets[order[k]];
      if (k == start[c] || t.row() != triplets[order[k - 1]].row()) {
        inner[++e] = t.row();
        values[e] = t.value();
      } else {
        values[e] = values[e] + t.value();
      }
    }
}

void add_sparse(const SparseMatrix& a, const SparseMatrix& b, SparseMatrix& sum, int threads,
                const std::vector<char>* columns) {
  assert(a.isCompressed() && b.isCompressed() && a.rows() == b.rows() && a.cols() == b.cols());
  assert(columns == nullptr || static_cast<Eigen::Index>(columns->size()) == a.cols());
  const int n = static_cast<int>(a.cols());
  const int *a_outer = a.outerIndexPtr(), *a_inner = a.innerIndexPtr();
  const int *b_outer = b.outerIndexPtr(), *b_inner = b.innerIndexPtr();
  const double *a_values = a.valuePtr(), *b_values = b.valuePtr();
  // Each column's union of rows: counted, then written, by merging the two sorted columns.
  std::vector<int> outer(n + 1, 0);
  auto merge = [&](int col, int* rows, double* values) {
    if (columns != nullptr && !(*columns)[col]) return 0;
    int i = a_outer[col], j = b_outer[col], count = 0;
    const int i_end = a_outer[col + 1], j_end = b_outer[col + 1];
    // Most columns have no entry of b (the coupling touches the few DOFs in contact): a's
    // column, each value plus zero as below (the same bits: -0 becomes +0).
    if (j == j_end) {
      if (rows != nullptr) {
        std::copy(a_inner + i, a_inner + i_end, rows);
        for (int k = i; k < i_end; ++k) values[k - i] = a_values[k] + 0.0;
      }
      return i_end - i;
    }
    while (i < i_end || j < j_end) {
      const int row_a = i < i_end ? a_inner[i] : n, row_b = j < j_end ? b_inner[j] : n;
      if (rows != nullptr) {
        rows[count] = std::min(row_a, row_b);
        values[count] = row_a == row_b ? a_values[i] + b_values[j]
                        : row_a < row_b ? a_values[i] + 0.0
                                        : 0.0 + b_values[j];
      }
      if (row_a <= row_b) ++i;
      if (row_b <= row_a) ++j;
      ++count;
    }
    return count;
  };
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1 && n > 4096)
  for (int col = 0; col < n; ++col) outer[col + 1] = merge(col, nullptr, nullptr);
  for (int col = 0; col < n; ++col) outer[col + 1] += outer[col];
  sum.resize(a.rows(), a.cols());
  sum.resizeNonZeros(outer[n]);
  std::copy(outer.begin(), outer.end(), sum.outerIndexPtr());
  int* rows = sum.innerIndexPtr();
  double* values = sum.valuePtr();
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1 && n > 4096)
  for (int col = 0; col < n; ++col) merge(col, rows + outer[col], values + outer[col]);
}

}  // namespace bristle

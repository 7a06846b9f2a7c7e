#pragma once
/// The element table: every energy term's stencils, stored once, and the one gather / evaluate
/// / scatter loop that turns them into energy, gradient, stiffness-matrix band entries and
/// products K w (energy/element.hpp says what a term declares).
///
/// An element is a term's stencil: the first global DOF of each of its slots (vertices and
/// twist edges, in increasing DOF order) and the term's constants. The table keeps, for each
/// pair of slots (a, b), a >= b, where their lower block starts in the owning rod's band
/// (math/band_storage.hpp): entry (free(a) + i, free(b) + j) is at base + i w + j, so a step
/// writes values in place. A pair touching a fixed slot has base -1 and is not stored.
///
/// Elements are grouped by rod, rod after rod, each rod's in the order the term lists them:
/// the assembly of one rod touches only that rod's DOFs, which is what lets rods be assembled
/// on several threads with bitwise identical sums. Elements whose slots lie on several rods
/// (rod-rod contact, ties between rods) are kept apart, in the coupling list: they may change
/// from one assemble to the next, their Hessian goes to a separate coupling matrix (triplets,
/// free numbering) instead of a rod's band, and their gradient is summed before the rods'.

#include <array>
#include <cassert>
#include <stdexcept>
#include <type_traits>
#include <utility>
#include <vector>

#include <Eigen/SparseCore>

#include "bristle/energy/element.hpp"
#include "bristle/math/band_storage.hpp"
#include "bristle/math/types.hpp"
#include "bristle/model/model.hpp"

namespace bristle {

/// Calls f(std::integral_constant<int, 0>{}), ..., f(std::integral_constant<int, K - 1>{}):
/// slot loops with compile-time slot sizes.
template <class F, int... I>
inline void static_for_each(F& f, std::integer_sequence<int, I...>) {
  (f(std::integral_constant<int, I>{}), ...);
}
template <int K, class F>
inline void static_for(F&& f) {
  static_for_each(f, std::make_integer_sequence<int, K>{});
}

/// Where a rod's assembly writes: its gradient entries, its band (null: no matrix), and the
/// product K w (both null: none).
struct RodAssemblyTarget {
  VecX* gradient = nullptr;
  double* band = nullptr;
  int band_width = 0;
  double matrix_scale = 0.0;
  const VecX* w = nullptr;
  VecX* kw = nullptr;
};

/// Where the coupling elements' assembly writes: gradient and K w on all DOFs, the Hessian as
/// triplets (free row, free column, matrix_scale * value; both triangles) when `triplets` is set.
struct CouplingTarget {
  VecX* gradient = nullptr;
  std::vector<Eigen::Triplet<double>>* triplets = nullptr;
  double matrix_scale = 0.0;
  const VecX* w = nullptr;
  VecX* kw = nullptr;
};

template <class Term, int D>
struct LocalScatter {
  using Shape = StencilShape<Term, D>;
  static constexpr int K = Shape::kSlotCount;
  static constexpr int N = Shape::kDofs;
  using Slots = std::array<int, K>;

  static Vec<N> gather(const VecX& x, const Slots& dof) {
    Vec<N> local;
    static_for<K>([&](auto slot) {
      constexpr int a = decltype(slot)::value;
      constexpr int s = Shape::size(a), o = Shape::offset(a);
      local.template segment<s>(o) = x.template segment<s>(dof[a]);
    });
    return local;
  }

  static void add(VecX& y, const Slots& dof, const Vec<N>& local) {
    static_for<K>([&](auto slot) {
      constexpr int a = decltype(slot)::value;
      constexpr int s = Shape::size(a), o = Shape::offset(a);
      y.template segment<s>(dof[a]) += local.template segment<s>(o);
    });
  }

  // Band scatter of scale * H, one overload per Hessian representation. `bases` holds the
  // element's kPairs bases in the order (0, 0), (1, 0), (1, 1), (2, 0), ...

  static void band(const RodAssemblyTarget&, const int*, const NoHessian&, bool = false) {}

  /// Calls f(slot a, slot b, base) (slots as std::integral_constant) for each slot pair
  /// a >= b that has a block in the band.
  template <class F>
  static void for_each_band_pair(const int* bases, F&& f) {
    static_for<K>([&](auto slot_a) {
      static_for<decltype(slot_a)::value + 1>([&](auto slot_b) {
        constexpr int a = decltype(slot_a)::value, b = decltype(slot_b)::value;
        const int base = bases[a * (a + 1) / 2 + b];
        if (base >= 0) f(slot_a, slot_b, base);
      });
    });
  }

  static void band(const RodAssemblyTarget& t, const int* bases, const Mat<N, N>& h, bool = false) {
    for_each_band_pair(bases, [&](auto slot_a, auto slot_b, int base) {
      constexpr int a = decltype(slot_a)::value, b = decltype(slot_b)::value;
      constexpr int oa = Shape::offset(a), ob = Shape::offset(b);
      for (int i = 0; i < Shape::size(a); ++i)
        for (int j = 0; j < (a == b ? i + 1 : Shape::size(b)); ++j)
          t.band[base + i * t.band_width + j] += t.matrix_scale * h(oa + i, ob + j);
    });
  }

  /// [[B, -B], [-B, B]]: two vertex slots.
  static void band(const RodAssemblyTarget& t, const int* bases, const DifferenceBlock<D>& h, bool = false) {
    static_assert(K == 2 && N == 2 * D, "a difference block spans two vertex slots");
    for (int a = 0; a < 2; ++a)
      for (int b = 0; b <= a; ++b) {
        const int base = bases[a * (a + 1) / 2 + b];
        if (base < 0) continue;
        const double sign = a == b ? t.matrix_scale : -t.matrix_scale;
        for (int i = 0; i < D; ++i)
          for (int j = 0; j < (a == b ? i + 1 : D); ++j) t.band[base + i * t.band_width + j] += sign * h.block(i, j);
      }
  }

  /// sum_k value_k v_k v_k^T over value_k > 0. Lower block (a, b), a > b, is the transpose of
  /// sum_k (w_k v_b) v_a^T, diagonal block (a, a) sum_k (w_k v_a) v_a^T.
  template <class Spectrum>
  static void band(const RodAssemblyTarget& t, const int* bases, const PositiveSpectrum<Spectrum>& h,
                   bool contiguous = false) {
    constexpr int kCount = Spectrum::kCount;
    double weight[kCount];
    int terms[kCount];
    int count = 0;
    for (int k = 0; k < kCount; ++k)
      if (h.spectrum.value[k] > 0.0) {
        weight[count] = t.matrix_scale * h.spectrum.value[k];
        terms[count++] = k;
      }
    if (contiguous && count == kCount) {
      band_lower_triangle<kCount>(t, bases[0], weight, h.spectrum);
      return;
    }
    for_each_band_pair(bases, [&](auto slot_a, auto slot_b, int base) {
      constexpr int a = decltype(slot_a)::value, b = decltype(slot_b)::value;
      constexpr int sa = Shape::size(a), sb = Shape::size(b), oa = Shape::offset(a), ob = Shape::offset(b);
      Mat<sb, sa> block = Mat<sb, sa>::Zero();  // rows: slot b, columns: slot a
      for (int m = 0; m < count; ++m) {
        const Vec<N>& v = h.spectrum.vector[terms[m]];
        block.noalias() += (weight[m] * v.template segment<sb>(ob)) * v.template segment<sa>(oa).transpose();
      }
      for (int i = 0; i < sa; ++i)
        for (int j = 0; j < (a == b ? i + 1 : sb); ++j)
          t.band[base + i * t.band_width + j] += a == b ? block(i, j) : block(j, i);
    });
  }

  /// The first local index of the slot that local index i lies in.
  static constexpr int slot_begin(int i) {
    int a = 0;
    while (a + 1 < K && Shape::offset(a + 1) <= i) ++a;
    return Shape::offset(a);
  }

  /// band()'s sum for a contiguous stencil (every term positive): the whole lower triangle
  /// in one pass, row i at base + i w, each entry the same products summed in the same order
  /// as the slot-pair blocks ((w_k v_k[j]) v_k[i] left of i's slot, (w_k v_k[i]) v_k[j] in
  /// it), so both paths give identical bits.
  template <int kCount, class Spectrum>
  static void band_lower_triangle(const RodAssemblyTarget& t, int base, const double* weight, const Spectrum& s) {
    Vec<N> u[kCount];
    for (int m = 0; m < kCount; ++m) u[m] = weight[m] * s.vector[m];
    static_for<N>([&](auto row) {
      constexpr int i = decltype(row)::value;
      constexpr int first = slot_begin(i), length = i + 1 - first;
      double* out = t.band + base + i * t.band_width;
      if constexpr (first > 0) {
        Vec<first> sum = u[0].template head<first>() * s.vector[0][i];
        for (int m = 1; m < kCount; ++m) sum += u[m].template head<first>() * s.vector[m][i];
        Eigen::Map<Vec<first>>(out) += sum;
      }
      Vec<length> sum = s.vector[0].template segment<length>(first) * u[0][i];
      for (int m = 1; m < kCount; ++m) sum += s.vector[m].template segment<length>(first) * u[m][i];
      Eigen::Map<Vec<length>>(out + first) += sum;
    });
  }

  // The dense local Hessian of each representation (for the coupling triplets).

  static Mat<N, N> dense(const Mat<N, N>& h) { return h; }

  static Mat<N, N> dense(const DifferenceBlock<D>& h) {
    static_assert(K == 2 && N == 2 * D, "a difference block spans two vertex slots");
    Mat<N, N> m;
    m << h.block, -h.block, -h.block, h.block;
    return m;
  }

  template <class Spectrum>
  static Mat<N, N> dense(const PositiveSpectrum<Spectrum>& h) {
    Mat<N, N> m = Mat<N, N>::Zero();
    for (int k = 0; k < Spectrum::kCount; ++k)
      if (h.spectrum.value[k] > 0.0) m.noalias() += h.spectrum.value[k] * h.spectrum.vector[k] * h.spectrum.vector[k].transpose();
    return m;
  }

  /// scale * H's free-free entries as triplets, both triangles.
  template <class Hessian>
  static void triplets(const CouplingTarget& t, const DofLayout& layout, const Slots& dof, const Hessian& hessian) {
    if constexpr (!std::is_same_v<Hessian, NoHessian>) {
      const Mat<N, N> h = dense(hessian);
      // A pair beyond the barrier's reach has a zero Hessian: its entries would only widen
      // the coupled system's pattern (the products and the preconditioner's analysis visit
      // every stored zero). Adding zeros changes no value, at most the sign of a zero.
      if ((h.array() == 0.0).all()) return;
      for (int a = 0; a < K; ++a)
        for (int i = 0; i < size_of(a); ++i) {
          const int row = layout.free_index(dof[a] + i);
          if (row < 0) continue;
          for (int b = 0; b < K; ++b)
            for (int j = 0; j < size_of(b); ++j) {
              const int col = layout.free_index(dof[b] + j);
              if (col >= 0) t.triplets->emplace_back(row, col, t.matrix_scale * h(offset_of(a) + i, offset_of(b) + j));
            }
        }
    }
  }

  static int size_of(int slot) { return Shape::size(slot); }
  static int offset_of(int slot) { return Shape::offset(slot); }

  // K w (all DOFs of the stencil, fixed ones included), one overload per representation.

  static void product(const RodAssemblyTarget&, const Slots&, const NoHessian&) {}

  static void product(const RodAssemblyTarget& t, const Slots& dof, const Mat<N, N>& h) {
    add(*t.kw, dof, Vec<N>(h * gather(*t.w, dof)));
  }

  static void product(const RodAssemblyTarget& t, const Slots& dof, const DifferenceBlock<D>& h) {
    const Vec<D> f = h.block * (t.w->template segment<D>(dof[1]) - t.w->template segment<D>(dof[0]));
    t.kw->template segment<D>(dof[0]) -= f;
    t.kw->template segment<D>(dof[1]) += f;
  }

  /// From the rank-one terms: sum of value v (v . w), no N x N product.
  template <class Spectrum>
  static void product(const RodAssemblyTarget& t, const Slots& dof, const PositiveSpectrum<Spectrum>& h) {
    const Vec<N> local_w = gather(*t.w, dof);
    Vec<N> kw_local = Vec<N>::Zero();
    for (int m = 0; m < Spectrum::kCount; ++m)
      if (h.spectrum.value[m] > 0.0)
        kw_local += (h.spectrum.value[m] * h.spectrum.vector[m].dot(local_w)) * h.spectrum.vector[m];
    add(*t.kw, dof, kw_local);
  }
};

/// Whether a term keeps per-element state it commits at a configuration (Term::advance).
template <class Term, class = void>
struct HasAdvance : std::false_type {};
template <class Term>
struct HasAdvance<Term, std::void_t<decltype(&Term::template advance<3>)>> : std::true_type {};

/// Whether a term chains consecutive elements (Term::Chain, energy/element.hpp).
template <class Term, class = void>
struct HasChain : std::false_type {};
template <class Term>
struct HasChain<Term, std::void_t<typename Term::Chain>> : std::true_type {};

/// Whether a term with committed state keeps, in a pass that asks for it
/// (LocalRequest::keep_state), the state it carried (Term::kKeepsState; Term::keep_into
/// through its chain, into a copy of the element's constants).
template <class Term, class = void>
struct HasKeptState : std::false_type {};
template <class Term>
struct HasKeptState<Term, std::void_t<decltype(Term::kKeepsState)>> : std::bool_constant<Term::kKeepsState> {};

/// Whether a term that keeps its state keeps its local results too (Term::KeptLocal,
/// Term::keep_local_into through its chain, Term::replays and Term::replay).
template <class Term, class = void>
struct HasKeptLocal : std::false_type {};
template <class Term>
struct HasKeptLocal<Term, std::void_t<typename Term::KeptLocal>> : HasKeptState<Term> {};

/// Term::KeptLocal, or an empty type.
template <class Term, class = void>
struct KeptLocalOf {
  struct type {};
};
template <class Term>
struct KeptLocalOf<Term, std::void_t<typename Term::KeptLocal>> {
  using type = typename Term::KeptLocal;
};

template <class TermType>
class ElementTable {
 public:
  using Term = TermType;
  static constexpr int K = static_cast<int>(Term::kSlots.size());
  static constexpr int kPairs = K * (K + 1) / 2;
  using Constants = typename Term::Constants;
  using Slots = std::array<int, K>;
  /// The energy per breakdown entry (one for most terms; EnergyEntries, energy/element.hpp).
  static constexpr int kEnergyParts = static_cast<int>(EnergyEntries<Term>::value.size());
  using EnergyParts = std::array<double, kEnergyParts>;

  /// Every rod's elements, as the term lists them.
  void build(const Model& model) {
    const DofLayout& layout = model.layout;
    const int rods = static_cast<int>(model.rods.size());
    dofs_.clear();
    constants_.clear();
    rod_begin_.assign(1, 0);
    for (int r = 0; r < rods; ++r) {
      Term::for_each_element(model.rods[r], [&](const Slots& slots, const Constants& constants) {
        Slots dof;
        for (int a = 0; a < K; ++a) {
          dof[a] = Term::kSlots[a] == SlotKind::Vertex ? layout.vertex_dof(r, slots[a]) : layout.edge_dof(r, slots[a]);
          assert(dof[a] >= 0 && (a == 0 || dof[a] > dof[a - 1]));
        }
        dofs_.push_back(dof);
        constants_.push_back(constants);
      });
      rod_begin_.push_back(static_cast<int>(dofs_.size()));
    }
    rod_energy_.assign(rods, EnergyParts{});
    saved_rod_energy_.assign(rods, EnergyParts{});
    if constexpr (HasKeptState<Term>::value) kept_ = constants_;
    if constexpr (HasKeptLocal<Term>::value) kept_local_.assign(dofs_.size(), KeptLocal{});
  }

  int size() const { return static_cast<int>(dofs_.size()); }
  const Slots& dofs(int element) const { return dofs_[element]; }
  const Constants& constants(int element) const { return constants_[element]; }
  /// [begin, end) of a rod's elements.
  std::pair<int, int> rod_elements(int rod) const { return {rod_begin_[rod], rod_begin_[rod + 1]}; }

  /// Calls visit(first DOF of slot a, first DOF of slot b) for every ordered slot pair of
  /// every element: the matrix pattern's adjacency.
  template <class Visit>
  void for_each_slot_pair(Visit&& visit) const {
    for (const Slots& dof : dofs_)
      for (int a = 0; a < K; ++a)
        for (int b = 0; b < K; ++b) visit(dof[a], dof[b]);
  }

  /// The band bases of every element's slot pairs; `band_of_free(f)` gives the rod band
  /// (first free DOF and half-bandwidth) a free DOF lies in.
  template <class BandOfFree>
  void compute_bases(const DofLayout& layout, BandOfFree&& band_of_free) {
    bases_.clear();
    bases_.reserve(dofs_.size() * kPairs);
    contiguous_.clear();
    contiguous_.reserve(dofs_.size());
    for (const Slots& dof : dofs_) {
      const std::size_t first_pair = bases_.size();
      for (int a = 0; a < K; ++a)
        for (int b = 0; b <= a; ++b) {
          const int fa = layout.free_index(dof[a]), fb = layout.free_index(dof[b]);
          if (fa < 0 || fb < 0) {
            bases_.push_back(-1);
            continue;
          }
          const auto [first, width] = band_of_free(fa);
          // The pair's block must lie in the band's lower triangle: slots in increasing,
          // non-overlapping DOF order, within the half-bandwidth (a term listing its slots out
          // of order would otherwise write into other entries).
          const int size_a = Term::kSlots[a] == SlotKind::Vertex ? layout.dimension() : 1;
          const int size_b = Term::kSlots[b] == SlotKind::Vertex ? layout.dimension() : 1;
          if ((a != b && fa < fb + size_b) || fa + size_a - 1 - fb > width)
            throw std::logic_error("element slots out of DOF order or outside the rod's band");
          bases_.push_back(band_index(fa - first, fb - first, width));
        }
      // Contiguous: every slot free and the slots' free DOFs consecutive, so that local entry
      // (i, j) of the lower triangle is at bases[0] + i w + j (LocalScatter::band's fast path).
      bool contiguous = bases_[first_pair] >= 0;
      if (contiguous) {
        const int w = band_of_free(layout.free_index(dof[0])).second;
        int offset_a = 0;
        for (int a = 0; a < K; ++a) {
          int offset_b = 0;
          for (int b = 0; b <= a; ++b) {
            const int base = bases_[first_pair + a * (a + 1) / 2 + b];
            contiguous = contiguous && base >= 0 && base == bases_[first_pair] + offset_a * w + offset_b;
            offset_b += Term::kSlots[b] == SlotKind::Vertex ? layout.dimension() : 1;
          }
          offset_a += Term::kSlots[a] == SlotKind::Vertex ? layout.dimension() : 1;
        }
      }
      contiguous_.push_back(contiguous ? 1 : 0);
    }
  }

  /// The energy of one rod's elements, summed in element order; kept for rod_energy().
  template <int D>
  double rod_energy(int rod, const VecX& x) const {
    using Scatter = LocalScatter<Term, D>;
    EnergyParts sum{};
    visit_elements(rod_begin_[rod], rod_begin_[rod + 1], [&](int k, auto&... chain) {
      add_energy(sum, Term::template energy<D>(Scatter::gather(x, dofs_[k]), constants_[k], chain...));
    });
    rod_energy_[rod] = sum;
    return total(sum);
  }

  /// Adds one rod's elements to the target: gradient always, band entries when t.band is
  /// set, K w when t.w and t.kw are. The energy sum is kept for last_rod_energy().
  template <int D>
  void assemble_rod(int rod, const VecX& x, const LocalRequest& request, const RodAssemblyTarget& t) const {
    using Scatter = LocalScatter<Term, D>;
    const bool want_matrix = t.band != nullptr;
    const bool want_product = t.w != nullptr && t.kw != nullptr;
    EnergyParts sum{};
    auto sink_of = [&](int k) {
      return [&, k](const auto& energy, const auto& gradient, const auto& hessian) {
        const Slots& dof = dofs_[k];
        add_energy(sum, energy);
        Scatter::add(*t.gradient, dof, gradient);
        if (want_matrix)
          Scatter::band(t, &bases_[static_cast<std::size_t>(k) * kPairs], hessian, contiguous_[k] != 0);
        if (want_product) Scatter::product(t, dof, hessian);
      };
    };
    if constexpr (HasKeptLocal<Term>::value) {
      if (request.replay_kept && Term::replays(request)) {
        const auto [begin, end] = rod_elements(rod);
        for (int k = begin; k < end; ++k) Term::template replay<D>(kept_local_[k], request, sink_of(k));
        rod_energy_[rod] = sum;
        return;
      }
    }
    visit_elements(rod_begin_[rod], rod_begin_[rod + 1], [&](int k, auto&... chain) {
      if constexpr (HasKeptState<Term>::value) {
        static_assert(HasChain<Term>::value, "a term keeps its state through its chain");
        if (request.keep_state) (Term::keep_into(chain, kept_[k]), ...);
      }
      if constexpr (HasKeptLocal<Term>::value) {
        if (request.keep_state) (Term::keep_local_into(chain, kept_local_[k]), ...);
      }
      Term::template evaluate<D>(Scatter::gather(x, dofs_[k]), constants_[k], request, sink_of(k), chain...);
    });
    rod_energy_[rod] = sum;
  }

  /// Commits each element's state at configuration x (the discrete elastic rods' reference
  /// frames, transported to x's edges); nothing for terms without state. With `reuse_kept`,
  /// a term that keeps its state takes what the last pass with LocalRequest::keep_state
  /// carried instead (the same bits): the caller has checked that the pass was at x and that
  /// nothing was committed or restored since (SystemAssembler::advance). The constants then
  /// move to another buffer (a swap): references into constants() do not survive a commit.
  template <int D>
  void advance(const VecX& x, bool reuse_kept = false) {
    if constexpr (HasKeptState<Term>::value) {
      if (reuse_kept) {
        // kept_ is constants_ with the frames the pass carried: everything else in an element's
        // constants is fixed, and the state is all advance() changes.
        constants_.swap(kept_);
        return;
      }
    }
    if constexpr (HasAdvance<Term>::value) {
      using Scatter = LocalScatter<Term, D>;
      visit_elements(0, size(), [&](int k, auto&... chain) {
        Term::template advance<D>(Scatter::gather(x, dofs_[k]), constants_[k], chain...);
      });
    }
  }

  /// The elements' constants, in element order: what advance() changes, so a caller that may
  /// abandon a committed step (a split step whose second half fails) saves and restores them.
  const std::vector<Constants>& constants() const { return constants_; }
  void restore_constants(const std::vector<Constants>& saved) {
    assert(saved.size() == constants_.size());
    constants_ = saved;
  }

  /// Rod r's energy from the last rod_energy() or assemble_rod() of that rod.
  double last_rod_energy(int rod) const { return total(rod_energy_[rod]); }
  /// The same per breakdown entry.
  const EnergyParts& last_rod_energy_parts(int rod) const { return rod_energy_[rod]; }
  /// Keeps rod r's last energy sums aside (save_rod_energy), to be made the last again
  /// (restore_rod_energy) by a pass that reuses the rod's results instead of evaluating them
  /// (SystemAssembler's unchanged rods) while other evaluations overwrote them in between.
  void save_rod_energy(int rod) const { saved_rod_energy_[rod] = rod_energy_[rod]; }
  void restore_rod_energy(int rod) const { rod_energy_[rod] = saved_rod_energy_[rod]; }

  // Coupling elements: slots on several rods (or any rod), given as first global DOFs in
  // increasing order; kept until clear_coupling().

  void add_coupling(const Slots& dof, const Constants& constants) {
    for (int a = 1; a < K; ++a) assert(dof[a] > dof[a - 1]);
    coupling_dofs_.push_back(dof);
    coupling_constants_.push_back(constants);
  }
  void clear_coupling() {
    coupling_dofs_.clear();
    coupling_constants_.clear();
    coupling_energy_ = EnergyParts{};
  }
  int coupling_size() const { return static_cast<int>(coupling_dofs_.size()); }
  const Slots& coupling_dofs(int element) const { return coupling_dofs_[element]; }
  const Constants& coupling_constants(int element) const { return coupling_constants_[element]; }

  /// The coupling elements' energy, summed in element order; kept for last_coupling_energy().
  template <int D>
  double coupling_energy(const VecX& x) const {
    using Scatter = LocalScatter<Term, D>;
    EnergyParts sum{};
    for (int k = 0; k < coupling_size(); ++k)
      add_energy(sum, Term::template energy<D>(Scatter::gather(x, coupling_dofs_[k]), coupling_constants_[k]));
    coupling_energy_ = sum;
    return total(sum);
  }

  /// Adds the coupling elements, in order, to the target (gradient always; triplets and K w
  /// when set).
  template <int D>
  void assemble_coupling(const VecX& x, const LocalRequest& request, const DofLayout& layout,
                         const CouplingTarget& t) const {
    using Scatter = LocalScatter<Term, D>;
    RodAssemblyTarget product_target;
    product_target.w = t.w;
    product_target.kw = t.kw;
    const bool want_product = t.w != nullptr && t.kw != nullptr;
    EnergyParts sum{};
    for (int k = 0; k < coupling_size(); ++k) {
      const Slots& dof = coupling_dofs_[k];
      Term::template evaluate<D>(Scatter::gather(x, dof), coupling_constants_[k], request,
                                 [&](const auto& energy, const auto& gradient, const auto& hessian) {
                                   add_energy(sum, energy);
                                   Scatter::add(*t.gradient, dof, gradient);
                                   if (t.triplets != nullptr) Scatter::triplets(t, layout, dof, hessian);
                                   if (want_product) Scatter::product(product_target, dof, hessian);
                                 });
    }
    coupling_energy_ = sum;
  }

  double last_coupling_energy() const { return total(coupling_energy_); }
  const EnergyParts& last_coupling_energy_parts() const { return coupling_energy_; }

 private:
  /// Calls f(k) for the elements [begin, end) in order; for a chained term f(k, chain), the
  /// term's chain passed along and reset before an element that does not continue the one
  /// before it (energy/element.hpp).
  template <class F>
  void visit_elements(int begin, int end, F&& f) const {
    if constexpr (HasChain<Term>::value) {
      typename Term::Chain chain{};
      for (int k = begin; k < end; ++k) {
        if (k > begin && !Term::continues(dofs_[k - 1], dofs_[k])) chain = typename Term::Chain{};
        f(k, chain);
      }
    } else {
      for (int k = begin; k < end; ++k) f(k);
    }
  }

  // A term with one breakdown entry gives its energy as a double, a fused one as EnergyParts.
  static void add_energy(EnergyParts& sum, double energy) {
    static_assert(kEnergyParts == 1, "a term with several energy entries returns one value per entry");
    sum[0] += energy;
  }
  template <std::size_t P>
  static void add_energy(EnergyParts& sum, const std::array<double, P>& energy) {
    static_assert(static_cast<int>(P) == kEnergyParts, "one energy value per entry of kEnergyTerms");
    for (int p = 0; p < kEnergyParts; ++p) sum[p] += energy[p];
  }
  static double total(const EnergyParts& parts) {
    double sum = parts[0];
    for (int p = 1; p < kEnergyParts; ++p) sum += parts[p];
    return sum;
  }

  std::vector<Slots> dofs_;
  std::vector<Constants> constants_;
  // Terms that keep their state (HasKeptState): the elements' constants with the state the
  // last pass with keep_state carried them to, written by assemble_rod (each rod's elements by
  // the thread that assembles the rod); they differ from constants_ in that state only.
  mutable std::vector<Constants> kept_;
  // Terms that keep their local results (HasKeptLocal): those of the same pass, per element.
  using KeptLocal = typename KeptLocalOf<Term>::type;
  mutable std::vector<KeptLocal> kept_local_;
  std::vector<int> rod_begin_;
  std::vector<int> bases_;
  std::vector<unsigned char> contiguous_;  // per element: compute_bases' contiguous stencils
  // Per-rod energy sums of the last evaluation (mutable: energy evaluation is const).
  mutable std::vector<EnergyParts> rod_energy_;
  mutable std::vector<EnergyParts> saved_rod_energy_;  // save_rod_energy's
  std::vector<Slots> coupling_dofs_;
  std::vector<Constants> coupling_constants_;
  mutable EnergyParts coupling_energy_{};
};

}  // namespace bristle

#pragma once
/// Sparse assembly of the potential energy's gradient and (projected) Hessian: the one place
/// where per-stencil results are scattered into global vectors and matrices. The energy terms
/// are element tables (integrator/element_table.hpp), one per term, listed in `Terms` below:
/// a new term is a struct (energy/element.hpp) added to that list.
///
/// The sparsity pattern of the free-free stiffness block is built once per model, straight
/// from the elements' node (vertex and twist edge) adjacency (no triplet list, whose 117 entries per vertex would
/// dominate peak memory). Fixed DOFs are eliminated: blocks touching a fixed vertex are not
/// stored. The coupling they carry (K_free,fixed u) is still available through the product
/// K w that assemble() can form.
///
/// Each rod's block is summed first in a small band (the lower triangle in band storage,
/// math/band_storage.hpp, one per thread, reused rod after rod so it stays in cache): each
/// element stores where its D x D lower blocks start in its rod's band, so a step fills the
/// values in place (no sort, no allocation). The band is then copied out into the compressed
/// matrix, both triangles, along runs precomputed from the pattern. Summing the lower
/// triangle only halves the scattered writes, the matrix is exactly symmetric, and the caller
/// can factor the rod's block straight from the band (RodCallback) with no gather.
///
/// Threads. Elements are grouped by rod; a rod's elements touch only its own DOFs, gradient
/// entries and matrix entries, so rods are assembled in parallel (OpenMP, `set_threads`)
/// with no locks, each in the same order as serially. Energies are summed per rod and then
/// over rods in rod order. The result is bitwise identical for every thread count.

#include <cstdint>
#include <cmath>
#include <functional>
#include <tuple>
#include <utility>
#include <vector>

#include "bristle/energy/bend.hpp"
#include "bristle/energy/discrete_elastic_rod.hpp"
#include "bristle/energy/element.hpp"
#include "bristle/energy/rod_contact.hpp"
#include "bristle/energy/rod_friction.hpp"
#include "bristle/energy/stretch.hpp"
#include "bristle/integrator/element_table.hpp"
#include "bristle/math/band_storage.hpp"
#include "bristle/math/types.hpp"
#include "bristle/model/model.hpp"

namespace bristle {

/// The per-element constants of a tuple of element tables, as a tuple of vectors.
template <class Tables>
struct ElementTableConstants;
template <class... Tables>
struct ElementTableConstants<std::tuple<Tables...>> {
  using type = std::tuple<std::vector<typename Tables::Constants>...>;
};

struct EnergyBreakdown {
  double kinetic = 0.0;  ///< [J]
  double stretch = 0.0;  ///< [J]
  double bend = 0.0;     ///< [J]
  double gravity = 0.0;  ///< -sum m g . x [J]
  double load = 0.0;     ///< -sum F . x [J]

  double twist = 0.0;    ///< [J]
  /// Whether the model has rods with twist: frames then report `twist` (kept out of the
  /// frames of scenes without, whose format it would change for nothing).
  bool has_twist = false;
  /// The rod-rod contact barrier (energy/rod_contact.hpp) [J]: a potential, not elastic.
  double contact = 0.0;
  /// Whether the model has rod-rod contact: frames then report `contact`.
  bool has_rod_contact = false;
  /// The lagged friction potential between rods (energy/rod_friction.hpp) [J]: zero at the
  /// step's start, growing with slip over the step. Not an energy of the state (friction only
  /// dissipates), so not in potential() or total() (the energy test's and the frames'); the
  /// line search minimises incremental() = potential() + friction, Phi's potential part.
  double friction = 0.0;

  double& of(EnergyTerm term) {
    switch (term) {
      case EnergyTerm::Stretch: return stretch;
      case EnergyTerm::Bend: return bend;
      case EnergyTerm::Twist: return twist;
      case EnergyTerm::Friction: return friction;
      case EnergyTerm::Contact: break;
    }
    return contact;
  }
  double elastic() const { return stretch + bend + twist; }
  double potential() const { return elastic() + gravity + load + contact; }
  /// The potential part of the incremental potential Phi that Newton's line search descends on.
  double incremental() const { return potential() + friction; }
  /// The sum of the magnitudes of the potential's parts: the scale of its round-off.
  double potential_magnitude() const {
    return std::abs(stretch) + std::abs(bend) + std::abs(twist) + std::abs(gravity) + std::abs(load) + std::abs(contact) +
           std::abs(friction);
  }
  double total() const { return kinetic + potential(); }
};

class SystemAssembler {
 public:
  explicit SystemAssembler(const Model& model);

  /// Potential energies at positions x; loads evaluated at `time`.
  EnergyBreakdown potential_energies(const VecX& x, double time) const;

  /// Each rod's share of potential_energies(x, time).incremental(): its elements' energies, its
  /// vertices' gravity and its point loads, in `per_rod` (one entry per rod). Only for a system
  /// without coupling elements (has_coupling() false), whose incremental potential is the sum of
  /// these: a coupling element's energy belongs to no one rod.
  void rod_potentials(const VecX& x, double time, std::vector<double>& per_rod) const;

  /// Gradient of the potential energy at x (all DOFs, fixed ones included).
  /// With `matrix_scale` != 0, also overwrites matrix() with matrix_scale * K_ff + diag(d_f),
  /// K the element Hessians after `projection` and d_f the free DOFs' entries of
  /// `matrix_diagonal` (all DOFs; none added when null). With `w` non-null, also writes K w
  /// (all DOFs, the same K, fixed columns included) to `stiffness_times_w`.
  /// With `potential` non-null, also writes the potential energies at x (as potential_energies).
  /// With `after_rod`, calls it with each rod's index and its block of matrix() (lower
  /// triangle, band storage; empty when matrix_scale is 0) as soon as that rod's gradient,
  /// matrix values and K w entries are final, on the thread that assembled the rod, while
  /// its values are in cache: the caller can build and solve the rod's block there. The
  /// band is scratch, valid only during the call: the callback may overwrite it.
  /// With `fill_matrix` false (and a callback), the rods' blocks go to the callback only and
  /// matrix() keeps its pattern but not these values (matrix_filled() is then false): for a
  /// caller that solves every block in the callback and needs no product with the whole
  /// matrix, so that a megabyte per thousand vertices is not written to memory for nothing.
  using RodCallback = std::function<void(int rod, const BandView& block)>;
  void assemble(const VecX& x, double time, HessianProjection projection, double matrix_scale,
                VecX& gradient, const VecX* w = nullptr, VecX* stiffness_times_w = nullptr,
                EnergyBreakdown* potential = nullptr, const RodCallback& after_rod = {},
                const VecX* matrix_diagonal = nullptr, bool fill_matrix = true);

  /// Reuse of unchanged rods (off by default). With it on, a pass that forms the matrix, with
  /// no K w, no callback and no kept results, takes a rod's own results (its elements' gradient,
  /// energies and block of matrix()) from the last such pass instead of evaluating them again,
  /// where nothing they depend on changed: the rod's DOFs, its entries of `matrix_diagonal`,
  /// the projection and matrix_scale, with energies formed then if asked for now, and no
  /// advance() or restore since. The same bits as evaluating them; the coupling elements and
  /// point loads are added as always. The rod's values in matrix() are those of that pass, so
  /// the caller must leave matrix() as assembled between passes (or put its values back bit for
  /// bit). Newton's iterations on a few rods (ImplicitEuler's partial iterations) then assemble
  /// those rods, not every rod. forget_unchanged_rods() drops what is kept.
  void set_reuse_unchanged_rods(bool on);
  void forget_unchanged_rods();
  /// How many rods the last assemble() took from the last pass (for tests and profiles).
  int last_reused_rods() const { return last_reused_rods_; }

  /// Threads used by assemble() and potential_energies() (1: serial). Results do not depend on it.
  void set_threads(int threads);
  int threads() const { return threads_; }

  /// Index of the first edge (rods' edges numbered one after another) of zero (or
  /// non-finite) length at x, or -1. The stencil kernels assert a positive length (an edge's
  /// direction is undefined otherwise), so callers check this before assembling positions
  /// they did not make. stretch_edge() says which rod and edge it is.
  int find_collapsed_edge(const VecX& x) const;
  /// Rod and edge (= its first vertex) of an edge index of find_collapsed_edge().
  std::pair<int, int> stretch_edge(int edge) const;

  /// The free-free matrix filled by the last assemble(); full symmetric storage. Its values
  /// are those of an earlier assemble() when the last one was told not to fill it.
  SparseMatrix& matrix() { return matrix_; }
  const SparseMatrix& matrix() const { return matrix_; }
  /// Whether matrix() holds the last assemble()'s values (see assemble's fill_matrix).
  bool matrix_filled() const { return matrix_filled_; }
  /// Position of each free DOF's diagonal entry in matrix().valuePtr().
  const std::vector<int>& diagonal_slots() const { return diagonal_slots_; }

  /// Coupling elements (energy/element.hpp, slots on several rods: rod-rod contact, ties) are
  /// added to a term's table (`table<Term>().add_coupling(...)`) and stay until
  /// clear_coupling(). assemble() sums their gradient and K w first, serially, then adds each
  /// rod's share as the rod is assembled (the callback sees final values); their Hessian goes
  /// to coupling_matrix() (matrix_scale K_coupling, free-free, both triangles; like matrix(),
  /// from the last assemble() that formed a matrix), not to matrix() and not to the rods'
  /// bands: the system is matrix() + coupling_matrix().
  bool has_coupling() const;
  void clear_coupling();
  const SparseMatrix& coupling_matrix() const { return coupling_matrix_; }
  /// Changes each time coupling_matrix() is assembled (for caches of what it ties together).
  std::uint64_t coupling_version() const { return coupling_version_; }
  template <class Term>
  ElementTable<Term>& table() {
    return std::get<ElementTable<Term>>(terms_);
  }

  /// The energy terms, in assembly order (the order sums are formed in). Rods without twist
  /// bend by BendTerm (turning angles); rods with twist (3D) bend and twist by BendTwistTerm.
  /// RodContactTerm has coupling elements only, added by the step (contact/rod_contact.hpp);
  /// so has RodFrictionTerm, added once per step at its start (ImplicitEuler::lag_friction).
  using Terms = std::tuple<ElementTable<StretchTerm>, ElementTable<BendTerm>, ElementTable<BendTwistTerm>,
                           ElementTable<RodContactTerm>, ElementTable<RodFrictionTerm>>;
  const Terms& terms() const { return terms_; }

  /// The "transport frames" stage: commits every element's state at positions x (the
  /// discrete elastic rods' reference frames, carried by parallel transport in time to x's
  /// edges). The step calls it on the positions it commits; statics, modes and line-search
  /// trial points need not, since the kernels transport the committed frames to whatever
  /// configuration they are given.
  void advance(const VecX& x);
  /// Whether the last advance() took the frames its positions' gradient pass had kept
  /// instead of carrying them (for tests and profiles; the frames are the same either way).
  bool last_advance_reused_frames() const { return last_advance_reused_; }
  /// Whether the last assemble() replayed kept local results instead of evaluating the terms
  /// that keep them (for tests and profiles; the values are the same either way).
  bool last_pass_replayed() const { return last_pass_replayed_; }
  /// How many passes replayed kept results since construction.
  long replayed_passes() const { return replayed_passes_; }

  /// The element state advance() changes, per term (empty for terms without state), so that
  /// a step that is abandoned after some of its parts committed (a split step) can be undone.
  using ElementState = typename ElementTableConstants<Terms>::type;
  ElementState element_state() const;
  void restore_element_state(const ElementState& saved);

 private:
  template <int D>
  void assemble_rod(int rod, const VecX& x, double time, const LocalRequest& request, double matrix_scale,
                    VecX& gradient, const VecX* w, VecX* kw, double* band, bool keep_for_reuse);
  /// The coupling elements' and point loads' share of rod's gradient (and K w), added last.
  template <int D>
  void add_coupling_and_loads(int rod, double time, VecX& gradient, const VecX* w, VecX* kw) const;
  /// Whether rod's own results kept by the last reusable pass hold at x and matrix_diagonal.
  bool rod_unchanged(int rod, const VecX& x, const VecX* matrix_diagonal) const;
  /// Calls f(table) for every term's table, in assembly order.
  template <class F>
  void for_each_term(F&& f) const {
    std::apply([&](const auto&... table) { (f(table), ...); }, terms_);
  }
  void add_diagonal(int rod, double* band, const VecX* matrix_diagonal) const;
  void expand(int rod, const double* band);
  void assemble_coupling(const VecX& x, const LocalRequest& request, double matrix_scale, const VecX* w,
                         bool want_product);
  template <int D>
  void rod_energies(int rod, const VecX& x) const;
  EnergyBreakdown sum_rod_energies(const VecX& x, double time) const;
  /// rod_energies of every rod, on threads_ threads.
  void all_rod_energies(const VecX& x) const;
  void build_pattern();

  const Model& model_;
  int threads_ = 1;
  bool keeps_state_ = false;  // some term has elements with committed state (rods with twist)
  // The element tables hold the frames the last gradient pass carried to kept_positions_
  // (LocalRequest::keep_state), and nothing has been committed or restored since.
  bool kept_valid_ = false;
  // The kept local results are at the committed positions and frames (set by an advance()
  // that took the kept frames; cleared by the next keeping pass, advance or restore).
  bool locals_valid_ = false;
  bool last_advance_reused_ = false, last_pass_replayed_ = false;
  long replayed_passes_ = 0;
  VecX kept_positions_;
  bool same_as_kept(const VecX& x) const;
  // Reuse of unchanged rods (set_reuse_unchanged_rods): per rod, whether reuse_x_,
  // reuse_gradient_ (gravity and the rod's elements, before coupling and loads) and
  // reuse_diagonal_ hold its segment of the last reusable pass (whose block stays in matrix_
  // and whose energies each table saved), with that pass's projection, scale and energy flag.
  bool reuse_enabled_ = false;
  std::vector<char> reuse_valid_, reused_;
  VecX reuse_x_, reuse_gradient_, reuse_diagonal_;
  HessianProjection reuse_projection_{};
  double reuse_scale_ = 0.0;
  bool reuse_energy_ = false, reuse_with_diagonal_ = false;
  int last_reused_rods_ = 0;
  VecX gravity_force_;  // m_i g per DOF
  Terms terms_;
  // The coupling elements' sums of the last assemble().
  bool has_coupling_ = false;
  bool matrix_filled_ = true;  ///< matrix() holds the last assemble()'s values
  VecX coupling_gradient_, coupling_kw_;
  std::vector<Eigen::Triplet<double>> coupling_triplets_;
  SparseMatrix coupling_matrix_;
  std::vector<int> coupling_order_;  // sparse_from_triplets' scratch
  std::uint64_t coupling_version_ = 0;
  // Point loads by rod: rod r's are loads_by_rod_[rod_loads_[r], rod_loads_[r + 1]).
  std::vector<int> rod_loads_, loads_by_rod_;
  SparseMatrix matrix_;
  // Rod r's block: its free DOFs [rod_free_[r], rod_free_[r + 1]) and half-bandwidth
  // rod_band_width_[r].
  std::vector<int> rod_free_, rod_band_width_;
  // Copying a rod's band into matrix_: value_target[0 .. count) = band[band_source + r stride].
  // A column's entries above and on the diagonal are consecutive in the band (stride 1), those
  // below it w apart. Rod r's runs are expand_runs_[rod_runs_[r], rod_runs_[r + 1]).
  struct ExpandRun {
    int band_source, value_target, count, stride;
  };
  std::vector<ExpandRun> expand_runs_;
  std::vector<int> rod_runs_;
  // One band per thread, as long as the longest rod's.
  std::vector<std::vector<double>> thread_bands_;
  std::vector<int> diagonal_slots_;
};

/// sum = a + b for two compressed column-major matrices of one size, columns on threads: the
/// pattern and values of Eigen's `a + b` bit for bit (an entry of one only is `a + 0` or
/// `0 + b`, as Eigen forms it), for any thread count. The step's coupled system (the rods'
/// matrix plus the coupling between them) is formed so at every assembly; Eigen's sum ran on
/// one thread, 3% of a tilted brush's step on two. With `columns`, only the columns marked
/// there are formed; the others are left empty.
void add_sparse(const SparseMatrix& a, const SparseMatrix& b, SparseMatrix& sum, int threads,
                const std::vector<char>* columns = nullptr);

/// `matrix` = the rows x cols compressed matrix of `triplets`, as Eigen's setFromTriplets makes
/// it bit for bit: duplicates summed in the order listed, each column's rows sorted. Eigen's
/// goes through a transposed copy with arrays as long as the matrix has rows; this touches
/// one array of cols + 1 besides the triplets (the coupling's few hundred pairs in a system of
/// 63,000 DOFs: Eigen's was 2% of the 1000-bristle brush's step, on one thread). `order` is
/// scratch.
void sparse_from_triplets(int rows, int cols, const std::vector<Eigen::Triplet<double>>& triplets,
                          SparseMatrix& matrix, std::vector<int>& order);

}  // namespace bristle

#pragma once
/// Sparse assembly of the potential energy's gradient and (projected) Hessian: the one place
/// where per-stencil results are scattered into global vectors and matrices.
///
/// The sparsity pattern of the free-free stiffness block is built once per model, straight
/// from the elements' vertex adjacency (no triplet list, whose 117 entries per vertex would
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

#include <functional>
#include <vector>

#include "bristle/math/band_storage.hpp"
#include "bristle/math/types.hpp"
#include "bristle/model/model.hpp"

namespace bristle {

/// How element Hessians are made positive semi-definite before assembly.
enum class HessianProjection {
  Exact,        ///< none: the true Hessian (modal analysis, tests)
  Projected,    ///< springs clamped, bending eigen-clamped, both in closed form (energy/bend.hpp)
  GaussNewton,  ///< springs clamped, bending K g g^T
  BendingModes, ///< springs clamped, bending: the stiffness of its two bending modes only (energy/bend.hpp)
};

struct EnergyBreakdown {
  double kinetic = 0.0;  ///< [J]
  double stretch = 0.0;  ///< [J]
  double bend = 0.0;     ///< [J]
  double gravity = 0.0;  ///< -sum m g . x [J]
  double load = 0.0;     ///< -sum F . x [J]

  double elastic() const { return stretch + bend; }
  double potential() const { return stretch + bend + gravity + load; }
  double total() const { return kinetic + potential(); }
};

/// A stretch (2-vertex) or bend (3-vertex) stencil: the first DOF of each vertex, the owning
/// rod, and its constants.
struct StretchElement {
  int dof[2];
  int rod;
  double rest_length;
  double stiffness;  ///< E A / L [N/m]
};
struct BendElement {
  int dof[3];
  int rod;
  int vertex;        ///< the middle vertex, within its rod
  double rest_angle;
  double stiffness;  ///< E I / l [N m]
};

class SystemAssembler {
 public:
  explicit SystemAssembler(const Model& model);

  /// Potential energies at positions x; loads evaluated at `time`.
  EnergyBreakdown potential_energies(const VecX& x, double time) const;

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
  using RodCallback = std::function<void(int rod, const BandView& block)>;
  void assemble(const VecX& x, double time, HessianProjection projection, double matrix_scale,
                VecX& gradient, const VecX* w = nullptr, VecX* stiffness_times_w = nullptr,
                EnergyBreakdown* potential = nullptr, const RodCallback& after_rod = {},
                const VecX* matrix_diagonal = nullptr);

  /// Threads used by assemble() and potential_energies() (1: serial). Results do not depend on it.
  void set_threads(int threads);
  int threads() const { return threads_; }

  /// Index into stretch_elements() of the first edge of zero (or non-finite) length at x,
  /// or -1. The stencil kernels assert a positive length (an edge's direction is undefined
  /// otherwise), so callers check this before assembling positions they did not make.
  int find_collapsed_edge(const VecX& x) const;

  /// The free-free matrix filled by the last assemble(); full symmetric storage.
  SparseMatrix& matrix() { return matrix_; }
  const SparseMatrix& matrix() const { return matrix_; }
  /// Position of each free DOF's diagonal entry in matrix().valuePtr().
  const std::vector<int>& diagonal_slots() const { return diagonal_slots_; }

  const std::vector<StretchElement>& stretch_elements() const { return stretch_; }
  const std::vector<BendElement>& bend_elements() const { return bend_; }

 private:
  template <int D>
  void assemble_rod(int rod, const VecX& x, double time, HessianProjection projection, double matrix_scale,
                    VecX& gradient, const VecX* w, VecX* kw, bool want_energy, double* band);
  void add_diagonal_and_expand(int rod, double* band, const VecX* matrix_diagonal);
  template <int D>
  void rod_energies(int rod, const VecX& x) const;
  EnergyBreakdown sum_rod_energies(const VecX& x, double time) const;
  void build_pattern();

  const Model& model_;
  int threads_ = 1;
  VecX gravity_force_;  // m_i g per DOF
  std::vector<StretchElement> stretch_;
  std::vector<BendElement> bend_;
  // Rod r owns stretch_[rod_stretch_[r], rod_stretch_[r + 1]), likewise bend_ (its DOFs:
  // model_.layout.rod_dof_range(r)).
  std::vector<int> rod_stretch_, rod_bend_;
  // Point loads by rod: rod r's are loads_by_rod_[rod_loads_[r], rod_loads_[r + 1]).
  std::vector<int> rod_loads_, loads_by_rod_;
  // Per-rod energy sums of the last evaluation (mutable: potential_energies is const).
  mutable std::vector<double> rod_stretch_energy_, rod_bend_energy_;
  SparseMatrix matrix_;
  // Rod r's block: its free DOFs [rod_free_[r], rod_free_[r + 1]) and half-bandwidth
  // rod_band_width_[r].
  std::vector<int> rod_free_, rod_band_width_;
  // For each element: for each vertex pair (a, b) with a >= b, in the order (0, 0), (1, 0),
  // (1, 1), (2, 0), ..., the band index of entry (free(a), free(b)) in its rod's band, or -1
  // when a or b is fixed. Entry (free(a) + i, free(b) + j) is then at base + i w + j.
  std::vector<int> stretch_bases_;
  std::vector<int> bend_bases_;
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

}  // namespace bristle

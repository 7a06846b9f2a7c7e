#pragma once
/// Sparse assembly of the potential energy's gradient and (projected) Hessian: the one place
/// where per-stencil results are scattered into global vectors and matrices.
///
/// The sparsity pattern of the free-free stiffness block is built once per model; each
/// element stores where its D x D blocks live in the matrix's value array, so a step fills
/// the values in place (no triplet list, no sort, no allocation). Fixed DOFs are eliminated:
/// blocks touching a fixed vertex are not stored. The coupling they carry (K_free,fixed u) is
/// still available through the matrix-free product `stiffness_times`.

#include <vector>

#include "bristle/math/types.hpp"
#include "bristle/model/model.hpp"

namespace bristle {

/// How element Hessians are made positive semi-definite before assembly.
enum class HessianProjection {
  Exact,        ///< none: the true Hessian (modal analysis, tests)
  Projected,    ///< springs clamped in closed form, bending eigen-clamped (nearest PSD)
  GaussNewton,  ///< springs clamped, bending K g g^T
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
  /// With `matrix_scale` != 0, also overwrites matrix() with matrix_scale * K_ff, K the
  /// element Hessians after `projection`. With `w` non-null, also writes K w (all DOFs, the
  /// same K, fixed columns included) to `stiffness_times_w`.
  void assemble(const VecX& x, double time, HessianProjection projection, double matrix_scale,
                VecX& gradient, const VecX* w = nullptr, VecX* stiffness_times_w = nullptr);

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
  void assemble_impl(const VecX& x, double time, HessianProjection projection,
                     double matrix_scale, VecX& gradient, const VecX* w, VecX* kw);
  template <int D>
  EnergyBreakdown energies_impl(const VecX& x, double time) const;
  void build_pattern();

  const Model& model_;
  VecX gravity_force_;  // m_i g per DOF
  std::vector<StretchElement> stretch_;
  std::vector<BendElement> bend_;
  SparseMatrix matrix_;
  // For each element, for each (row vertex a, column vertex b, column offset j): the index in
  // matrix_.valuePtr() of entry (free(a), free(b) + j), or -1 when a or b is fixed.
  std::vector<int> stretch_slots_;
  std::vector<int> bend_slots_;
  std::vector<int> diagonal_slots_;
};

}  // namespace bristle

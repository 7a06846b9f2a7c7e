#pragma once
/// Correction of the edge lengths a linearised solve gets wrong, by fast projection
/// (Goldenthal et al., "Efficient Simulation of Inextensible Cloth", SIGGRAPH 2007, section 4;
/// Bergou et al., "Discrete Elastic Rods", 2008, use the same projection for inextensibility).
///
/// Why. A Newton iteration linearises each edge's length about the linearisation point,
/// |e| ~ t_lin . e, so a solve that turns an edge by an angle theta lengthens it by
/// |e| theta^2 / 2 that the linear system never saw. With nearly inextensible rods (hair:
/// E A l^2 / (E I) ~ 10^4 per edge) that spurious stretch holds a large energy, which the next
/// step turns into motion or dissipates: one linear solve per step then lags the converged
/// backward Euler answer badly. Here each edge of the solve's result x is brought back to the
/// length the linear system did see,
///
///   L_j = t_lin_j . e_j(x),        t_lin_j the unit edge at the linearisation point,
///
/// by moving the vertices as little as possible in the mass norm: minimise
/// 1/2 |x' - x|_M^2 subject to |e_j(x')|^2 = L_j^2. Each fast-projection iteration solves
/// (grad C M^-1 grad C^T) lambda = C, a symmetric tridiagonal system per rod (one row per
/// edge), and sets x' = x - M^-1 grad C^T lambda. Fixed vertices do not move (M^-1 = 0); an
/// edge between two fixed vertices is left as it is. The violation is second order in the
/// solve's rotation; hair at dt = 1/240 s takes three iterations to 1e-10, at most four are
/// taken. Only runs of free vertices with a free end are corrected (hair, bristles, fibres
/// from a root): a run between two fixed vertices can sag only by stretching (a taut string),
/// and there the second-order stretch is the physics, so it is left as the solve made it. A
/// rod whose constraints turn out dependent (a singular pivot) is left as well, and counted.
///
/// Rods are independent: threads over rods, each rod computed as serially, so the result
/// is bitwise identical for every thread count.

#include <vector>

#include "bristle/math/types.hpp"
#include "bristle/model/model.hpp"

namespace bristle {

class LengthCorrection {
 public:
  explicit LengthCorrection(const Model& model);

  void set_threads(int threads) { threads_ = threads < 1 ? 1 : threads; }

  struct Outcome {
    int iterations = 0;       ///< projection iterations of the slowest rod (at most 4)
    int uncorrected_rods = 0; ///< rods left as they were: dependent constraints (see .cpp)
  };
  /// Corrects `x` (all DOFs; fixed ones are not moved) so that each edge has the length
  /// t_lin . e(x) of the linearisation point `x_lin`.
  Outcome apply(const VecX& x_lin, VecX& x) const;

 private:
  template <int D>
  int correct_rod(int rod, const VecX& x_lin, VecX& x, std::vector<double>& scratch) const;

  const Model& model_;
  int threads_ = 1;
  std::vector<double> inverse_mass_;     // per global vertex; 0 for fixed vertices
};

}  // namespace bristle

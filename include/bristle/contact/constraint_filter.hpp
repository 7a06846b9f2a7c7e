#pragma once
/// Velocity constraints on single vertices, imposed exactly on the free-DOF system
/// J dv = b by a change of basis and elimination (the algebraic form of Baraff and Witkin's
/// constraint filtering, "Large steps in cloth simulation", SIGGRAPH 1998, section 5.3).
///
/// A constrained vertex carries an orthonormal frame Q = [q_1 .. q_D] (columns, world
/// coordinates). Its velocity change is written dv = Q y; the first `count` components of y
/// are prescribed, the rest are free. Baraff-Witkin filter the CG iterates with
/// S = I - sum_k q_k q_k^T; here the same constrained problem
///
///   minimise 1/2 dv^T J dv - b^T dv   subject to  q_k . dv = value_k,  k < count
///
/// is rewritten in the rotated unknowns y (J' = Q^T J Q, b' = Q^T b, with Q block diagonal:
/// identity on unconstrained vertices) and the prescribed components are eliminated like
/// fixed DOFs: their columns move to the right-hand side, their rows and columns become
/// zero except the diagonal, and their right-hand side is diagonal * value. Q is block
/// diagonal per vertex, so J' has exactly J's sparsity pattern and bandwidth: the per-rod
/// banded Cholesky preconditioner still factors each rod's block exactly and CG converges as
/// without constraints. The result equals the filtered solve to round-off.
///
///             J                          J' = Q^T J Q, eliminated
///   [ x x x . . . ]                   [ x x 0 . . . ]     vertex 2 (cols 2-3 in D = 2)
///   [ x x x x . . ]                   [ x x 0 x . . ]     constrained along q_1:
///   [ x x x x x . ]        ->         [ 0 0 d 0 0 . ]     row and column of y_1 cleared,
///   [ . x x x x x ]                   [ . x 0 x x x ]     d y_1 = d value_1
///
/// The free-DOF layout must store full D x D blocks per vertex pair (as SystemAssembler's
/// pattern does) and number each vertex's D free DOFs consecutively.

#include <vector>

#include "bristle/math/types.hpp"

namespace bristle {

struct VelocityConstraint {
  int free = 0;               ///< free index of the vertex's first DOF
  Mat3 frame = Mat3::Identity();  ///< Q: orthonormal columns; the top-left D x D block is used
  int count = 0;              ///< how many leading components of y = Q^T dv are prescribed (0..D)
  Vec3 value = Vec3::Zero();  ///< the prescribed components of y [m/s]
};

/// Rewrites (matrix, rhs) in place into the constrained system for y (see above). `matrix`
/// is symmetric with full storage and compressed; `constraints` name distinct vertices.
/// `scratch`, if given, is kept by the caller between calls (the filter leaves it as it found
/// it), so that a call costs what its constraints touch rather than the matrix's size.
/// `changed_columns`, if given, receives the columns whose values the filter may have changed
/// (sorted): restoring those restores the matrix. With `columns_given`, it holds them already
/// (filtered_columns' list for these constraints, which the caller formed to save them).
void filter_system(SparseMatrix& matrix, VecX& rhs, const std::vector<VelocityConstraint>& constraints,
                   int dimension, std::vector<int>* scratch = nullptr, std::vector<int>* changed_columns = nullptr,
                   bool columns_given = false);

/// The columns filter_system(matrix, ..., constraints, dimension) may change, sorted, known
/// before it runs (from the pattern): the constrained vertices' columns and those with an
/// entry in their rows. A caller that saves these values first can restore the matrix.
void filtered_columns(const SparseMatrix& matrix, const std::vector<VelocityConstraint>& constraints, int dimension,
                      std::vector<int>& columns);

/// The filtered system's unknowns y for a velocity change dv (Q^T dv on constrained vertices,
/// their prescribed components set to their values): a starting guess for its solve.
void filter_guess(const VecX& dv, const std::vector<VelocityConstraint>& constraints, int dimension, VecX& y);

/// Maps the solution y of the filtered system back to dv = Q y, with the prescribed
/// components set exactly to their values.
void unfilter_solution(VecX& solution, const std::vector<VelocityConstraint>& constraints, int dimension);

}  // namespace bristle

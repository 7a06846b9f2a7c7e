#pragma once
/// Preconditioned conjugate gradient on the threads, with the same results for every thread
/// count.
///
/// The iteration is Eigen's ConjugateGradient's (Eigen 3.4, IterativeLinearSolvers/
/// ConjugateGradient.h; Saad, "Iterative Methods for Sparse Linear Systems", 2nd ed.,
/// algorithm 9.1): the same start, recurrences, stopping test |r|^2 < max(tol^2 |b|^2, min
/// double) and reported error sqrt(|r|^2 / |b|^2). Eigen runs its sparse product on threads
/// but its vector operations (two dot products and three updates an iteration) on one, which
/// left a pressed brush's second thread idle for a tenth of the step. Here every pass over
/// the vectors is split into chunks of a fixed size: each chunk's part of a dot product is
/// summed in a fixed order and the parts are added in chunk order, so the bits of every
/// iterate depend on the chunk size, never on the threads. The passes are fused where the
/// recurrence allows (the product with p and p^T A p; the updates of x and r with |r|^2).
///
/// The matrix is symmetric with both triangles stored (Eigen's Lower | Upper): column i is
/// row i, so A p is formed row by row from the columns (as Eigen's row-major product, the
/// same bits).

#include <utility>
#include <vector>

#include <Eigen/Core>

#include "bristle/integrator/rod_preconditioner.hpp"
#include "bristle/math/types.hpp"

namespace bristle {

class ConjugateGradient {
 public:
  RodBlockPreconditioner& preconditioner() { return preconditioner_; }
  const RodBlockPreconditioner& preconditioner() const { return preconditioner_; }

  /// Relative residual |b - A x| / |b| at which the iteration stops.
  void set_tolerance(double tolerance) { tolerance_ = tolerance; }
  void set_max_iterations(int iterations) { max_iterations_ = iterations; }
  int max_iterations() const { return max_iterations_; }
  /// Threads for the vector passes and the product; the results do not depend on it.
  void set_threads(int threads) { threads_ = threads < 1 ? 1 : threads; }

  /// Takes the matrix (kept by reference until the next compute) and factors the
  /// preconditioner on it.
  void compute(const SparseMatrix& m);
  /// Solves A x = b from `guess`.
  VecX solve_with_guess(const VecX& b, const VecX& guess);

  /// Success when the last solve reached the tolerance, NoConvergence otherwise (also when
  /// its residual stopped being finite).
  Eigen::ComputationInfo info() const { return info_; }
  /// The last solve's relative residual sqrt(|r|^2 / |b|^2) by the recurrence (0 for b = 0).
  double error() const { return error_; }
  int iterations() const { return iterations_; }

  /// |v|^2 summed as the iteration sums it (chunks of kChunk, in order): a caller that takes
  /// CG's first test itself (a residual formed elsewhere, with the bits of CG's own) decides
  /// as CG would.
  static double squared_norm(const VecX& v, int threads);
  /// Restricts the iteration to the rows of `ranges` ([begin, end) pairs, increasing), where
  /// no row of the ranges has an entry in a column outside them: CG's products, sums and
  /// updates skip the other rows, and b and the guess are read on the ranges only; the
  /// solution keeps the guess's entries elsewhere, except that a b zero on the ranges gives a
  /// solution zero everywhere (the other rows are the caller's: zero where its system is zero
  /// there, a Newton iteration on the few rods still moving, ImplicitEuler's active rods; or
  /// solved otherwise, ImplicitEuler::cg_over_coupled_rods). The sums are
  /// chunked within the ranges: a range of every row gives the chunks, and the bits, of the
  /// whole.
  void set_active_ranges(std::vector<std::pair<int, int>> ranges);
  /// Every row again.
  void clear_active_ranges();
  bool has_active_ranges() const { return has_active_ranges_; }
  /// Measures the stopping test and error() against |b|^2 = `b_norm2` instead of the solve's
  /// own b (0: its own again): for a caller that solved the other rows of its system itself,
  /// exactly, so that the test is the whole system's (|r| below the tolerance times the whole
  /// |b|). A zero b still gives a zero solution.
  void set_reference_b_norm2(double b_norm2) { reference_b_norm2_ = b_norm2; }
  /// |b - A x| with the same chunked sums (the true residual, not the recurrence's), over
  /// the active ranges where they are set.
  double residual_norm(const SparseMatrix& m, const VecX& b, const VecX& x) const;

  /// Entries per chunk of the vector passes: the unit of the sums' order.
  static constexpr int kChunk = 4096;

 private:
  RodBlockPreconditioner preconditioner_;
  const SparseMatrix* matrix_ = nullptr;
  double tolerance_ = Eigen::NumTraits<double>::epsilon();
  int max_iterations_ = 1000;
  int threads_ = 1;
  Eigen::ComputationInfo info_ = Eigen::Success;
  double error_ = 0.0;
  int iterations_ = 0;
  // The work vectors and the chunks' partial sums, kept between solves.
  VecX residual_, direction_, preconditioned_, product_;
  std::vector<double> partial_;
  std::vector<std::pair<int, int>> active_ranges_, chunks_;
  bool has_active_ranges_ = false;
  double reference_b_norm2_ = 0.0;  // set_reference_b_norm2's; 0: b's own
  /// The chunks of [0, n), or of the active ranges; returns how many entries they hold.
  int make_chunks(int n, std::vector<std::pair<int, int>>& chunks) const;
};

}  // namespace bristle

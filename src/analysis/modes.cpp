#include "bristle/analysis/modes.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include <Eigen/Eigenvalues>
#include <Eigen/SparseCholesky>
#include <Spectra/SymEigsShiftSolver.h>
#include <stdexcept>
#include <string>

#include "bristle/integrator/assembly.hpp"

namespace bristle {
namespace {

constexpr double kTwoPi = 6.28318530717958647692;

/// Spectra's shift-solve operator: y = (A - sigma I)^-1 x through a sparse LDL^T (no
/// pivoting beyond the fill-reducing ordering; its D also gives the inertia of A - sigma I).
class ShiftInvertOp {
 public:
  using Scalar = double;

  explicit ShiftInvertOp(const SparseMatrix& a) : a_(a), shifted_(a) {
    for (int i = 0; i < a.cols(); ++i) {
      const int* begin = a.innerIndexPtr() + a.outerIndexPtr()[i];
      const int* end = a.innerIndexPtr() + a.outerIndexPtr()[i + 1];
      const int* it = std::lower_bound(begin, end, i);
      diagonal_slots_.push_back(static_cast<int>(it - a.innerIndexPtr()));  // present: see modal_analysis
    }
    ldlt_.analyzePattern(shifted_);
  }

  /// Factors A - sigma I; false when a pivot is exactly zero (sigma is an eigenvalue).
  bool factor(double sigma) {
    std::copy(a_.valuePtr(), a_.valuePtr() + a_.nonZeros(), shifted_.valuePtr());
    for (int slot : diagonal_slots_) shifted_.valuePtr()[slot] -= sigma;
    ldlt_.factorize(shifted_);
    sigma_ = sigma;
    factored_ = ldlt_.info() == Eigen::Success;
    negative_ = 0;
    if (factored_) {
      const VecX& d = ldlt_.vectorD();
      for (int i = 0; i < d.size(); ++i) {
        if (!std::isfinite(d[i]) || d[i] == 0.0) factored_ = false;
        if (d[i] < 0.0) ++negative_;
      }
    }
    return factored_;
  }
  /// Eigenvalues of A below the last shift factored (Sylvester's law of inertia).
  int negative_count() const { return negative_; }
  bool factored() const { return factored_; }

  Eigen::Index rows() const { return a_.rows(); }
  Eigen::Index cols() const { return a_.cols(); }
  void set_shift(double sigma) {
    if (!factored_ || sigma != sigma_) factor(sigma);
  }
  void perform_op(const double* x_in, double* y_out) const {
    Eigen::Map<const VecX> x(x_in, a_.rows());
    Eigen::Map<VecX> y(y_out, a_.rows());
    y = ldlt_.solve(x);
  }

 private:
  const SparseMatrix& a_;
  SparseMatrix shifted_;
  std::vector<int> diagonal_slots_;
  Eigen::SimplicialLDLT<SparseMatrix, Eigen::Lower, Eigen::AMDOrdering<int>> ldlt_;
  double sigma_ = 0.0;
  bool factored_ = false;
  int negative_ = 0;
};

}  // namespace

double signed_frequency_hz(double eigenvalue) {
  const double f = std::sqrt(std::abs(eigenvalue)) / kTwoPi;
  return eigenvalue < 0.0 ? -f : f;
}

ModalResult modal_analysis(const Model& model, const State& linearisation_point,
                           const ModalSettings& settings) {
  ModalResult result;
  const DofLayout& layout = model.layout;
  const int n = layout.free_dof_count();
  const VecX& x = linearisation_point.positions;
  if (x.size() != layout.dof_count() || !x.allFinite()) {
    result.message = "modal analysis: the linearisation point has the wrong size or a non-finite position";
    return result;
  }
  if (n == 0 || settings.count <= 0) {
    result.ok = true;
    result.method = "none (no free DOFs or no modes asked for)";
    return result;
  }
  const int count = std::min(settings.count, n);

  // K_ff, exact, at the linearisation point; the gradient tells how far from equilibrium.
  SystemAssembler assembler(model);
  VecX gradient;
  assembler.assemble(x, settings.time, HessianProjection::Exact, 1.0, gradient);
  const VecX mass = model.dof_masses();
  VecX inv_sqrt_mass(n);             // M^-1/2 on the free DOFs
  std::vector<int> free_to_dof(n);
  for (int dof = 0; dof < layout.dof_count(); ++dof) {
    const int f = layout.free_index(dof);
    if (f < 0) continue;
    free_to_dof[f] = dof;
    inv_sqrt_mass[f] = 1.0 / std::sqrt(mass[dof]);
    if (result.max_force_dof < 0 || std::abs(gradient[dof]) > result.max_force) {
      result.max_force = std::abs(gradient[dof]);
      result.max_force_dof = dof;
    }
  }
  if (!inv_sqrt_mass.allFinite()) {
    result.message = "modal analysis: a free vertex has zero mass";
    return result;
  }

  // A = M^-1/2 K M^-1/2 (same pattern as K_ff, which stores every diagonal entry: the
  // assembler reserves them for the mass).
  SparseMatrix a = assembler.matrix();
  for (int col = 0; col < a.outerSize(); ++col)
    for (SparseMatrix::InnerIterator it(a, col); it; ++it)
      it.valueRef() *= inv_sqrt_mass[it.row()] * inv_sqrt_mass[col];
  double scale = 0.0;
  for (int i = 0; i < n; ++i) scale = std::max(scale, std::abs(a.coeff(i, i)));
  if (!(scale > 0.0)) scale = 1.0;
  const double sigma0 = -1e-13 * scale;

  Eigen::VectorXd values;
  Eigen::MatrixXd vectors;

  if (n <= std::max(settings.dense_threshold, 3 * count)) {
    // Tiny system: dense symmetric eigensolver (Spectra's nev < ncv <= n would bite).
    Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> dense(Eigen::MatrixXd(a),
                                                         settings.want_shapes ? Eigen::ComputeEigenvectors
                                                                              : Eigen::EigenvaluesOnly);
    if (dense.info() != Eigen::Success) {
      result.message = "modal analysis: dense eigensolver failed";
      return result;
    }
    values = dense.eigenvalues().head(count);
    if (settings.want_shapes) vectors = dense.eigenvectors().leftCols(count);
    for (int i = 0; i < n; ++i)
      if (dense.eigenvalues()[i] < sigma0) ++result.unstable_count;
    result.method = "dense";
  } else {
    ShiftInvertOp op(a);
    // Find a shift below the whole spectrum (see the header): inertia counts tell.
    double sigma = sigma0;
    auto factor_nudged = [&](double s) {  // an exactly zero pivot: move the shift a hair
      for (int attempt = 0; attempt < 4; ++attempt, s *= 1.0001)
        if (op.factor(s)) return s;
      return std::nan("");
    };
    sigma = factor_nudged(sigma);
    if (std::isnan(sigma)) {
      result.message = "modal analysis: LDL^T factorisation of K - sigma M failed";
      return result;
    }
    result.unstable_count = op.negative_count();
    if (result.unstable_count > 0) {
      double high = sigma, low = 10.0 * sigma;  // high: eigenvalues below; low: wanted none below
      int expansions = 0;
      for (;;) {
        low = factor_nudged(low);
        if (std::isnan(low) || ++expansions > 40) {
          result.message = "modal analysis: could not place the shift below the spectrum";
          return result;
        }
        if (op.negative_count() == 0) break;
        high = low;
        low *= 10.0;
      }
      for (int b = 0; b < 6; ++b) {  // geometric bisection: end within ~10^(1/64) of lambda_min
        const double mid = -std::sqrt(low * high);
        const double m = factor_nudged(mid);
        if (std::isnan(m)) break;
        if (op.negative_count() == 0) low = m; else high = m;
      }
      sigma = factor_nudged(low);
      if (std::isnan(sigma) || op.negative_count() != 0) {
        result.message = "modal analysis: could not place the shift below the spectrum";
        return result;
      }
    }

    const int ncv = std::min(n, std::max(2 * count + 1, count + 20));
    Spectra::SymEigsShiftSolver<ShiftInvertOp> eigs(op, count, ncv, sigma);
    eigs.init();
    try {
      eigs.compute(Spectra::SortRule::LargestMagn, settings.max_iterations, settings.tolerance,
                   Spectra::SortRule::SmallestAlge);
    } catch (const std::exception& error) {
      // Spectra throws when its small eigenproblem breaks down, as it does on operators whose
      // entries span more orders of magnitude than a double holds (stiffnesses 1e-30 and
      // 1e300 in one scene): an analysis that failed, not a program error.
      result.message = std::string("modal analysis: the eigensolver failed (") + error.what() +
                       "); are the stiffnesses within a few dozen orders of magnitude of each other?";
      return result;
    }
    if (eigs.info() != Spectra::CompInfo::Successful) {
      std::ostringstream message;
      message << "modal analysis: Spectra did not converge (" << eigs.eigenvalues().size() << " of "
              << count << " eigenvalues after " << eigs.num_iterations() << " restarts)";
      result.message = message.str();
      return result;
    }
    values = eigs.eigenvalues();
    if (settings.want_shapes) vectors = eigs.eigenvectors(count);
    std::ostringstream method;
    method << "spectra shift-invert (sigma = " << sigma << " 1/s^2, " << eigs.num_operations()
           << " solves)";
    result.method = method.str();
  }

  for (int k = 0; k < values.size(); ++k) {
    result.eigenvalues.push_back(values[k]);
    result.frequencies_hz.push_back(signed_frequency_hz(values[k]));
  }
  if (settings.want_shapes) {
    for (int k = 0; k < vectors.cols(); ++k) {
      VecX phi = VecX::Zero(layout.dof_count());
      for (int f = 0; f < n; ++f) phi[free_to_dof[f]] = inv_sqrt_mass[f] * vectors(f, k);
      // phi^T M phi = y^T y; normalise it to 1 and fix the sign for reproducible output.
      phi /= vectors.col(k).norm();
      Eigen::Index largest = 0;
      phi.cwiseAbs().maxCoeff(&largest);
      if (phi[largest] < 0.0) phi = -phi;
      result.shapes.push_back(std::move(phi));
    }
  }
  // Stiffnesses near the bottom of the double range (a Young's modulus of 1e-300) can leave
  // the eigensolver with NaN: a failure to report, not numbers to print or shapes to write.
  bool finite = true;
  for (const double lambda : result.eigenvalues) finite = finite && std::isfinite(lambda);
  for (const VecX& phi : result.shapes) finite = finite && phi.allFinite();
  if (!finite) {
    result.message = "the eigensolver returned non-finite eigenvalues or shapes (" + result.method +
                     "); the stiffnesses may be too small or too large for double precision";
    result.eigenvalues.clear();
    result.frequencies_hz.clear();
    result.shapes.clear();
    return result;
  }
  result.ok = true;
  return result;
}

std::vector<double> natural_frequencies(const Model& model, const State& linearisation_point,
                                        int count) {
  ModalSettings settings;
  settings.count = count;
  const ModalResult result = modal_analysis(model, linearisation_point, settings);
  return result.ok ? result.frequencies_hz : std::vector<double>{};
}

ModalResult natural_modes(const Model& model, const State& linearisation_point, int count) {
  ModalSettings settings;
  settings.count = count;
  settings.want_shapes = true;
  return modal_analysis(model, linearisation_point, settings);
}

}  // namespace bristle

#pragma once
/// Modal analysis: natural frequencies and mode shapes of the model linearised about a state.
///
/// Problem. Small oscillations u(t) = phi sin(omega t) about a linearisation point x* satisfy
///
///   K phi = omega^2 M phi      on the free DOFs (fixed DOFs held, phi = 0 there),
///
/// with K the exact Hessian of the total potential (stretch + bend + gravity + loads) at x*
/// (HessianProjection::Exact, nothing clamped: its geometric terms carry the prestress of
/// gravity and loads, so a compressed column softens and a hanging one stiffens) and M the
/// lumped mass (diagonal, interface.md section 2). f = omega / (2 pi) [Hz]. Damping is ignored.
/// The analysis is meaningful at an equilibrium; `max_force` reports how far x* is from one.
///
/// Solution method. M is diagonal and positive, so the generalised problem is transformed
/// exactly into a standard symmetric one, A y = lambda y with A = M^-1/2 K M^-1/2, phi =
/// M^-1/2 y. The transform keeps the sparsity, costs one scaling, makes the eigenvectors
/// M-orthonormal for free, and lets the shift-invert operator be a plain sparse LDL^T of
/// A - sigma I (no B-inner products as in Spectra's generalised shift-invert mode; the two are
/// mathematically identical here). The lowest eigenvalues of a slender rod are tiny next to
/// its largest (axial) ones, about r^2 h^2 / L^4 of them, so plain Lanczos on A would need
/// thousands of iterations: Spectra's SymEigsShiftSolver on (A - sigma I)^-1 is used instead.
///
/// Choice of the shift. Shift-invert finds the eigenvalues nearest sigma; they are the
/// algebraically smallest only when sigma lies below the whole spectrum. The LDL^T
/// factorisation gives that for free: by Sylvester's law of inertia the number of negative
/// pivots of A - sigma I is the number of eigenvalues below sigma. We start at
/// sigma0 = -1e-13 max_i A_ii (just below zero, so rigid-body modes of unclamped rods, exactly
/// zero in theory and +-1e-15 max A_ii in floating point, do not make the factorisation
/// singular). If eigenvalues lie below sigma0 (a prestressed state that is unstable), sigma is
/// pushed down by factors of 10 until none does and then bisected (geometrically) back towards
/// the lowest eigenvalue, so it ends a little below it and Lanczos converges fast.
///
/// Negative eigenvalues are reported, not turned into NaN: `frequencies_hz` are signed,
/// f = sign(lambda) sqrt(|lambda|) / (2 pi), so an unstable mode has a negative "frequency"
/// whose magnitude is its e-folding rate / (2 pi).
///
/// Small systems. Spectra needs nev < ncv <= n; for n <= max(dense_threshold, 3 count) free
/// DOFs the problem is solved densely with Eigen's SelfAdjointEigenSolver (n is then tiny).

#include <string>
#include <vector>

#include "bristle/math/types.hpp"
#include "bristle/model/model.hpp"

namespace bristle {

struct ModalSettings {
  int count = 6;              ///< number of lowest modes wanted (clipped to the free DOF count)
  bool want_shapes = false;   ///< also return mode shapes
  double time = 0.0;          ///< [s]; point loads are evaluated at this time (their ramp)
  int dense_threshold = 48;   ///< free DOF counts up to this use the dense eigensolver
  double tolerance = 1e-10;   ///< Spectra's relative convergence tolerance on the Ritz values
  int max_iterations = 1000;  ///< Spectra's restart cap
};

struct ModalResult {
  bool ok = false;
  std::string message;                ///< empty when ok; otherwise what failed
  std::string method;                 ///< "dense" or "spectra shift-invert (sigma = ...)"
  /// lambda = omega^2 [1/s^2], ascending. Negative: the linearisation point is unstable.
  std::vector<double> eigenvalues;
  /// Signed frequencies [Hz]: sign(lambda) sqrt(|lambda|) / (2 pi), ascending.
  std::vector<double> frequencies_hz;
  /// Mode shapes (only with want_shapes): full DOF vectors in DofLayout order, zero on fixed
  /// DOFs, M-orthonormal (phi_i^T M phi_j = delta_ij) [m / sqrt(kg)], the entry of largest
  /// magnitude positive.
  std::vector<VecX> shapes;
  /// Eigenvalues of the whole free system below -1e-13 max_i K_ii / m_i (Sylvester inertia),
  /// counted even beyond `count`: the number of unstable directions. Eigenvalues closer to
  /// zero than that are numerically zero (rigid-body modes, a column exactly at its threshold)
  /// and are not counted, though they are returned with their sign.
  int unstable_count = 0;
  double max_force = 0.0;  ///< |grad U|_inf over free DOFs at the linearisation point [N]
  int max_force_dof = -1;  ///< the DOF where it is reached (-1 when no free DOF)
};

/// The `settings.count` lowest modes of the model linearised about `linearisation_point`.
ModalResult modal_analysis(const Model& model, const State& linearisation_point,
                           const ModalSettings& settings);

/// The `count` lowest natural frequencies [Hz], signed as in ModalResult::frequencies_hz
/// (negative for unstable modes). Empty if the eigensolver failed.
std::vector<double> natural_frequencies(const Model& model, const State& linearisation_point,
                                        int count);

/// The `count` lowest modes with their shapes.
ModalResult natural_modes(const Model& model, const State& linearisation_point, int count);

/// sign(lambda) sqrt(|lambda|) / (2 pi) [Hz], lambda = omega^2 [1/s^2].
double signed_frequency_hz(double eigenvalue);

}  // namespace bristle

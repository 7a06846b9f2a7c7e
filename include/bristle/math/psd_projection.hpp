#pragma once
/// Projection of a symmetric element Hessian onto the positive semi-definite cone.
///
/// The nearest PSD matrix in the Frobenius norm to a symmetric H = Q diag(lambda) Q^T is
/// Q diag(max(lambda, 0)) Q^T (Higham 1988). Element Hessians of bending (and of compressed
/// springs) are indefinite; the implicit integrator needs M + h^2 K to be SPD for every step
/// size, so every element Hessian passes through one of these before it is assembled.

#include <Eigen/Eigenvalues>

#include "bristle/math/types.hpp"

namespace bristle {

template <int N>
inline Mat<N, N> project_to_psd(const Mat<N, N>& hessian) {
  Eigen::SelfAdjointEigenSolver<Mat<N, N>> eigen(hessian);
  if (eigen.eigenvalues().minCoeff() >= 0.0) return hessian;
  Vec<N> clamped = eigen.eigenvalues().cwiseMax(0.0);
  return eigen.eigenvectors() * clamped.asDiagonal() * eigen.eigenvectors().transpose();
}

}  // namespace bristle

#pragma once
/// Eigen aliases used across Bristle. One scalar type (double) everywhere.

#include <Eigen/Core>
#include <Eigen/Geometry>
#include <Eigen/SparseCore>

namespace bristle {

template <int N>
using Vec = Eigen::Matrix<double, N, 1>;
template <int R, int C>
using Mat = Eigen::Matrix<double, R, C>;

using Vec2 = Vec<2>;
using Vec3 = Vec<3>;
using Vec4 = Vec<4>;
using Vec6 = Vec<6>;
using Vec9 = Vec<9>;
using Mat2 = Mat<2, 2>;
using Mat3 = Mat<3, 3>;
using Mat4 = Mat<4, 4>;
using Mat6 = Mat<6, 6>;
using Mat9 = Mat<9, 9>;

using VecX = Eigen::VectorXd;
using SparseMatrix = Eigen::SparseMatrix<double, Eigen::ColMajor, int>;

/// Sym(a, b) = a b^T + b a^T.
template <int D>
inline Mat<D, D> sym_outer(const Vec<D>& a, const Vec<D>& b) {
  return a * b.transpose() + b * a.transpose();
}

}  // namespace bristle

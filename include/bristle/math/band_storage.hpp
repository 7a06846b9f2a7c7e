#pragma once
/// Band storage of a symmetric matrix's lower triangle, shared by the assembler (which builds
/// each rod's block in it) and the rod preconditioner (which factors it in place).
///
/// With half-bandwidth w, row i holds entries (i, i - w .. i) side by side, w + 1 values per
/// row: entry (i, k), i - w <= k <= i, is at (i + 1) w + k. The first rows' slots for k < 0 lie
/// outside the matrix and hold zeros. A column's entries below the diagonal are w apart.

#include <cstddef>

namespace bristle {

/// Index of lower-triangle entry (row, col), row - half_bandwidth <= col <= row, in band storage.
inline constexpr int band_index(int row, int col, int half_bandwidth) { return (row + 1) * half_bandwidth + col; }

/// Values of a size x size band with the given half-bandwidth.
inline constexpr int band_length(int size, int half_bandwidth) { return size * (half_bandwidth + 1); }

/// One block in band storage, handed from one part to another (its owner says whether the
/// receiver may overwrite it).
struct BandView {
  double* values = nullptr;
  int size = 0;
  int half_bandwidth = 0;
};

/// y = A x for the symmetric matrix A whose lower triangle `lower` holds (size n, half-bandwidth
/// w): each stored entry below the diagonal acts twice, (i, k) on y_i and (k, i) on y_k.
inline void symmetric_band_product(const double* lower, int n, int w, const double* x, double* y) {
  for (int i = 0; i < n; ++i) y[i] = 0.0;
  for (int i = 0; i < n; ++i) {
    const double* row = lower + static_cast<std::ptrdiff_t>(i + 1) * w;  // row[k] = (i, k), band_index
    const int k0 = i - w > 0 ? i - w : 0;
    double sum = row[i] * x[i];
    for (int k = k0; k < i; ++k) {
      sum += row[k] * x[k];
      y[k] += row[k] * x[i];
    }
    y[i] += sum;
  }
}

}  // namespace bristle

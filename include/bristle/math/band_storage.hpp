#pragma once
/// Band storage of a symmetric matrix's lower triangle, shared by the assembler (which builds
/// each rod's block in it) and the rod preconditioner (which factors it in place).
///
/// With half-bandwidth w, row i holds entries (i, i - w .. i) side by side, w + 1 values per
/// row: entry (i, k), i - w <= k <= i, is at (i + 1) w + k. The first rows' slots for k < 0 lie
/// outside the matrix and hold zeros. A column's entries below the diagonal are w apart.

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

}  // namespace bristle

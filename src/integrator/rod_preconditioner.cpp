#include "bristle/integrator/rod_preconditioner.hpp"

#include <algorithm>
#include <cmath>

namespace bristle {

void RodBlockPreconditioner::factorize_compressed(int n, const int* outer, const int* inner,
                                                  const double* values) {
  size_ = n;
  failed_blocks_ = 0;
  inverse_diagonal_.setOnes(n);
  covered_.assign(n, 0);
  for (int col = 0; col < n; ++col)
    for (int k = outer[col]; k < outer[col + 1]; ++k)
      if (inner[k] == col && values[k] != 0.0) inverse_diagonal_[col] = 1.0 / values[k];

  factors_.resize(blocks_.size());
  for (std::size_t b = 0; b < blocks_.size(); ++b) {
    Block& block = factors_[b];
    block.begin = blocks_[b].first;
    block.size = blocks_[b].second - blocks_[b].first;
    block.factored = false;
    if (block.size <= 0) continue;
    const int begin = block.begin, end = begin + block.size;

    int w = 0;
    for (int col = begin; col < end; ++col)
      for (int k = outer[col]; k < outer[col + 1]; ++k)
        if (inner[k] >= col && inner[k] < end) w = std::max(w, inner[k] - col);
    block.half_bandwidth = w;
    const int stride = w + 1;
    block.band.assign(static_cast<std::size_t>(block.size) * stride, 0.0);
    auto L = [&](int i, int j) -> double& { return block.band[i * stride + (j - i + w)]; };

    // Lower triangle of the block into band storage (local indices).
    for (int col = begin; col < end; ++col)
      for (int k = outer[col]; k < outer[col + 1]; ++k)
        if (inner[k] >= col && inner[k] < end) L(inner[k] - begin, col - begin) = values[k];

    // Banded Cholesky, A = L L^T.
    bool ok = true;
    for (int i = 0; i < block.size && ok; ++i) {
      const int j0 = std::max(0, i - w);
      for (int j = j0; j <= i; ++j) {
        double s = L(i, j);
        for (int k = j0; k < j; ++k)
          if (k >= j - w) s -= L(i, k) * L(j, k);
        if (j == i) {
          if (!(s > 0.0)) { ok = false; break; }
          L(i, i) = std::sqrt(s);
        } else {
          L(i, j) = s / L(j, j);
        }
      }
    }
    block.factored = ok;
    if (!ok) ++failed_blocks_;
    if (ok) std::fill(covered_.begin() + begin, covered_.begin() + end, 1);
  }
}

void RodBlockPreconditioner::apply_in_place(VecX& x) const {
  ++applications_;
  for (int i = 0; i < size_; ++i)
    if (!covered_[i]) x[i] *= inverse_diagonal_[i];
  for (const Block& block : factors_) {
    if (!block.factored) continue;
    const int w = block.half_bandwidth, stride = w + 1, n = block.size;
    double* y = x.data() + block.begin;
    auto L = [&](int i, int j) { return block.band[i * stride + (j - i + w)]; };
    for (int i = 0; i < n; ++i) {  // L y = b
      double s = y[i];
      for (int k = std::max(0, i - w); k < i; ++k) s -= L(i, k) * y[k];
      y[i] = s / L(i, i);
    }
    for (int i = n - 1; i >= 0; --i) {  // L^T x = y
      double s = y[i];
      for (int k = i + 1; k <= std::min(n - 1, i + w); ++k) s -= L(k, i) * y[k];
      y[i] = s / L(i, i);
    }
  }
}

}  // namespace bristle

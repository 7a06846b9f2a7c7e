#include "bristle/integrator/rod_preconditioner.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstring>
#include <limits>

namespace bristle {

namespace {

/// The largest error a group's factor may leave in a solve whose answer is 1 (factorize_groups).
constexpr double kGroupAccuracy = 1e-8;

// The widest band a block is factored with. A rod's own band is at most 10 (3D with twist);
// a rod's self-contact can add entries within this of the diagonal (parts of the rod a few
// vertices apart), which the factorisation takes in; entries further out are left to CG.
constexpr int kMaxHalfBandwidth = 64;

// Banded Cholesky A = L L^T in band storage: row i holds L(i, i - w .. i) at
// band[i (w + 1) .. i (w + 1) + w], so L(i, k) = band[i (w + 1) + w + k - i]. The diagonal is
// stored inverted (1 / L(i, i)), so the triangular solves multiply instead of divide.
//
// Right-looking: column j is scaled by 1/L(j, j), then the trailing band is updated,
// A(i, k) -= L(i, j) L(k, j) for j < k <= i <= j + count_j (count_j <= w, below). The updates of one column are
// independent of each other, so the loop runs at the processor's throughput instead of
// waiting on one long chain of dependent operations (the row-by-row form, a dot product per
// entry, was several times slower). For the half-bandwidths of rods (3D - 1 with D DOFs per
// vertex and bending coupling two vertices away: 5 in 2D, 8 in 3D; 10 in 3D with twist, where
// the bend-twist stencil spans 11 DOFs) the loops have compile-time trip counts and unroll
// completely; other widths take the same arithmetic in the same order through the generic
// loop, so both give identical results.

// Only the rows of column j that can be nonzero are eliminated: row i's entries left of its
// first stored column f_i are zero in A and stay zero in L (fill-in stays inside the
// envelope), so column j has nonzeros only on rows i with f_i <= j: `count` rows below the
// diagonal (precomputed from the pattern, RodBlockPreconditioner::analyze_compressed). In 3D
// a vertex's three columns reach 8, 7 and 6 rows down instead of w = 8 each, a fifth fewer
// updates; the skipped ones would subtract exact zeros.

/// Scales column j below the diagonal by 1 / L(j, j) and updates the trailing band. `W` is
/// the compile-time half-bandwidth and `C` the column's count, or 0 for the run-time values.
/// With a right-hand side y (`WithRhs`), also takes the forward substitution L z = y one
/// column on: z_j = y_j / L(j, j), then y_i -= L(i, j) z_j below it. Those are the row-by-row
/// substitution's products and subtractions, in the same order (row i subtracts its columns
/// left to right), but independent of each other: they overlap with the factorisation's
/// updates instead of forming a chain of their own.
template <int W, int C, bool WithRhs>
[[gnu::always_inline]] inline void eliminate_column(double* band, int j, int w, int count, double inverse,
                                                    double* y) {
  if constexpr (W > 0) w = W;
  if constexpr (C > 0) count = C;
  double column[65];
  for (int a = 1; a <= count; ++a) {
    double& l = band[band_index(j + a, j, w)];
    l *= inverse;
    column[a] = l;
  }
  if constexpr (WithRhs) {
    const double z = y[j] * inverse;
    y[j] = z;
    for (int a = 1; a <= count; ++a) y[j + a] -= column[a] * z;
  }
  for (int a = 1; a <= count; ++a)
    for (int c = 1; c <= a; ++c) band[band_index(j + a, j + c, w)] -= column[a] * column[c];
}

/// eliminate_column with the count as a compile-time constant, so its loops unroll.
template <int W, bool WithRhs, int C = W>
[[gnu::always_inline]] inline void eliminate_column_unrolled(double* band, int j, int count, double inverse,
                                                             double* y) {
  if (count == C) {
    eliminate_column<W, C, WithRhs>(band, j, W, C, inverse, y);
  } else if constexpr (C > 0) {
    eliminate_column_unrolled<W, WithRhs, C - 1>(band, j, count, inverse, y);
  }
}

/// `W` is the compile-time half-bandwidth, or 0 for the run-time `w`.
template <int W, bool WithRhs>
int banded_cholesky_impl(double* band, int n, int w, const unsigned char* counts, double* y) {
  if constexpr (W > 0) w = W;
  for (int j = 0; j < n; ++j) {
    double& pivot = band[band_index(j, j, w)];
    if (!(pivot > 0.0) || !(pivot < std::numeric_limits<double>::infinity())) return j;
    const double inverse = 1.0 / std::sqrt(pivot);
    pivot = inverse;
    if constexpr (W > 0)
      eliminate_column_unrolled<W, WithRhs>(band, j, counts[j], inverse, y);
    else
      eliminate_column<0, 0, WithRhs>(band, j, w, counts[j], inverse, y);
  }
  return -1;
}

/// Factors the band in place; with y non-null, also overwrites y with the solution z of
/// L z = y (y is then partly updated if the factorisation fails). Returns -1, or the column
/// whose pivot was not positive and finite (n for a band too wide to factor).
int banded_cholesky(double* band, int n, int w, const unsigned char* counts, double* y = nullptr) {
  // A guard: analyze_compressed keeps every block's band within kMaxHalfBandwidth. Reported
  // as column n: not a pivot's failure (RodBlockPreconditioner::failed_pivot).
  if (w > kMaxHalfBandwidth) return n;
  if (y != nullptr) {
    switch (w) {
      case 5: return banded_cholesky_impl<5, true>(band, n, w, counts, y);
      case 8: return banded_cholesky_impl<8, true>(band, n, w, counts, y);
      case 10: return banded_cholesky_impl<10, true>(band, n, w, counts, y);
      default: return banded_cholesky_impl<0, true>(band, n, w, counts, y);
    }
  }
  switch (w) {
    case 5: return banded_cholesky_impl<5, false>(band, n, w, counts, y);
    case 8: return banded_cholesky_impl<8, false>(band, n, w, counts, y);
    case 10: return banded_cholesky_impl<10, false>(band, n, w, counts, y);
    default: return banded_cholesky_impl<0, false>(band, n, w, counts, y);
  }
}

/// Solves L L^T y = b in place (b in y); with `backward_only`, y already holds z = L^-1 b
/// (banded_cholesky with a right-hand side) and only L^T y = z is solved.
template <int W>
void banded_solve_impl(const double* band, int n, int w, double* y, bool backward_only = false) {
  if constexpr (W > 0) w = W;
  auto entry = [&](int i, int k) { return band[static_cast<std::size_t>(i) * (w + 1) + w + k - i]; };
  for (int i = 0; i < n && !backward_only; ++i) {  // L z = b, row by row
    double sum = y[i];
    for (int k = std::max(0, i - w); k < i; ++k) sum -= entry(i, k) * y[k];
    y[i] = sum * entry(i, i);
  }
  for (int j = n - 1; j >= 0; --j) {  // L^T y = z, column by column: independent updates
    const double yj = y[j] * entry(j, j);
    y[j] = yj;
    for (int k = std::max(0, j - w); k < j; ++k) y[k] -= entry(j, k) * yj;
  }
}

/// Two independent solves of the same size and bandwidth in one loop: each is a chain of
/// dependent operations (row i needs rows i - w .. i - 1), and interleaving two chains lets
/// the processor overlap their latencies (a third faster here). Each vector gets exactly the
/// arithmetic of banded_solve_impl, in the same order. (Pairing the factorisations the same
/// way gained nothing: their column updates already run at the processor's throughput.)
template <int W>
void banded_solve_pair_impl(const double* band_a, const double* band_b, int n, int w, double* ya, double* yb) {
  if constexpr (W > 0) w = W;
  const std::size_t stride = static_cast<std::size_t>(w) + 1;
  auto a = [&](int i, int k) { return band_a[static_cast<std::size_t>(i) * stride + w + k - i]; };
  auto b = [&](int i, int k) { return band_b[static_cast<std::size_t>(i) * stride + w + k - i]; };
  for (int i = 0; i < n; ++i) {
    double sum_a = ya[i], sum_b = yb[i];
    for (int k = std::max(0, i - w); k < i; ++k) {
      sum_a -= a(i, k) * ya[k];
      sum_b -= b(i, k) * yb[k];
    }
    ya[i] = sum_a * a(i, i);
    yb[i] = sum_b * b(i, i);
  }
  for (int j = n - 1; j >= 0; --j) {
    const double yj_a = ya[j] * a(j, j), yj_b = yb[j] * b(j, j);
    ya[j] = yj_a;
    yb[j] = yj_b;
    for (int k = std::max(0, j - w); k < j; ++k) {
      ya[k] -= a(j, k) * yj_a;
      yb[k] -= b(j, k) * yj_b;
    }
  }
}

void banded_solve_pair(const double* band_a, const double* band_b, int n, int w, double* ya, double* yb) {
  switch (w) {
    case 5: banded_solve_pair_impl<5>(band_a, band_b, n, w, ya, yb); break;
    case 8: banded_solve_pair_impl<8>(band_a, band_b, n, w, ya, yb); break;
    case 10: banded_solve_pair_impl<10>(band_a, band_b, n, w, ya, yb); break;
    default: banded_solve_pair_impl<0>(band_a, band_b, n, w, ya, yb); break;
  }
}

void banded_solve(const double* band, int n, int w, double* y, bool backward_only = false) {
  switch (w) {
    case 5: banded_solve_impl<5>(band, n, w, y, backward_only); break;
    case 8: banded_solve_impl<8>(band, n, w, y, backward_only); break;
    case 10: banded_solve_impl<10>(band, n, w, y, backward_only); break;
    default: banded_solve_impl<0>(band, n, w, y, backward_only); break;
  }
}

}  // namespace

int RodBlockPreconditioner::diagonal_entry(int col) const {
  // Looked up for the few DOFs Jacobi takes (usually none), not indexed for all at each
  // analysis: that index was half of analyze_compressed's time on the tilted 1000-bristle
  // brush, where the analysis runs once per Newton iteration.
  if (analyzed_outer_ == nullptr || col < 0 || col >= analyzed_n_) return -1;
  const int* begin = analyzed_inner_ + analyzed_outer_[col];
  const int* end = analyzed_inner_ + analyzed_outer_[col + 1];
  const int* found = std::lower_bound(begin, end, col);  // compressed columns hold sorted rows
  if (found == end || *found != col) found = std::find(begin, end, col);
  return found == end ? -1 : static_cast<int>(found - analyzed_inner_);
}

bool RodBlockPreconditioner::keeps_pattern(const Block& block, const int* outer, const int* inner) {
  const int begin = block.begin, end = block.begin + block.size;
  if (static_cast<int>(block.pattern_counts.size()) != block.size) return false;
  for (int col = begin; col < end; ++col)
    if (outer[col + 1] - outer[col] != block.pattern_counts[col - begin]) return false;
  const std::size_t entries = static_cast<std::size_t>(outer[end] - outer[begin]);
  return entries == block.pattern_rows.size() &&
         std::memcmp(inner + outer[begin], block.pattern_rows.data(), sizeof(int) * entries) == 0;
}

void RodBlockPreconditioner::analyze_compressed(int n, const int* outer, const int* inner,
                                                const std::vector<char>* only_blocks) {
  factors_kept_ = false;
  size_ = n;
  // Blocks with their ranges of before keep their analysis where their pattern is unchanged.
  bool same_ranges = factors_.size() == blocks_.size();
  for (std::size_t b = 0; b < blocks_.size() && same_ranges; ++b)
    same_ranges = factors_[b].begin == blocks_[b].first && factors_[b].size == blocks_[b].second - blocks_[b].first;
  if (!same_ranges) factors_.assign(blocks_.size(), Block{});
  std::vector<char> in_block(n, 0);
  for (const auto& [begin, end] : blocks_)
    for (int i = std::max(0, begin); i < std::min(n, end); ++i) in_block[i] = 1;
  outside_blocks_.clear();
  for (int i = 0; i < n; ++i)
    if (!in_block[i]) outside_blocks_.push_back(i);
  // Blocks on threads: each writes only its own Block (the contact solver's filtered systems
  // are analysed at every solve, a few per Newton iteration).
  bool between = false;
  long analysed = 0;
  const int block_count = static_cast<int>(blocks_.size());
  assert(only_blocks == nullptr || static_cast<int>(only_blocks->size()) == block_count);
#pragma omp parallel for schedule(dynamic, 8) num_threads(threads_) if (threads_ > 1 && block_count > 1) reduction(|| : between) reduction(+ : analysed)
  for (int b = 0; b < block_count; ++b) {
    Block& block = factors_[b];
    if (only_blocks != nullptr && !(*only_blocks)[b]) {
      // Left out of this pattern (analyze_blocks): its analysis stays that of the last whole
      // pattern, offsets included; not factored for these values.
      block.factored = false;
      block.failed_pivot = -1;
      continue;
    }
    const int begin = blocks_[b].first, size = blocks_[b].second - blocks_[b].first, end = begin + size;
    if (size > 0 && begin >= 0 && end <= n && block.pattern_offset >= 0 && keeps_pattern(block, outer, inner)) {
      // The same analysis: only the value positions move. The kept factor's input
      // (factored_from, compared bit by bit before reuse) stays valid: same runs, same order.
      const int shift = outer[begin] - block.pattern_offset;
      for (CopyRun& run : block.runs) run.value_source += shift;
      for (Block::Dropped& entry : block.dropped) entry.value_source += shift;
      block.pattern_offset = outer[begin];
      block.factored = false;
      block.failed_pivot = -1;
      between = between || block.pattern_between;
      continue;
    }
    block = Block{};
    block.begin = begin;
    block.size = size;
    if (block.size <= 0) continue;
    ++analysed;
    bool block_between = false;
    for (int col = begin; col < end && !block_between; ++col)
      for (int k = outer[col]; k < outer[col + 1]; ++k)
        if (inner[k] < begin || inner[k] >= end) block_between = true;
    between = between || block_between;
    // Entries further from the diagonal than kMaxHalfBandwidth (self-contact between parts of
    // a rod far apart along it) are left to CG, as coupling between rods is: the band stays
    // a rod's band, which the factorisation is made for (Block::dropped: should the band
    // without them not be positive definite, their magnitudes go onto its diagonal).
    int w = 0;
    for (int col = begin; col < end; ++col)
      for (int k = outer[col]; k < outer[col + 1]; ++k)
        if (inner[k] >= col && inner[k] < end && inner[k] - col <= kMaxHalfBandwidth) w = std::max(w, inner[k] - col);
    block.half_bandwidth = w;
    const int stride = w + 1;
    block.runs.clear();
    block.dropped.clear();
    std::vector<char> filled(static_cast<std::size_t>(block.size) * stride, 0);
    for (int col = begin; col < end; ++col)
      for (int k = outer[col]; k < outer[col + 1]; ++k) {
        const int row = inner[k];
        if (row < col || row >= end) continue;
        if (row - col > w) {
          block.dropped.push_back({k, row - begin, col - begin});
          continue;
        }
        const int i = row - begin, j = col - begin;  // L(i, j), i >= j
        const int target = i * stride + (j - i + w);
        filled[target] = 1;
        CopyRun* last = block.runs.empty() ? nullptr : &block.runs.back();
        if (last != nullptr && last->value_source + last->count == k &&
            last->band_target + last->count * w == target && k > outer[col])
          ++last->count;  // the next row of the same column
        else
          block.runs.push_back({k, target, 1});
      }
    // Entries the factorisation reads, L(i, k) for max(0, i - w) <= k <= i, that no stored
    // entry fills.
    block.band_gaps.clear();
    for (int i = 0; i < block.size; ++i)
      for (int k = std::max(0, i - w); k <= i; ++k) {
        const int index = i * stride + (k - i + w);
        if (!filled[index]) block.band_gaps.push_back(index);
      }
    block.band.clear();
    // Column j's rows that can be nonzero in L: those i <= j + w with f_i <= j, f_i the first
    // stored column of row i (the first stored row of column i: the pattern is symmetric).
    std::vector<int> first_column(block.size);
    for (int i = 0; i < block.size; ++i) {
      first_column[i] = i;
      for (int k = outer[begin + i]; k < outer[begin + i + 1]; ++k)
        if (inner[k] >= begin && inner[k] < end && begin + i - inner[k] <= w)
          first_column[i] = std::min(first_column[i], inner[k] - begin);
    }
    block.column_counts.assign(block.size, 0);
    for (int j = 0; j < block.size; ++j)
      for (int i = std::min(block.size - 1, j + w); i > j; --i)
        if (first_column[i] <= j) {
          block.column_counts[j] = static_cast<unsigned char>(i - j);
          break;
        }
    if (begin >= 0 && end <= n) {
      block.pattern_counts.resize(block.size);
      for (int col = begin; col < end; ++col) block.pattern_counts[col - begin] = outer[col + 1] - outer[col];
      block.pattern_rows.assign(inner + outer[begin], inner + outer[end]);
      block.pattern_offset = outer[begin];
      block.pattern_between = block_between;
    }
  }
  entries_between_blocks_ = between;
  block_analyses_ += analysed;
  analyzed_outer_ = outer;
  analyzed_inner_ = inner;
  analyzed_n_ = n;
  analyzed_nonzeros_ = outer[n];
}

bool RodBlockPreconditioner::same_bits_as_factored(const Block& block, const double* values) {
  const double* kept = block.factored_from.data();
  for (const CopyRun& run : block.runs) {
    if (std::memcmp(kept, values + run.value_source, sizeof(double) * static_cast<std::size_t>(run.count)) != 0)
      return false;
    kept += run.count;
  }
  for (const Block::Dropped& entry : block.dropped)
    if (std::memcmp(kept++, values + entry.value_source, sizeof(double)) != 0) return false;
  return true;
}

void RodBlockPreconditioner::remember_input(Block& block, const double* values) {
  block.factor_matches_input = false;
  block.factored_from.clear();
  for (const CopyRun& run : block.runs)
    block.factored_from.insert(block.factored_from.end(), values + run.value_source,
                               values + run.value_source + run.count);
  for (const Block::Dropped& entry : block.dropped)
    block.factored_from.push_back(values[entry.value_source]);
}

bool RodBlockPreconditioner::factorize_block(int b, const double* values) {
  Block& block = factors_[b];
  block.factored = false;
  block.factorized_in = -1;  // factorize_compressed marks its own calls
  if (block.size <= 0) return true;
  const int w = block.half_bandwidth;
  // The same input bits make the same factor: keep it.
  if (block.factor_matches_input && same_bits_as_factored(block, values)) {
    block.factored = block.input_factored;
    block.failed_pivot = block.input_failed_pivot;
    return block.factored;
  }
  remember_input(block, values);
  block.failed_pivot = -1;
  block.band.resize(band_length(block.size, w));
  double* band = block.band.data();
  // The block's lower triangle into band storage; with `compensated`, the magnitudes of the
  // entries left out of the band added to the diagonals they join.
  auto fill = [&](bool compensated) {
    for (int gap : block.band_gaps) band[gap] = 0.0;
    for (const CopyRun& run : block.runs) {
      const double* from = values + run.value_source;
      double* to = band + run.band_target;
      for (int r = 0; r < run.count; ++r) to[static_cast<std::ptrdiff_t>(r) * w] = from[r];
    }
    if (!compensated) return;
    for (const Block::Dropped& entry : block.dropped) {
      const double magnitude = std::abs(values[entry.value_source]);
      band[band_index(entry.row, entry.row, w)] += magnitude;
      band[band_index(entry.column, entry.column, w)] += magnitude;
    }
  };
  fill(false);
  block.failed_pivot = banded_cholesky(band, block.size, w, block.column_counts.data());
  block.factored = block.failed_pivot < 0;
  // Left out of the band, part of a stiff pair's entries can leave it indefinite: then the
  // band with their magnitudes on its diagonal, positive definite whenever the block is
  // (diag(|E|) - E is diagonally dominant). Not always: it is a looser preconditioner.
  if (!block.factored && !block.dropped.empty()) {
    fill(true);
    block.failed_pivot = banded_cholesky(band, block.size, w, block.column_counts.data());
    block.factored = block.failed_pivot < 0;
  }
  block.factor_matches_input = true;
  block.input_factored = block.factored;
  block.input_failed_pivot = block.failed_pivot;
  return block.factored;
}

bool RodBlockPreconditioner::solve_block_in_place(int b, const BandView& lower, double* x, bool keep_factor,
                                                  bool keep_lower) {
  Block& block = factors_[b];
  block.factored = false;
  block.factor_matches_input = false;  // band is overwritten below, or its factor is not this solve's
  if (block.size <= 0) return true;
  if (lower.values == nullptr || lower.size != block.size || lower.half_bandwidth != block.half_bandwidth) return false;
  const std::size_t length = band_length(block.size, block.half_bandwidth);
  // Factored where the factor is kept (copied there first), or in place and then copied: the
  // same arithmetic, so the same bits, either way.
  double* factor = lower.values;
  if (keep_factor && keep_lower) {
    block.band.resize(length);
    std::copy(lower.values, lower.values + length, block.band.begin());
    factor = block.band.data();
  }
  // The forward substitution runs inside the factorisation (banded_cholesky).
  block.failed_pivot = banded_cholesky(factor, block.size, block.half_bandwidth, block.column_counts.data(), x);
  if (block.failed_pivot >= 0) return false;
  banded_solve(factor, block.size, block.half_bandwidth, x, true);
  if (keep_factor && !keep_lower) {
    block.band.resize(length);
    std::copy(lower.values, lower.values + length, block.band.begin());
  }
  block.factored = true;
  return true;
}

bool RodBlockPreconditioner::solve_blocks(const SparseMatrix& m, const std::vector<int>& blocks, const VecX& rhs,
                                          VecX& x) {
  pivots_reported_ = false;
  if (!group_blocks_.empty()) return false;
  const int n = static_cast<int>(m.cols());
  const int* outer = m.outerIndexPtr();
  const int* inner = m.innerIndexPtr();
  if (!m.isCompressed() || rhs.size() != n || x.size() != n) return false;
  if (outer != analyzed_outer_ || inner != analyzed_inner_ || n != analyzed_n_ || outer[n] != analyzed_nonzeros_)
    analyze_compressed(n, outer, inner);
  // DOFs no block solves, or entries that couple blocks (the caller's promise broken): not exact.
  if (!outside_blocks_.empty() || entries_between_blocks_) return false;
  // From here a failure is a listed block's own: its pivot's, or entries left out of its band
  // (no pivot to report).
  for (const int b : blocks) factors_[b].failed_pivot = -1;
  pivots_reported_ = true;
  // The kept factors are now those of other values: the next factorize() compares bits.
  solved_in_place_ = false;
  factors_kept_ = false;
  const double* values = m.valuePtr();
  const int count = static_cast<int>(blocks.size());
  // A few short blocks cost less than waking another thread.
  constexpr int kParallelDofs = 4096;
  int dofs = 0;
  for (const int b : blocks) dofs += std::max(0, factors_[b].size);
  bool exact = true;
#pragma omp parallel for schedule(dynamic, 8) num_threads(threads_) if (threads_ > 1 && count > 1 && dofs >= kParallelDofs) reduction(&& : exact)
  for (int k = 0; k < count; ++k) {
    const int b = blocks[k];
    Block& block = factors_[b];
    if (block.size <= 0) continue;
    if (!block.dropped.empty() || !factorize_block(b, values)) {
      exact = false;
      continue;
    }
    double* segment = x.data() + block.begin;
    std::copy(rhs.data() + block.begin, rhs.data() + block.begin + block.size, segment);
    banded_solve(block.band.data(), block.size, block.half_bandwidth, segment);
  }
  return exact;
}

void RodBlockPreconditioner::declare_blocks_solved(const double* values, bool factors_kept) {
  ++applications_;
  if (factors_kept) {
    // The factors are in place (the same bits factorize() would form): ready for solve().
    finish_factorization(values);
    solved_in_place_ = false;
    factors_kept_ = true;
    solved_values_ = values;
    return;
  }
  failed_blocks_ = 0;
  for (int b = 0; b < static_cast<int>(factors_.size()); ++b)
    if (block_active(b) && factors_[b].size > 0 && !factors_[b].factored) ++failed_blocks_;
  // The factors live in the callers' bands, now gone: none is kept until a solve() needs them.
  for (Block& block : factors_) block.factored = false;
  solved_in_place_ = true;
  solved_values_ = values;
  // A solve() before the next factorize() forms them (apply_in_place), never uses none.
  factorization_pending_ = true;
}

void RodBlockPreconditioner::factorize_compressed(int n, const int* outer, const int* inner,
                                                  const double* values) {
  if (outer != analyzed_outer_ || inner != analyzed_inner_ || n != analyzed_n_ || outer[n] != analyzed_nonzeros_)
    analyze_compressed(n, outer, inner);
  const int block_count = static_cast<int>(factors_.size());
  const long call = ++factorize_calls_;
  const std::vector<char> unchanged = std::move(unchanged_blocks_);
  unchanged_blocks_.clear();
  const bool any_unchanged = static_cast<int>(unchanged.size()) == block_count;
#pragma omp parallel for schedule(static) num_threads(threads_) if (threads_ > 1)
  for (int b = 0; b < block_count; ++b) {
    if (!block_active(b)) continue;
    Block& block = factors_[b];
    // The caller vouches for the values, and this block's factor is of the values the last
    // call saw: as when the comparison in factorize_block finds them the same.
    if (any_unchanged && unchanged[b] && block.factor_matches_input && block.factorized_in == call - 1) {
      block.factored = block.input_factored;
      block.failed_pivot = block.input_failed_pivot;
      block.factorized_in = call;
      continue;
    }
    factorize_block(b, values);
    block.factorized_in = call;
  }
  finish_factorization(values);
  if (!group_blocks_.empty()) factorize_groups(n, outer, inner, values);
}

void RodBlockPreconditioner::factorize_groups(int n, const int* outer, const int* inner, const double* values) {
  // With the pattern the groups were built on, only their values are copied and factored
  // again (the symbolic analysis, AMD ordering included, is kept); otherwise all is built anew,
  // except what a group just like one of the last ones can take from it. The contact solver's
  // passes each filter the system into new arrays, and each Newton iteration sets the groups
  // again: mostly the same rows with the same pattern, and in a partial iteration's later
  // passes the same values (the tilted 1000-bristle brush: 564 rebuilds and 3000 numeric
  // factorisations were 7% of its step).
  const bool same_pattern = !groups_.empty() && group_outer_ == outer && group_inner_ == inner && group_n_ == n &&
                            group_nonzeros_ == outer[n];
  const int group_count = static_cast<int>(group_blocks_.size());
  failed_groups_ = 0;
  if (!same_pattern) {
    std::vector<Group> old = std::move(groups_);
    old.insert(old.end(), std::make_move_iterator(retired_groups_.begin()),
               std::make_move_iterator(retired_groups_.end()));
    retired_groups_.clear();
    groups_.clear();
    groups_.resize(group_count);
    group_outer_ = outer;
    group_inner_ = inner;
    group_n_ = n;
    group_nonzeros_ = outer[n];
    // Each group's lower triangle in its own numbering (its rows in increasing order, so each
    // column's rows stay sorted), with where each value comes from in the matrix.
    std::vector<int> local(n, -1);
    std::vector<int> lower_outer, lower_inner;
    for (int g = 0; g < group_count; ++g) {
      Group& group = groups_[g];
      for (int b : group_blocks_[g])
        for (int i = blocks_[b].first; i < blocks_[b].second; ++i) group.index.push_back(i);
      std::sort(group.index.begin(), group.index.end());
      const int size = static_cast<int>(group.index.size());
      for (int k = 0; k < size; ++k) local[group.index[k]] = k;
      lower_outer.assign(1, 0);
      lower_inner.clear();
      for (int k = 0; k < size; ++k) {
        const int column = group.index[k];
        for (int e = outer[column]; e < outer[column + 1]; ++e)
          if (inner[e] >= column && local[inner[e]] >= 0) {
            lower_inner.push_back(local[inner[e]]);
            group.source.push_back(e);
          }
        lower_outer.push_back(static_cast<int>(lower_inner.size()));
      }
      for (int k = 0; k < size; ++k) local[group.index[k]] = -1;
      // One of the last groups with these rows and this pattern: its matrix, analysis and
      // factor carry over (factored again below unless its values are the same too).
      auto same_rows = [&](const Group& previous) {
        return previous.factor && previous.index == group.index && previous.lower.isCompressed() &&
               previous.lower.nonZeros() == static_cast<Eigen::Index>(lower_inner.size()) &&
               std::equal(lower_outer.begin(), lower_outer.end(), previous.lower.outerIndexPtr()) &&
               std::equal(lower_inner.begin(), lower_inner.end(), previous.lower.innerIndexPtr());
      };
      const auto found = std::find_if(old.begin(), old.end(), same_rows);
      if (found != old.end()) {
        // (Swapped: Eigen's sparse and permutation matrices have no move.)
        group.lower.swap(found->lower);
        group.permuted.swap(found->permuted);
        group.permuted_from.swap(found->permuted_from);
        group.permutation.indices().swap(found->permutation.indices());
        group.inverse_permutation.indices().swap(found->inverse_permutation.indices());
        group.factor.swap(found->factor);
        group.check_rhs.swap(found->check_rhs);
        group.check_solution.swap(found->check_solution);
        group.factored = found->factored;
        group.values_factored = found->values_factored;
        continue;
      }
      group.lower.resize(size, size);
      group.lower.resizeNonZeros(static_cast<Eigen::Index>(lower_inner.size()));
      std::copy(lower_outer.begin(), lower_outer.end(), group.lower.outerIndexPtr());
      std::copy(lower_inner.begin(), lower_inner.end(), group.lower.innerIndexPtr());
      for (std::size_t q = 0; q < group.source.size(); ++q) group.lower.valuePtr()[q] = values[group.source[q]];
      group.values_factored = false;
      ++group_analyses_;  // analysed below, on threads: no factor yet
    }
  }
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads_) if (threads_ > 1 && group_count > 1)
  for (int g = 0; g < group_count; ++g) {
    Group& group = groups_[g];
    if (!group.factor) {
      // A new group's AMD ordering and symbolic analysis: each group's own, so on threads
      // (serial, they were 1.7% of the two-thread 1000-bristle brush's run, the other thread
      // idle).
      analyze_group(group);
    }
    double* target = group.lower.valuePtr();
    // The values its factor was made from: the same factor, and the same test of it.
    bool same_values = group.values_factored;
    for (std::size_t q = 0; q < group.source.size() && same_values; ++q)
      same_values = std::memcmp(&target[q], &values[group.source[q]], sizeof(double)) == 0;
    if (same_values) continue;
#pragma omp atomic
    ++group_factorizations_;
    for (std::size_t q = 0; q < group.source.size(); ++q) target[q] = values[group.source[q]];
    group.values_factored = true;
    double* permuted = group.permuted.valuePtr();
    for (std::size_t e = 0; e < group.permuted_from.size(); ++e) permuted[e] = target[group.permuted_from[e]];
    group.factor->factorize(group.permuted);
    // SimplicialLDLT fails only on an exactly zero pivot: a group whose matrix is not positive
    // definite (a negative pivot) is refused too, as CG needs an SPD preconditioner.
    group.factored = group.factor->info() == Eigen::Success && group.factor->vectorD().allFinite() &&
                     (group.factor->vectorD().array() > 0.0).all();
    // Pivots can be positive and the factor still worthless: a pair pressed at a tiny gap puts
    // barrier entries of 1e10 beside 1e-5 on a group's diagonal (the vertical 4 x 4 brush of the
    // brush benchmark's tests, at t = 0.67 s), and LDL^T without pivoting then loses every
    // digit (a solve of A 1 came back 1.27 away from 1). CG with such a factor diverged
    // (a relative residual of 1e32) where the rods' own banded factors converge. So the factor
    // must give back a known solution, x = 1, to kGroupAccuracy, or the group's rods act alone.
    if (group.factored) {
      group.check_rhs.noalias() = group.lower.selfadjointView<Eigen::Lower>() * VecX::Ones(group.lower.rows());
      group.check_solution = group.solve(group.check_rhs);
      const double error = (group.check_solution.array() - 1.0).abs().maxCoeff();
      group.factored = error <= kGroupAccuracy;
    }
  }
  for (const Group& group : groups_)
    if (!group.factored) ++failed_groups_;
}

void RodBlockPreconditioner::analyze_group(Group& group) {
  // What SimplicialLDLT<SparseMatrix, Lower> (AMD ordering) does in analyzePattern and again in
  // each factorize (Eigen 3.4, SimplicialCholeskyBase::ordering and factorize): the ordering
  // of the whole symmetric matrix, then the upper triangle of the permuted matrix, whose
  // forming (permute_symm_to_symm) was a fifth of the groups' factorisations on the tilted
  // 1000-bristle brush. Here it is formed once, from a copy of lower whose values are their
  // own positions (the permutation only moves values), and the factor without an ordering
  // factors it as given.
  const Eigen::Index size = group.lower.rows();
  {
    SparseMatrix symmetric;
    symmetric = group.lower.selfadjointView<Eigen::Lower>();
    Eigen::AMDOrdering<int> ordering;
    ordering(symmetric, group.inverse_permutation);
  }
  if (group.inverse_permutation.size() > 0)
    group.permutation = group.inverse_permutation.inverse();
  else
    group.permutation.resize(0);
  SparseMatrix positions = group.lower;
  for (Eigen::Index q = 0; q < positions.nonZeros(); ++q) positions.valuePtr()[q] = static_cast<double>(q);
  group.permuted.resize(size, size);
  if (group.permutation.size() > 0)
    group.permuted.selfadjointView<Eigen::Upper>() = positions.selfadjointView<Eigen::Lower>().twistedBy(group.permutation);
  else
    group.permuted.selfadjointView<Eigen::Upper>() = positions.selfadjointView<Eigen::Lower>();
  group.permuted.makeCompressed();
  group.permuted_from.resize(static_cast<std::size_t>(group.permuted.nonZeros()));
  for (Eigen::Index e = 0; e < group.permuted.nonZeros(); ++e)
    group.permuted_from[e] = static_cast<int>(group.permuted.valuePtr()[e]);
  group.factor = std::make_unique<Eigen::SimplicialLDLT<SparseMatrix, Eigen::Upper, Eigen::NaturalOrdering<int>>>();
  group.factor->analyzePattern(group.permuted);
}

void RodBlockPreconditioner::Group::take(Group& other) noexcept {
  index.swap(other.index);
  lower.swap(other.lower);
  source.swap(other.source);
  permuted.swap(other.permuted);
  permuted_from.swap(other.permuted_from);
  permutation.indices().swap(other.permutation.indices());
  inverse_permutation.indices().swap(other.inverse_permutation.indices());
  factor.swap(other.factor);
  check_rhs.swap(other.check_rhs);
  check_solution.swap(other.check_solution);
  std::swap(factored, other.factored);
  std::swap(values_factored, other.values_factored);
}

VecX RodBlockPreconditioner::Group::solve(const VecX& rhs) const {
  // SimplicialLDLT's solve with its ordering: permute, solve, permute back.
  if (permutation.size() == 0) return factor->solve(rhs);
  const VecX permuted_rhs = permutation * rhs;
  const VecX solved = factor->solve(permuted_rhs);
  return inverse_permutation * solved;
}

void RodBlockPreconditioner::finish_factorization(const double* values) {
  failed_blocks_ = 0;
  for (int b = 0; b < static_cast<int>(factors_.size()); ++b)
    if (block_active(b) && factors_[b].size > 0 && !factors_[b].factored) ++failed_blocks_;
  // Jacobi for every DOF outside a factored block: those outside every block (known from the
  // analysis) and those of blocks whose factorisation failed (rare). Usually none.
  // Blocks held out of the solve (set_active_blocks) are neither factored nor applied.
  jacobi_dofs_ = outside_blocks_;
  for (int b = 0; b < static_cast<int>(factors_.size()); ++b) {
    const Block& block = factors_[b];
    if (block_active(b) && !block.factored)
      for (int i = block.begin; i < block.begin + block.size; ++i) jacobi_dofs_.push_back(i);
  }
  jacobi_inverse_.assign(jacobi_dofs_.size(), 1.0);
  for (std::size_t j = 0; j < jacobi_dofs_.size(); ++j) {
    const int index = diagonal_entry(jacobi_dofs_[j]);
    if (index >= 0 && values[index] != 0.0) jacobi_inverse_[j] = 1.0 / values[index];
  }
}

void RodBlockPreconditioner::solve_block(int b, const VecX& rhs, VecX& x) const {
  const Block& block = factors_[b];
  assert(block_exact(b));
  double* segment = x.data() + block.begin;
  std::copy(rhs.data() + block.begin, rhs.data() + block.begin + block.size, segment);
  banded_solve(block.band.data(), block.size, block.half_bandwidth, segment);
}

void RodBlockPreconditioner::apply_in_place(VecX& x) const {
  if (factorization_pending_) {
    // The blocks were solved in place and CG needs the factors after all. solve() is const in
    // Eigen's preconditioner concept; forming the factors here fills a cache and changes no
    // result (the same bits as factorize()).
    auto* self = const_cast<RodBlockPreconditioner*>(this);
    self->factorization_pending_ = false;
    self->factorize_compressed(analyzed_n_, analyzed_outer_, analyzed_inner_, solved_values_);
  }
  ++applications_;
  // The groups' right-hand sides, before the blocks' solves overwrite them.
  const int group_count = static_cast<int>(groups_.size());
  group_rhs_.resize(group_count);
  for (int g = 0; g < group_count; ++g) {
    const Group& group = groups_[g];
    if (!group.factored) continue;
    group_rhs_[g].resize(static_cast<int>(group.index.size()));
    for (std::size_t k = 0; k < group.index.size(); ++k) group_rhs_[g][k] = x[group.index[k]];
  }
  for (std::size_t j = 0; j < jacobi_dofs_.size(); ++j) x[jacobi_dofs_[j]] *= jacobi_inverse_[j];
  // Blocks two by two: a pair of factored blocks of the same shape (the usual case, rods of
  // one length) is solved in one interleaved loop, the same arithmetic per block.
  const int block_count = static_cast<int>(factors_.size());
  const int pairs = (block_count + 1) / 2;
#pragma omp parallel for schedule(static) num_threads(threads_) if (threads_ > 1)
  for (int p = 0; p < pairs; ++p) {
    // An inactive block's entries of x are zero (set_active_blocks) and stay so.
    const Block* first = block_active(2 * p) ? &factors_[2 * p] : nullptr;
    const Block* second = 2 * p + 1 < block_count && block_active(2 * p + 1) ? &factors_[2 * p + 1] : nullptr;
    if (first && second && first->factored && second->factored && first->size == second->size &&
        first->half_bandwidth == second->half_bandwidth) {
      banded_solve_pair(first->band.data(), second->band.data(), first->size, first->half_bandwidth,
                        x.data() + first->begin, x.data() + second->begin);
      continue;
    }
    for (const Block* block : {first, second})
      if (block && block->factored)
        banded_solve(block->band.data(), block->size, block->half_bandwidth, x.data() + block->begin);
  }
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads_) if (threads_ > 1 && group_count > 1)
  for (int g = 0; g < group_count; ++g) {
    const Group& group = groups_[g];
    if (!group.factored) continue;
    const VecX solved = group.solve(group_rhs_[g]);
    for (std::size_t k = 0; k < group.index.size(); ++k) x[group.index[k]] = solved[k];
  }
}

}  // namespace bristle

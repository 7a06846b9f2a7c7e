// Preconditioned conjugate gradient with chunked, ordered sums (conjugate_gradient.hpp).

#include "bristle/integrator/conjugate_gradient.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace bristle {
namespace {

// Below this many entries a pass stays on one thread: waking the other costs more (the same
// chunks and sums either way).
constexpr int kParallelEntries = 16384;

int chunk_count(int n) { return (n + ConjugateGradient::kChunk - 1) / ConjugateGradient::kChunk; }

/// Sum of a[i] b[i] over [begin, end), in four interleaved partial sums added at the end: a
/// fixed order (no reassociation by the compiler without -ffast-math), and four independent
/// additions per round instead of one chain.
double chunk_dot(const double* a, const double* b, int begin, int end) {
  double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
  int i = begin;
  for (; i + 4 <= end; i += 4) {
    s0 += a[i] * b[i];
    s1 += a[i + 1] * b[i + 1];
    s2 += a[i + 2] * b[i + 2];
    s3 += a[i + 3] * b[i + 3];
  }
  for (; i < end; ++i) s0 += a[i] * b[i];
  return (s0 + s1) + (s2 + s3);
}

/// The parts added in chunk order.
double ordered_sum(const std::vector<double>& parts, int chunks) {
  double sum = 0.0;
  for (int c = 0; c < chunks; ++c) sum += parts[c];
  return sum;
}

/// The chunks of [0, n): kChunk entries each, the last one shorter.
void whole_chunks(int n, std::vector<std::pair<int, int>>& chunks) {
  chunks.clear();
  for (int c = 0; c < chunk_count(n); ++c)
    chunks.emplace_back(c * ConjugateGradient::kChunk, std::min(n, (c + 1) * ConjugateGradient::kChunk));
}

/// pass(c, begin, end) for each chunk c, on `threads` threads where the chunks hold many
/// entries: the chunks are the same for any count, so is what a pass computes per chunk.
template <class Pass>
void for_each_chunk(const std::vector<std::pair<int, int>>& chunks, int entries, int threads, Pass&& pass) {
  const int count = static_cast<int>(chunks.size());
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1 && entries > kParallelEntries)
  for (int c = 0; c < count; ++c) pass(c, chunks[c].first, chunks[c].second);
}

/// The sum over chunks of part(begin, end) (a chunk's pass, returning its part of the sum),
/// added in chunk order: the same bits for any thread count. `parts` is scratch.
template <class Part>
double chunked_sum(const std::vector<std::pair<int, int>>& chunks, int entries, int threads, std::vector<double>& parts,
                   Part&& part) {
  const int count = static_cast<int>(chunks.size());
  parts.resize(count);
  for_each_chunk(chunks, entries, threads, [&](int c, int begin, int end) { parts[c] = part(begin, end); });
  return ordered_sum(parts, count);
}

/// (A p)_i over rows [begin, end) of a symmetric matrix stored by columns (row i is column i)
/// into out[i - begin]. Each entry summed in stored order from zero, as Eigen's row-major
/// product does.
void multiply_rows(const SparseMatrix& m, const double* p, double* out, int begin, int end) {
  const int* outer = m.outerIndexPtr();
  const int* inner = m.innerIndexPtr();
  const int* counts = m.innerNonZeroPtr();  // null when compressed
  const double* values = m.valuePtr();
  for (int i = begin; i < end; ++i) {
    const int first = outer[i];
    const int last = counts != nullptr ? first + counts[i] : outer[i + 1];
    double sum = 0.0;
    for (int k = first; k < last; ++k) sum += values[k] * p[inner[k]];
    out[i - begin] = sum;
  }
}

}  // namespace

double ConjugateGradient::squared_norm(const VecX& v, int threads) {
  std::vector<double> parts;
  std::vector<std::pair<int, int>> chunks;
  whole_chunks(static_cast<int>(v.size()), chunks);
  return chunked_sum(chunks, static_cast<int>(v.size()), threads, parts,
                     [&](int begin, int end) { return chunk_dot(v.data(), v.data(), begin, end); });
}

int ConjugateGradient::make_chunks(int n, std::vector<std::pair<int, int>>& chunks) const {
  if (!has_active_ranges_) {
    whole_chunks(n, chunks);
    return n;
  }
  chunks.clear();
  int entries = 0;
  for (const auto& [begin, end] : active_ranges_) {
    for (int start = begin; start < end; start += kChunk) chunks.emplace_back(start, std::min(end, start + kChunk));
    entries += end - begin;
  }
  return entries;
}

void ConjugateGradient::set_active_ranges(std::vector<std::pair<int, int>> ranges) {
  // Adjacent ranges merged: the chunks of one range of every row are those of the whole.
  active_ranges_.clear();
  for (const auto& range : ranges) {
    if (range.second <= range.first) continue;
    if (!active_ranges_.empty() && active_ranges_.back().second == range.first)
      active_ranges_.back().second = range.second;
    else
      active_ranges_.push_back(range);
  }
  has_active_ranges_ = true;
}

void ConjugateGradient::clear_active_ranges() {
  active_ranges_.clear();
  has_active_ranges_ = false;
}

void ConjugateGradient::compute(const SparseMatrix& m) {
  matrix_ = &m;
  // Not compute(): the integrator's matrices keep their pattern in their arrays, or have it
  // analysed when it changes (ImplicitEuler::assemble), and the preconditioner recognises it by
  // them (RodBlockPreconditioner::factorize).
  preconditioner_.factorize(m);
}

double ConjugateGradient::residual_norm(const SparseMatrix& m, const VecX& b, const VecX& x) const {
  if (b.size() != m.rows() || x.size() != m.cols() || m.rows() != m.cols())
    throw std::invalid_argument("ConjugateGradient: residual_norm needs a square matrix, and b and x of its size");
  std::vector<double> parts;
  std::vector<std::pair<int, int>> chunks;
  const int entries = make_chunks(static_cast<int>(b.size()), chunks);
  return std::sqrt(chunked_sum(chunks, entries, threads_, parts, [&](int begin, int end) {
    double product[kChunk];
    multiply_rows(m, x.data(), product, begin, end);
    double s0 = 0.0;
    for (int i = begin; i < end; ++i) {
      const double r = b[i] - product[i - begin];
      s0 += r * r;
    }
    return s0;
  }));
}

VecX ConjugateGradient::solve_with_guess(const VecX& b, const VecX& guess) {
  if (matrix_ == nullptr || b.size() != matrix_->cols() || guess.size() != b.size() || matrix_->rows() != matrix_->cols())
    throw std::invalid_argument("ConjugateGradient: solve_with_guess needs compute() with a square matrix, and b and the guess of its size");
  const SparseMatrix& m = *matrix_;
  const int n = static_cast<int>(b.size());
  // Eigen's default for a negative count: twice the unknowns.
  const int max_iterations = max_iterations_ >= 0 ? max_iterations_ : 2 * n;
  const int threads = threads_;
  VecX x = guess;
  VecX& r = residual_;
  VecX& p = direction_;
  VecX& z = preconditioned_;
  VecX& q = product_;
  r.resize(n);
  p.resize(n);
  z.resize(n);
  q.resize(n);
  if (has_active_ranges_) {
    // The rows outside the ranges are never written: zero, so that no stale entry of an
    // earlier solve reaches the preconditioner or a product.
    p.setZero();
    z.setZero();
  }

  // The rows the iteration works on: all, or the active ranges (set_active_ranges), where
  // the other rows' entries of b and the guess are zero and stay so.
  const int entries = make_chunks(n, chunks_);
  const auto& chunks = chunks_;
  const int chunk_total = static_cast<int>(chunks.size());
  // r = b - A x, with |b|^2 and |r|^2.
  std::vector<double> b_parts(chunk_total);
  partial_.resize(chunk_total);
  for_each_chunk(chunks, entries, threads, [&](int c, int begin, int end) {
    multiply_rows(m, x.data(), q.data() + begin, begin, end);
    for (int i = begin; i < end; ++i) r[i] = b[i] - q[i];
    b_parts[c] = chunk_dot(b.data(), b.data(), begin, end);
    partial_[c] = chunk_dot(r.data(), r.data(), begin, end);
  });
  const double r_start2 = ordered_sum(partial_, chunk_total);
  const double own_b_norm2 = ordered_sum(b_parts, chunk_total);
  iterations_ = 0;
  if (own_b_norm2 == 0.0) {
    x.setZero();
    error_ = 0.0;
    info_ = Eigen::Success;
    return x;
  }
  // The test's |b|: the caller's whole right-hand side where it solves part of it here.
  const double b_norm2 = reference_b_norm2_ > 0.0 ? reference_b_norm2_ : own_b_norm2;
  const double threshold =
      std::max(tolerance_ * tolerance_ * b_norm2, std::numeric_limits<double>::min());
  double r_norm2 = r_start2;
  if (r_norm2 < threshold) {
    error_ = std::sqrt(r_norm2 / b_norm2);
    info_ = error_ <= tolerance_ ? Eigen::Success : Eigen::NoConvergence;
    return x;
  }
  for_each_chunk(chunks, entries, threads, [&](int, int begin, int end) {
    for (int k = begin; k < end; ++k) p[k] = r[k];
  });
  preconditioner_.solve_in_place(p);
  double rz = chunked_sum(chunks, entries, threads, partial_, [&](int begin, int end) { return chunk_dot(r.data(), p.data(), begin, end); });
  int i = 0;
  while (i < max_iterations) {
    // q = A p with p^T q.
    const double curvature = chunked_sum(chunks, entries, threads, partial_, [&](int begin, int end) {
      multiply_rows(m, p.data(), q.data() + begin, begin, end);
      return chunk_dot(p.data(), q.data(), begin, end);
    });
    const double alpha = rz / curvature;
    // x += alpha p, r -= alpha q, with |r|^2; z = r for the preconditioner.
    r_norm2 = chunked_sum(chunks, entries, threads, partial_, [&](int begin, int end) {
      for (int k = begin; k < end; ++k) {
        x[k] += alpha * p[k];
        r[k] -= alpha * q[k];
        z[k] = r[k];
      }
      return chunk_dot(r.data(), r.data(), begin, end);
    });
    if (r_norm2 < threshold) break;
    // A breakdown (a zero or non-finite curvature p^T A p) leaves a NaN that no iteration
    // removes (an infinite |r|^2 can still fall: it goes on, as Eigen's does).
    if (std::isnan(r_norm2)) break;
    preconditioner_.solve_in_place(z);
    const double rz_old = rz;
    rz = chunked_sum(chunks, entries, threads, partial_, [&](int begin, int end) { return chunk_dot(r.data(), z.data(), begin, end); });
    const double beta = rz / rz_old;
    for_each_chunk(chunks, entries, threads, [&](int, int begin, int end) {
      for (int k = begin; k < end; ++k) p[k] = z[k] + beta * p[k];
    });
    ++i;
  }
  iterations_ = i;
  error_ = std::sqrt(r_norm2 / b_norm2);
  info_ = error_ <= tolerance_ ? Eigen::Success : Eigen::NoConvergence;
  return x;
}

}  // namespace bristle

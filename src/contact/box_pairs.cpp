// Broad phase over axis-aligned boxes on a uniform grid (contact/box_pairs.hpp).

#include "bristle/contact/box_pairs.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "bristle/contact/uniform_grid.hpp"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace bristle {
namespace {

constexpr std::int64_t kMaxCellsPerBox = 64;

/// Groups (cell key, box) entries listed box by box into runs of one key each, a run's boxes
/// in increasing order (as a sort by (key, box) would give them; the runs' order is another):
/// a counting sort on a hash of the key (one pass to count, one to place, in entry order) and
/// a sort only of the rare buckets two cells share. Sorting every entry by comparison was a
/// tenth of a pressed brush's step.
void sort_by_cell(std::vector<std::pair<std::uint64_t, int>>& entries) {
  const std::size_t m = entries.size();
  if (m < 64) {
    std::sort(entries.begin(), entries.end());
    return;
  }
  int bits = 1;
  while ((std::size_t{1} << bits) < m / 4) ++bits;
  const std::size_t buckets = std::size_t{1} << bits;
  auto bucket = [bits](std::uint64_t key) {
    return static_cast<std::size_t>((key * 0x9E3779B97F4A7C15ull) >> (64 - bits));  // Fibonacci hashing
  };
  std::vector<std::size_t> start(buckets + 1, 0);
  for (const auto& entry : entries) ++start[bucket(entry.first) + 1];
  for (std::size_t b = 0; b < buckets; ++b) start[b + 1] += start[b];
  std::vector<std::pair<std::uint64_t, int>> placed(m);
  std::vector<std::size_t> next(start.begin(), start.end() - 1);
  for (const auto& entry : entries) placed[next[bucket(entry.first)]++] = entry;
  for (std::size_t b = 0; b < buckets; ++b) {
    const auto first = placed.begin() + static_cast<std::ptrdiff_t>(start[b]);
    const auto last = placed.begin() + static_cast<std::ptrdiff_t>(start[b + 1]);
    // Entries were listed box by box, so a bucket of one cell is in box order already.
    const bool one_cell =
        std::all_of(first, last, [&](const std::pair<std::uint64_t, int>& e) { return e.first == first->first; });
    if (!one_cell) std::sort(first, last);
  }
  entries.swap(placed);
}

/// Sorts distinct pairs: contiguous parts sorted on threads, then merged. The sorted list of
/// distinct elements is unique, so the result does not depend on the thread count.
void sort_pairs(std::vector<std::pair<int, int>>& pairs, int threads) {
  const int parts = threads > 1 && pairs.size() > 16384 ? threads : 1;
  if (parts == 1) {
    std::sort(pairs.begin(), pairs.end());
    return;
  }
  std::vector<std::ptrdiff_t> bounds(parts + 1);
  for (int k = 0; k <= parts; ++k)
    bounds[k] = static_cast<std::ptrdiff_t>(pairs.size() * static_cast<std::size_t>(k) / parts);
#pragma omp parallel for schedule(static, 1) num_threads(parts)
  for (int k = 0; k < parts; ++k) std::sort(pairs.begin() + bounds[k], pairs.begin() + bounds[k + 1]);
  for (int width = 1; width < parts; width *= 2)
    for (int k = 0; k + width < parts; k += 2 * width)
      std::inplace_merge(pairs.begin() + bounds[k], pairs.begin() + bounds[k + width],
                         pairs.begin() + bounds[std::min(k + 2 * width, parts)]);
}

}  // namespace

std::vector<std::pair<int, int>> overlapping_box_pairs(const std::vector<AxisBox>& boxes,
                                                       const std::function<bool(int, int)>& skip, int threads) {
  threads = std::max(threads, 1);
  std::vector<std::pair<int, int>> pairs;
  const int n = static_cast<int>(boxes.size());
  if (n < 2) return pairs;
  auto kept = [&](int i, int j) { return boxes_overlap(boxes[i], boxes[j]) && !(skip && skip(i, j)); };

  UniformGrid grid;
  Vec3 lo = boxes.front().lo, hi = boxes.front().hi;
  double sides = 0.0;
  for (const AxisBox& b : boxes) {
    lo = lo.cwiseMin(b.lo);
    hi = hi.cwiseMax(b.hi);
    sides += (b.hi - b.lo).maxCoeff();
  }
  grid.origin = lo;
  const double size = std::max(sides / n, (hi - lo).maxCoeff() / (UniformGrid::kMaxCell - 1));
  grid.size = size > 0.0 && std::isfinite(size) ? size : 1.0;

  std::vector<std::pair<std::uint64_t, int>> entries;
  std::vector<int> large;
  for (int i = 0; i < n; ++i) {
    const UniformGrid::Cell a = grid.cell(boxes[i].lo), b = grid.cell(boxes[i].hi);
    std::int64_t cells = 1;
    for (int k = 0; k < 3; ++k) cells *= std::min(b[k] - a[k] + 1, kMaxCellsPerBox + 1);
    if (cells > kMaxCellsPerBox) {
      large.push_back(i);
      continue;
    }
    for (std::int64_t x = a[0]; x <= b[0]; ++x)
      for (std::int64_t y = a[1]; y <= b[1]; ++y)
        for (std::int64_t z = a[2]; z <= b[2]; ++z) entries.emplace_back(UniformGrid::key({x, y, z}), i);
  }
  sort_by_cell(entries);
  std::vector<std::size_t> runs;  // starts of runs of one cell, and the end
  for (std::size_t k = 0; k < entries.size(); ++k)
    if (k == 0 || entries[k].first != entries[k - 1].first) runs.push_back(k);
  runs.push_back(entries.size());
  const int run_count = static_cast<int>(runs.size()) - 1;
  // Cells on threads, each pair found in one cell only (the cell of the intersection's lower
  // corner), the pairs sorted at the end: the same list for any thread count.
  std::vector<std::vector<std::pair<int, int>>> found(threads);
#pragma omp parallel for schedule(dynamic, 64) num_threads(threads) if (threads > 1 && run_count > 256)
  for (int r = 0; r < run_count; ++r) {
#ifdef _OPENMP
    std::vector<std::pair<int, int>>& out = found[omp_get_thread_num()];
#else
    std::vector<std::pair<int, int>>& out = found[0];
#endif
    for (std::size_t a = runs[r]; a < runs[r + 1]; ++a)
      for (std::size_t b = a + 1; b < runs[r + 1]; ++b) {
        int i = entries[a].second, j = entries[b].second;
        if (j < i) std::swap(i, j);
        if (!boxes_overlap(boxes[i], boxes[j])) continue;
        if (UniformGrid::key(grid.cell(boxes[i].lo.cwiseMax(boxes[j].lo))) != entries[runs[r]].first) continue;
        if (skip && skip(i, j)) continue;
        out.emplace_back(i, j);
      }
  }
  for (auto& part : found) pairs.insert(pairs.end(), part.begin(), part.end());
  std::vector<char> is_large(n, 0);
  for (const int i : large) is_large[i] = 1;
  for (const int i : large)
    for (int j = 0; j < n; ++j) {
      if (j == i || (is_large[j] && j < i)) continue;
      const int a = std::min(i, j), b = std::max(i, j);
      if (kept(a, b)) pairs.emplace_back(a, b);
    }
  sort_pairs(pairs, threads);
  return pairs;
}

const std::vector<std::pair<int, int>>& BoxPairList::pairs(const std::vector<AxisBox>& boxes,
                                                           const std::function<double(int)>& margin,
                                                           const std::function<bool(int, int)>& skip, int threads) {
  threads = std::max(threads, 1);
  const int n = static_cast<int>(boxes.size());
  bool inside = listed_valid_ && static_cast<int>(grown_.size()) == n;
  if (inside) {
    int outside = 0;
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1 && n > 4096) reduction(+ : outside)
    for (int i = 0; i < n; ++i)
      if (!((grown_[i].lo.array() <= boxes[i].lo.array()).all() && (boxes[i].hi.array() <= grown_[i].hi.array()).all()))
        ++outside;
    inside = outside == 0;
  }
  if (!inside) {
    grown_.resize(n);
    for (int i = 0; i < n; ++i) {
      const Vec3 grow = Vec3::Constant(std::max(margin(i), 0.0));
      grown_[i].lo = boxes[i].lo - grow;
      grown_[i].hi = boxes[i].hi + grow;
    }
    listed_ = overlapping_box_pairs(grown_, skip, threads);
    listed_valid_ = true;
    ++rebuilds_;
  }
  // Blocks of the list filtered on threads and joined in block order: the same list for any
  // thread count.
  constexpr int kBlock = 4096;
  const int listed = static_cast<int>(listed_.size());
  const int blocks = (listed + kBlock - 1) / kBlock;
  block_found_.resize(std::max(blocks, 1));
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1 && blocks > 1)
  for (int b = 0; b < blocks; ++b) {
    std::vector<std::pair<int, int>>& out = block_found_[b];
    out.clear();
    for (int k = b * kBlock; k < std::min(listed, (b + 1) * kBlock); ++k) {
      const auto [i, j] = listed_[k];
      if (boxes_overlap(boxes[i], boxes[j])) out.emplace_back(i, j);
    }
  }
  found_.clear();
  for (int b = 0; b < blocks; ++b) found_.insert(found_.end(), block_found_[b].begin(), block_found_[b].end());
  return found_;
}

}  // namespace bristle

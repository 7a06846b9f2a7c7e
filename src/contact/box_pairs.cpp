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

/// Sorts distinct pairs (i, j), i < j < n: a counting sort on i (one pass to count, one to
/// place), then each i's few partners sorted. The sorted list of distinct pairs is unique, so
/// the result does not depend on the order they were found in, nor on the thread count. A
/// comparison sort of the whole list was a fifth of the list's rebuild on a pressed brush.
void sort_pairs(std::vector<std::pair<int, int>>& pairs, int n) {
  std::vector<int> start(static_cast<std::size_t>(n) + 1, 0);
  for (const auto& [i, j] : pairs) ++start[i + 1];
  for (int i = 0; i < n; ++i) start[i + 1] += start[i];
  std::vector<int> partners(pairs.size());
  std::vector<int> next(start.begin(), start.end() - 1);
  for (const auto& [i, j] : pairs) partners[next[i]++] = j;
  std::size_t k = 0;
  for (int i = 0; i < n; ++i) {
    const auto first = partners.begin() + start[i], last = partners.begin() + start[i + 1];
    std::sort(first, last);
    for (auto it = first; it != last; ++it) pairs[k++] = {i, *it};
  }
}

/// One (cell, box) entry with what the pair test reads, gathered in cell order so that a
/// cell's boxes are read one after another.
struct CellEntry {
  AxisBox box;
  std::uint64_t lo_cell;  // UniformGrid::key of the cell of box.lo
  int index;
};

/// The cell of the lower corner of two boxes' intersection, from the cells of their lower
/// corners: UniformGrid::cell is monotone per axis, so the cell of the larger coordinate is
/// the larger cell.
inline std::uint64_t max_cell(std::uint64_t a, std::uint64_t b) {
  constexpr std::uint64_t kAxis = static_cast<std::uint64_t>(UniformGrid::kMaxCell);
  std::uint64_t key = 0;
  for (const int shift : {42, 21, 0}) key |= std::max((a >> shift) & kAxis, (b >> shift) & kAxis) << shift;
  return key;
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
  std::vector<std::uint64_t> lo_cells(n);
  std::vector<int> large;
  for (int i = 0; i < n; ++i) {
    const UniformGrid::Cell a = grid.cell(boxes[i].lo), b = grid.cell(boxes[i].hi);
    lo_cells[i] = UniformGrid::key(a);
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
  const std::ptrdiff_t entry_count = static_cast<std::ptrdiff_t>(entries.size());
  std::vector<CellEntry> gathered(entries.size());
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1 && entry_count > 16384)
  for (std::ptrdiff_t k = 0; k < entry_count; ++k) {
    const int i = entries[k].second;
    gathered[k] = {boxes[i], lo_cells[i], i};
  }
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
    const std::uint64_t cell = entries[runs[r]].first;
    for (std::size_t a = runs[r]; a < runs[r + 1]; ++a) {
      const CellEntry& p = gathered[a];
      for (std::size_t b = a + 1; b < runs[r + 1]; ++b) {
        const CellEntry& q = gathered[b];
        if (!boxes_overlap(p.box, q.box)) continue;
        if (max_cell(p.lo_cell, q.lo_cell) != cell) continue;
        const int i = std::min(p.index, q.index), j = std::max(p.index, q.index);
        if (skip && skip(i, j)) continue;
        out.emplace_back(i, j);
      }
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
  sort_pairs(pairs, n);
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

// Broad phase over axis-aligned boxes on a uniform grid (contact/box_pairs.hpp).

#include "bristle/contact/box_pairs.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

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
void sort_by_cell(std::vector<std::pair<std::uint64_t, int>>& entries, int threads) {
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
  // Each bucket on its own: the buckets split between threads (the result is the same).
  const std::ptrdiff_t bucket_count = static_cast<std::ptrdiff_t>(buckets);
#pragma omp parallel for schedule(dynamic, 1024) num_threads(threads) if (threads > 1 && m > 16384)
  for (std::ptrdiff_t b = 0; b < bucket_count; ++b) {
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
void sort_pairs(std::vector<std::pair<int, int>>& pairs, int n, int threads) {
  std::vector<int> start(static_cast<std::size_t>(n) + 1, 0);
  for (const auto& [i, j] : pairs) ++start[i + 1];
  for (int i = 0; i < n; ++i) start[i + 1] += start[i];
  std::vector<int> partners(pairs.size());
  std::vector<int> next(start.begin(), start.end() - 1);
  for (const auto& [i, j] : pairs) partners[next[i]++] = j;
  // Each i's partners sorted and written at its own place: the i split between threads.
#pragma omp parallel for schedule(dynamic, 512) num_threads(threads) if (threads > 1 && pairs.size() > 16384)
  for (int i = 0; i < n; ++i) {
    const auto first = partners.begin() + start[i], last = partners.begin() + start[i + 1];
    std::sort(first, last);
    std::size_t k = static_cast<std::size_t>(start[i]);
    for (auto it = first; it != last; ++it) pairs[k++] = {i, *it};
  }
}

/// The (cell, box) entries in cell order, with what the pair test reads, a column per
/// coordinate: a cell's boxes are read one after another, and the test of one box against the
/// rest of its cell is a branch-free loop over contiguous columns.
struct CellEntries {
  std::vector<double> lo[3], hi[3];
  std::vector<std::uint64_t> lo_cell;  // UniformGrid::key of the cell of the box's lo
  std::vector<int> index;
  void resize(std::size_t m) {
    for (int k = 0; k < 3; ++k) {
      lo[k].resize(m);
      hi[k].resize(m);
    }
    lo_cell.resize(m);
    index.resize(m);
  }
};

/// boxes_overlap without branches: the same comparisons, combined with & (false with a NaN, as
/// there), so that a loop of them vectorises and an unpredictable outcome costs no mispredict.
inline bool overlap_bits(double alx, double aly, double alz, double ahx, double ahy, double ahz, double blx, double bly,
                         double blz, double bhx, double bhy, double bhz) {
  return (alx <= bhx) & (aly <= bhy) & (alz <= bhz) & (blx <= ahx) & (bly <= ahy) & (blz <= ahz);
}

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

  const UniformGrid grid = UniformGrid::over(boxes);

  // Each box's (cell, box) entries, box by box: the cells counted on threads, placed after a
  // prefix sum, each box's at its own place (the list one thread's loop would make).
  std::vector<std::uint64_t> lo_cells(n);
  std::vector<std::int64_t> entry_start(static_cast<std::size_t>(n) + 1, 0);
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1 && n > 4096)
  for (int i = 0; i < n; ++i) {
    const UniformGrid::Cell a = grid.cell(boxes[i].lo), b = grid.cell(boxes[i].hi);
    lo_cells[i] = UniformGrid::key(a);
    std::int64_t cells = 1;
    for (int k = 0; k < 3; ++k) cells *= std::clamp<std::int64_t>(b[k] - a[k] + 1, 0, kMaxCellsPerBox + 1);
    entry_start[i + 1] = cells > kMaxCellsPerBox ? -1 : cells;  // -1: a large box
  }
  std::vector<int> large;
  for (int i = 0; i < n; ++i) {
    if (entry_start[i + 1] < 0) {
      large.push_back(i);
      entry_start[i + 1] = 0;
    }
    entry_start[i + 1] += entry_start[i];
  }
  std::vector<std::pair<std::uint64_t, int>> entries(static_cast<std::size_t>(entry_start[n]));
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1 && n > 4096)
  for (int i = 0; i < n; ++i) {
    if (entry_start[i + 1] == entry_start[i]) continue;
    const UniformGrid::Cell a = grid.cell(boxes[i].lo), b = grid.cell(boxes[i].hi);
    std::size_t k = static_cast<std::size_t>(entry_start[i]);
    for (std::int64_t x = a[0]; x <= b[0]; ++x)
      for (std::int64_t y = a[1]; y <= b[1]; ++y)
        for (std::int64_t z = a[2]; z <= b[2]; ++z) entries[k++] = {UniformGrid::key({x, y, z}), i};
  }
  sort_by_cell(entries, threads);
  std::vector<std::size_t> runs;  // starts of runs of one cell, and the end
  for (std::size_t k = 0; k < entries.size(); ++k)
    if (k == 0 || entries[k].first != entries[k - 1].first) runs.push_back(k);
  runs.push_back(entries.size());
  const int run_count = static_cast<int>(runs.size()) - 1;
  const std::ptrdiff_t entry_count = static_cast<std::ptrdiff_t>(entries.size());
  CellEntries gathered;
  gathered.resize(entries.size());
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1 && entry_count > 16384)
  for (std::ptrdiff_t k = 0; k < entry_count; ++k) {
    const int i = entries[k].second;
    for (int c = 0; c < 3; ++c) {
      gathered.lo[c][k] = boxes[i].lo[c];
      gathered.hi[c][k] = boxes[i].hi[c];
    }
    gathered.lo_cell[k] = lo_cells[i];
    gathered.index[k] = i;
  }
  // Cells on threads, each pair found in one cell only (the cell of the intersection's lower
  // corner), the pairs sorted at the end: the same list for any thread count.
  std::vector<std::vector<std::pair<int, int>>> found(threads);
  const double* lx = gathered.lo[0].data();
  const double* ly = gathered.lo[1].data();
  const double* lz = gathered.lo[2].data();
  const double* hx = gathered.hi[0].data();
  const double* hy = gathered.hi[1].data();
  const double* hz = gathered.hi[2].data();
#pragma omp parallel num_threads(threads) if (threads > 1 && run_count > 256)
  {
#ifdef _OPENMP
    std::vector<std::pair<int, int>>& out = found[omp_get_thread_num()];
#else
    std::vector<std::pair<int, int>>& out = found[0];
#endif
    std::vector<int> hits;
#pragma omp for schedule(dynamic, 64)
    for (int r = 0; r < run_count; ++r) {
      const std::uint64_t cell = entries[runs[r]].first;
      const int first = static_cast<int>(runs[r]), last = static_cast<int>(runs[r + 1]);
      if (static_cast<int>(hits.size()) < last - first) hits.resize(last - first);
      for (int a = first; a < last; ++a) {
        // The boxes after a in the cell that overlap it, listed without branches; then the
        // few of them checked for the cell and the exclusion.
        int hit_count = 0;
        for (int b = a + 1; b < last; ++b) {
          hits[hit_count] = b;
          hit_count += overlap_bits(lx[a], ly[a], lz[a], hx[a], hy[a], hz[a], lx[b], ly[b], lz[b], hx[b], hy[b], hz[b]);
        }
        for (int h = 0; h < hit_count; ++h) {
          const int b = hits[h];
          if (max_cell(gathered.lo_cell[a], gathered.lo_cell[b]) != cell) continue;
          const int i = std::min(gathered.index[a], gathered.index[b]), j = std::max(gathered.index[a], gathered.index[b]);
          if (skip && skip(i, j)) continue;
          out.emplace_back(i, j);
        }
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
  sort_pairs(pairs, n, threads);
  return pairs;
}

void overlapping_listed_pairs(const std::vector<std::pair<int, int>>& listed, const std::vector<AxisBox>& boxes,
                              std::vector<std::pair<int, int>>& found,
                              std::vector<std::vector<std::pair<int, int>>>& block_found, int threads) {
  // Blocks of the list filtered on threads and joined in block order: the same list for any
  // thread count.
  constexpr int kBlock = 4096;
  const int count = static_cast<int>(listed.size());
  const int blocks = (count + kBlock - 1) / kBlock;
  if (static_cast<int>(block_found.size()) < blocks) block_found.resize(blocks);
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1 && blocks > 1)
  for (int b = 0; b < blocks; ++b) {
    std::vector<std::pair<int, int>>& out = block_found[b];
    // Without branches: about a third of a pressed brush's listed pairs overlap, and which
    // ones is no pattern a branch predictor learns.
    const int first = b * kBlock, last = std::min(count, (b + 1) * kBlock);
    out.resize(last - first);
    int kept = 0;
    for (int k = first; k < last; ++k) {
      const auto [i, j] = listed[k];
      const AxisBox& p = boxes[i];
      const AxisBox& q = boxes[j];
      out[kept] = listed[k];
      kept += overlap_bits(p.lo.x(), p.lo.y(), p.lo.z(), p.hi.x(), p.hi.y(), p.hi.z(), q.lo.x(), q.lo.y(), q.lo.z(),
                           q.hi.x(), q.hi.y(), q.hi.z());
    }
    out.resize(kept);
  }
  found.clear();
  for (int b = 0; b < blocks; ++b) found.insert(found.end(), block_found[b].begin(), block_found[b].end());
}

const std::vector<std::pair<int, int>>& BoxPairList::pairs(const std::vector<AxisBox>& boxes,
                                                           const std::function<double(int)>& margin,
                                                           const std::function<bool(int, int)>& skip, int threads,
                                                           const Vec3& shift) {
  threads = std::max(threads, 1);
  keep_list_valid(boxes, margin, skip, threads, shift);
  overlapping_listed_pairs(listed_, boxes, found_, block_found_, threads);
  return found_;
}

const std::vector<std::pair<int, int>>& BoxPairList::pairs_touching(const std::vector<AxisBox>& boxes,
                                                                    const std::vector<char>& moving,
                                                                    const std::function<double(int)>& margin,
                                                                    const std::function<bool(int, int)>& skip,
                                                                    int threads, const Vec3& shift) {
  threads = std::max(threads, 1);
  const int changes = rebuilds_ + regrowths_;
  keep_list_valid(boxes, margin, skip, threads, shift);
  const int n = static_cast<int>(boxes.size());
  if (rebuilds_ + regrowths_ != changes) {
    // The list just changed: one pass over it, in its order (sorted), costs less than the
    // index each box's pairs would need, which the next change would drop again (the tilted
    // 1000-bristle brush's Newton iterations over the moving bristles: a change in every
    // other call, 156,000 pairs listed).
    found_.clear();
    for (const auto& [i, j] : listed_)
      if ((moving[i] || moving[j]) && boxes_overlap(boxes[i], boxes[j])) found_.emplace_back(i, j);
    return found_;
  }
  if (!box_pairs_valid_) {
    box_pairs_start_.assign(n + 1, 0);
    for (const auto& [i, j] : listed_) {
      ++box_pairs_start_[i + 1];
      ++box_pairs_start_[j + 1];
    }
    for (int i = 0; i < n; ++i) box_pairs_start_[i + 1] += box_pairs_start_[i];
    box_pairs_.resize(2 * listed_.size());
    std::vector<int> next(box_pairs_start_.begin(), box_pairs_start_.end() - 1);
    for (int k = 0; k < static_cast<int>(listed_.size()); ++k) {
      box_pairs_[next[listed_[k].first]++] = k;
      box_pairs_[next[listed_[k].second]++] = k;
    }
    box_pairs_valid_ = true;
  }
  // Each listed pair of a marked box, once (a pair of two marked boxes from its first), in the
  // list's order (sorted): the positions gathered, sorted, and read.
  std::vector<int> positions;
  for (int i = 0; i < n; ++i) {
    if (!moving[i]) continue;
    for (int p = box_pairs_start_[i]; p < box_pairs_start_[i + 1]; ++p) {
      const auto [a, b] = listed_[box_pairs_[p]];
      const int other = a == i ? b : a;
      if (moving[other] && other < i) continue;
      positions.push_back(box_pairs_[p]);
    }
  }
  std::sort(positions.begin(), positions.end());
  found_.clear();
  for (const int k : positions) {
    const auto [i, j] = listed_[k];
    if (boxes_overlap(boxes[i], boxes[j])) found_.push_back(listed_[k]);
  }
  return found_;
}

void BoxPairList::keep_list_valid(const std::vector<AxisBox>& boxes, const std::function<double(int)>& margin,
                                  const std::function<bool(int, int)>& skip, int threads, const Vec3& shift) {
  const int n = static_cast<int>(boxes.size());
  auto is_inside = [&](int i) {
    const Vec3 lo = boxes[i].lo - shift, hi = boxes[i].hi - shift;
    return (grown_[i].lo.array() <= lo.array()).all() && (hi.array() <= grown_[i].hi.array()).all();
  };
  auto grow = [&](int i) {
    const Vec3 by = Vec3::Constant(std::max(margin(i), 0.0));
    grown_[i].lo = (boxes[i].lo - shift) - by;
    grown_[i].hi = (boxes[i].hi - shift) + by;
  };
  if (listed_valid_ && static_cast<int>(grown_.size()) == n) {
    int outside = 0;
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1 && n > 4096) reduction(+ : outside)
    for (int i = 0; i < n; ++i) outside += is_inside(i) ? 0 : 1;
    if (outside == 0) return;
    // A few boxes out (a pressed brush's Newton corrections: a median of 7 of 20000, each
    // leaving rebuilt the whole list, a tenth of the benchmark's step): only theirs are grown
    // again and their pairs found anew (regrow_boxes). Each costs a test against every box,
    // the rebuild about 40 such tests per box on that brush (16 ms against 20,000 boxes): up
    // to n / 64 of them, at most 512, the update is the cheaper.
    if (outside <= std::min(std::max(16, n / 64), 512)) {
      regrown_.clear();
      for (int i = 0; i < n; ++i)
        if (!is_inside(i)) {
          regrown_.push_back(i);
          grow(i);
        }
      regrow_boxes(skip, threads);
      ++regrowths_;
      return;
    }
  }
  grown_.resize(n);
  for (int i = 0; i < n; ++i) grow(i);
  listed_ = overlapping_box_pairs(grown_, skip, threads);
  listed_valid_ = true;
  box_pairs_valid_ = false;
  sweep_valid_ = false;
  ++rebuilds_;
}

bool BoxPairList::update_sweep() {
  const int n = static_cast<int>(grown_.size());
  const auto lower = [&](int i) { return grown_[i].lo[sweep_axis_]; };
  const auto before = [&](int a, int b) { return lower(a) < lower(b) || (lower(a) == lower(b) && a < b); };
  if (!sweep_valid_ || static_cast<int>(sweep_order_.size()) != n) {
    // The axis along which the boxes spread furthest for their widths: the fewest boxes in
    // a regrown box's range.
    Vec3 low = Vec3::Constant(std::numeric_limits<double>::infinity()), high = -low, widest = Vec3::Zero();
    for (const AxisBox& box : grown_) {
      if (!box.lo.allFinite() || !box.hi.allFinite()) return false;  // (sweep_valid_ is false)
      low = low.cwiseMin(box.lo);
      high = high.cwiseMax(box.hi);
      widest = widest.cwiseMax(box.hi - box.lo);
    }
    sweep_axis_ = 0;
    for (int d = 1; d < 3; ++d)
      if ((high[d] - low[d]) * widest[sweep_axis_] > (high[sweep_axis_] - low[sweep_axis_]) * widest[d]) sweep_axis_ = d;
    sweep_width_ = widest[sweep_axis_];
    sweep_order_.resize(n);
    for (int i = 0; i < n; ++i) sweep_order_[i] = i;
    std::sort(sweep_order_.begin(), sweep_order_.end(), before);
  } else {
    // The regrown boxes moved: taken out, sorted, and merged back in.
    for (const int i : regrown_) {
      const AxisBox& box = grown_[i];
      if (!box.lo.allFinite() || !box.hi.allFinite()) {
        // The index no longer holds grown_: built again at an update whose grown boxes are
        // all finite (a grown box that stays infinite leaves the updates without it until
        // the next rebuild).
        sweep_valid_ = false;
        return false;
      }
      sweep_width_ = std::max(sweep_width_, box.hi[sweep_axis_] - box.lo[sweep_axis_]);
    }
    std::vector<int> moved = regrown_;
    std::sort(moved.begin(), moved.end(), before);
    std::vector<int> order;
    order.reserve(n);
    auto next = moved.begin();
    for (const int i : sweep_order_) {
      if (regrown_mark_[i]) continue;
      while (next != moved.end() && before(*next, i)) order.push_back(*next++);
      order.push_back(i);
    }
    order.insert(order.end(), next, moved.end());
    sweep_order_.swap(order);
  }
  sweep_lo_.resize(n);
  for (int k = 0; k < n; ++k) sweep_lo_[k] = lower(sweep_order_[k]);
  sweep_valid_ = true;
  return true;
}

void BoxPairList::regrow_boxes(const std::function<bool(int, int)>& skip, int threads) {
  // The list holds every pair not skipped whose grown boxes overlap. The boxes of regrown_
  // have new grown boxes: their pairs are dropped and found again by testing each of them
  // against the boxes it may overlap (a pair of two regrown boxes from the larger index's side
  // only); the other pairs' grown boxes did not change. The list stays sorted (the new pairs sorted and
  // merged in), so pairs() filters it as it would a rebuilt one: the same result.
  const int n = static_cast<int>(grown_.size());
  const int k_count = static_cast<int>(regrown_.size());
  regrown_mark_.assign(n, 0);
  for (const int i : regrown_) regrown_mark_[i] = 1;
  const int parts = std::max(1, std::min(threads, k_count));
  if (static_cast<int>(block_found_.size()) < parts) block_found_.resize(parts);
  auto add_pair = [&](std::vector<std::pair<int, int>>& out, int i, int j) {
    if (i == j || (regrown_mark_[j] && j < i)) return;
    const int lo = std::min(i, j), hi = std::max(i, j);
    if (skip && skip(lo, hi)) return;
    out.emplace_back(lo, hi);
  };
  if (update_sweep()) {
    ++indexed_updates_;
    // Each regrown box against the boxes whose lower bound along the sweep axis lies in
    // [lo - width, hi] (a box starting further below ends below lo: its width is at most
    // sweep_width_; the bound is lowered by a rounding allowance, so that no pair is missed
    // and at most a few more are tested). Regrown boxes on threads, their pairs sorted below:
    // the same list as the test against every box. (On the tilted 1000-bristle brush, 31
    // boxes regrown per update against 21,000: the test against every box was 1.7 ms of it.)
    const int axis = sweep_axis_;
#pragma omp parallel for schedule(static) num_threads(parts) if (parts > 1 && k_count > 16)
    for (int t = 0; t < parts; ++t) {
      std::vector<std::pair<int, int>>& out = block_found_[t];
      out.clear();
      const int per = (k_count + parts - 1) / parts;
      for (int k = t * per; k < std::min(k_count, (t + 1) * per); ++k) {
        const int i = regrown_[k];
        const AxisBox& g = grown_[i];
        double from = g.lo[axis] - sweep_width_;
        from -= 4.0 * std::numeric_limits<double>::epsilon() * (std::abs(g.lo[axis]) + sweep_width_);
        const auto first = std::lower_bound(sweep_lo_.begin(), sweep_lo_.end(), from);
        const auto last = std::upper_bound(first, sweep_lo_.end(), g.hi[axis]);
        for (auto at = first; at != last; ++at) {
          const int j = sweep_order_[at - sweep_lo_.begin()];
          if (boxes_overlap(g, grown_[j])) add_pair(out, i, j);
        }
      }
    }
    found_.clear();
    for (int t = 0; t < parts; ++t)
      found_.insert(found_.end(), block_found_[t].begin(), block_found_[t].end());
  } else {
    regrow_against_all(skip, threads);
  }
  std::sort(found_.begin(), found_.end());
  // The kept pairs (neither box regrown) merged with the new ones.
  merged_.clear();
  merged_.reserve(listed_.size() + found_.size());
  auto next_new = found_.begin();
  for (const auto& pair : listed_) {
    if (regrown_mark_[pair.first] || regrown_mark_[pair.second]) continue;
    while (next_new != found_.end() && *next_new < pair) merged_.push_back(*next_new++);
    merged_.push_back(pair);
  }
  merged_.insert(merged_.end(), next_new, found_.end());
  listed_.swap(merged_);
  box_pairs_valid_ = false;
}

void BoxPairList::regrow_against_all(const std::function<bool(int, int)>& skip, int threads) {
  const int n = static_cast<int>(grown_.size());
  const int k_count = static_cast<int>(regrown_.size());
  // The regrown boxes as columns: each box's test against all of them is a branch-free loop.
  std::vector<double> column[6];
  for (auto& c : column) c.resize(k_count);
  for (int k = 0; k < k_count; ++k) {
    const AxisBox& g = grown_[regrown_[k]];
    for (int d = 0; d < 3; ++d) {
      column[d][k] = g.lo[d];
      column[3 + d][k] = g.hi[d];
    }
  }
  // Blocks of boxes on threads, each block's pairs in its own list, joined in block order
  // (then sorted: the same list for any thread count).
  constexpr int kBlock = 2048;
  const int blocks = (n + kBlock - 1) / kBlock;
  if (static_cast<int>(block_found_.size()) < blocks) block_found_.resize(blocks);
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1 && blocks > 1)
  for (int b = 0; b < blocks; ++b) {
    std::vector<std::pair<int, int>>& out = block_found_[b];
    out.clear();
    std::vector<int> hits(k_count);
    for (int j = b * kBlock; j < std::min(n, (b + 1) * kBlock); ++j) {
      const AxisBox& q = grown_[j];
      int hit_count = 0;
      for (int k = 0; k < k_count; ++k) {
        hits[hit_count] = k;
        hit_count += overlap_bits(column[0][k], column[1][k], column[2][k], column[3][k], column[4][k], column[5][k],
                                  q.lo.x(), q.lo.y(), q.lo.z(), q.hi.x(), q.hi.y(), q.hi.z());
      }
      for (int h = 0; h < hit_count; ++h) {
        const int i = regrown_[hits[h]];
        if (i == j || (regrown_mark_[j] && j < i)) continue;
        const int lo = std::min(i, j), hi = std::max(i, j);
        if (skip && skip(lo, hi)) continue;
        out.emplace_back(lo, hi);
      }
    }
  }
  found_.clear();
  for (int b = 0; b < blocks; ++b) found_.insert(found_.end(), block_found_[b].begin(), block_found_[b].end());
}

}  // namespace bristle

#pragma once
/// How many threads a run uses (docs/limits.md, "Threads"). The scene's `solver.threads` and
/// `bristle run --threads` share one limit, kMaxThreads (scene/limits.hpp); within it:
///
///  - more threads than the machine has hardware threads only make them take turns, so the
///    count is clamped to the hardware threads (the caller says so on stderr);
///  - a small scene is run on one thread: the step has many short parallel regions, and below
///    kMinFreeDofsPerExtraThread free DOFs per extra thread, waking and joining the threads
///    costs more than the work they share (measured, docs/performance.md).
///
/// The frames are bitwise identical whatever the count (each rod and row is computed by one
/// thread), so this changes only the wall time.

#include <string>

namespace bristle {

/// Free DOFs a scene needs per thread beyond the first for that thread to pay for itself.
/// From the interleaved sweep of docs/performance.md (hair strands of 50 vertices, 144 free
/// DOFs each): 2 threads are 0.83 times as fast as 1 at 10 strands (1440 free DOFs) and 1.35
/// times at 100 (14400); the crossover lies near 35 strands, about 5000 free DOFs.
inline constexpr long long kMinFreeDofsPerExtraThread = 5000;

struct ThreadChoice {
  int threads = 1;
  std::string note;  ///< why fewer threads than requested ("" when as requested)
};

/// The threads to use for `requested` (>= 1) with `hardware` hardware threads (0 = unknown)
/// on a model of `free_dofs` free DOFs.
ThreadChoice choose_threads(int requested, int hardware, long long free_dofs);

/// std::thread::hardware_concurrency(), 0 when unknown.
int hardware_threads();

}  // namespace bristle

#include "bristle/runner/thread_count.hpp"

#include <algorithm>
#include <thread>

namespace bristle {

ThreadChoice choose_threads(int requested, int hardware, long long free_dofs) {
  ThreadChoice choice;
  choice.threads = std::max(1, requested);
  if (hardware > 0 && choice.threads > hardware) {
    choice.threads = hardware;
    choice.note = std::to_string(requested) + " threads requested, but this machine has " + std::to_string(hardware) +
                  " hardware threads: using " + std::to_string(hardware);
  }
  // Each extra thread needs its share of work; the smallest count that keeps every thread busy.
  const long long useful = 1 + free_dofs / kMinFreeDofsPerExtraThread;
  if (choice.threads > useful) {
    const int before = choice.threads;
    choice.threads = static_cast<int>(useful);
    if (choice.note.empty()) choice.note = std::to_string(requested) + " threads requested";
    choice.note += "; the scene has " + std::to_string(free_dofs) + " free DOFs, too few to share between " +
                   std::to_string(before) + " threads (at least " + std::to_string(kMinFreeDofsPerExtraThread) +
                   " per extra thread): using " + std::to_string(choice.threads);
  }
  return choice;
}

int hardware_threads() { return static_cast<int>(std::thread::hardware_concurrency()); }

}  // namespace bristle

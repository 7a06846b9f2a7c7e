// bristle run's choice of threads (runner/thread_count.hpp): clamped to the hardware, one
// thread for scenes too small to share.

#include <doctest/doctest.h>

#include "bristle/runner/thread_count.hpp"

using namespace bristle;

TEST_CASE("threads: as requested when the machine has them and the scene is large enough") {
  const ThreadChoice choice = choose_threads(4, 8, 4 * kMinFreeDofsPerExtraThread);
  CHECK(choice.threads == 4);
  CHECK(choice.note.empty());
  CHECK(choose_threads(1, 8, 10).threads == 1);
  CHECK(choose_threads(1, 8, 10).note.empty());
}

TEST_CASE("threads: more than the hardware threads are clamped, with a note") {
  const ThreadChoice choice = choose_threads(20000, 2, 1'000'000);
  CHECK(choice.threads == 2);
  CHECK(choice.note.find("20000 threads requested") != std::string::npos);
  CHECK(choice.note.find("2 hardware threads") != std::string::npos);
  // Unknown hardware (0): only the scene's size decides.
  CHECK(choose_threads(6, 0, 1'000'000).threads == 6);
}

TEST_CASE("threads: a small scene runs on one thread, a mid-size one on as many as it can feed") {
  CHECK(choose_threads(2, 8, kMinFreeDofsPerExtraThread - 1).threads == 1);
  CHECK(choose_threads(2, 8, kMinFreeDofsPerExtraThread).threads == 2);
  const ThreadChoice three = choose_threads(8, 8, 2 * kMinFreeDofsPerExtraThread + 5);
  CHECK(three.threads == 3);
  CHECK(three.note.find("too few to share") != std::string::npos);
}

#include <doctest/doctest.h>

#include "bristle/scene/scene.hpp"

using namespace bristle;

TEST_CASE("scene: TimeSettings counts steps per frame and frames, frame 0 included") {
  TimeSettings time{0.001, 0.01, 2.0};
  CHECK(time.steps_per_frame() == 10);
  CHECK(time.frame_count() == 201);

  // Decimal inputs are not exact in binary; the counts round.
  time = {0.1, 0.3, 0.9};
  CHECK(time.steps_per_frame() == 3);
  CHECK(time.frame_count() == 4);

  time = {0.01, 0.01, 0.004};  // shorter than half a frame: only the initial state
  CHECK(time.frame_count() == 1);
}

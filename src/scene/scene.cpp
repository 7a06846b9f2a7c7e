#include "bristle/scene/scene.hpp"

#include <cmath>

namespace bristle {

// The loader guarantees dt > 0, frame_dt a whole multiple of dt and sane counts, so the
// rounded ratios fit an int.
int TimeSettings::steps_per_frame() const {
  return static_cast<int>(std::llround(frame_dt / dt));
}

int TimeSettings::frame_count() const {
  return static_cast<int>(std::llround(duration / frame_dt)) + 1;
}

}  // namespace bristle

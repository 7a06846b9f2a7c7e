list(APPEND BRISTLE_SOURCES
  src/runner/frame_stats.cpp
  src/runner/run_simulation.cpp
  src/runner/thread_count.cpp)

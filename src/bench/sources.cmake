list(APPEND BRISTLE_SOURCES
  src/bench/strand_benchmark.cpp
  src/bench/brush_benchmark.cpp
  src/bench/performance_report.cpp)

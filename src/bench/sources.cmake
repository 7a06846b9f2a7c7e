list(APPEND BRISTLE_SOURCES
  src/bench/strand_benchmark.cpp)

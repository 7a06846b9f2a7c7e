list(APPEND BRISTLE_TEST_SOURCES
  bench/test_performance_report.cpp
  bench/test_brush_benchmark.cpp)

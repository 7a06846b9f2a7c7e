list(APPEND BRISTLE_TEST_SOURCES
  runner/test_run_simulation.cpp
  runner/test_thread_count.cpp)

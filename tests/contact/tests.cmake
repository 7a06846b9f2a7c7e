list(APPEND BRISTLE_TEST_SOURCES
  contact/test_constraint_filter.cpp)

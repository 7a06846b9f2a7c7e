list(APPEND BRISTLE_TEST_SOURCES
  energy/test_stretch.cpp
  energy/test_bend.cpp
  energy/test_bend_projection.cpp
  energy/test_bend_twist.cpp
  energy/test_gravity.cpp)

list(APPEND BRISTLE_TEST_SOURCES
  analysis/test_elastica.cpp
  analysis/test_static_solver.cpp
  analysis/test_cross_section_statics.cpp
  analysis/test_modes.cpp
  analysis/test_stability.cpp
  analysis/test_pose.cpp
  analysis/test_contact_barrier.cpp
  analysis/test_validation.cpp
  analysis/test_validation_twist.cpp)

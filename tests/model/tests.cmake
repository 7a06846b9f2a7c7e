list(APPEND BRISTLE_TEST_SOURCES
  model/test_material.cpp
  model/test_rod.cpp
  model/test_model.cpp
  model/test_cross_section.cpp)

list(APPEND BRISTLE_SOURCES
  src/analysis/elastica.cpp
  src/analysis/modes.cpp
  src/analysis/static_solver.cpp
  src/analysis/stability.cpp
  src/analysis/pose.cpp
  src/analysis/contact_barrier.cpp)

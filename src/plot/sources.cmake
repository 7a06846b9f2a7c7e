list(APPEND BRISTLE_SOURCES
  src/plot/chart.cpp)

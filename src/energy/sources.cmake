list(APPEND BRISTLE_SOURCES
  src/energy/stretch.cpp
  src/energy/bend.cpp)

list(APPEND BRISTLE_SOURCES
  src/model/rod.cpp
  src/model/model.cpp
  src/model/handle.cpp
  src/model/cross_section.cpp)

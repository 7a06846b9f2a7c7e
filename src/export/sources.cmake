list(APPEND BRISTLE_SOURCES
  src/export/obj.cpp
  src/export/vtk.cpp
  src/export/usd.cpp
  src/export/export_sequence.cpp)

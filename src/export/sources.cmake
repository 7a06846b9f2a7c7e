list(APPEND BRISTLE_SOURCES
  src/export/obj.cpp
  src/export/vtk.cpp
  src/export/usd.cpp
  src/export/export_colliders.cpp
  src/export/collider_mesh.cpp
  src/export/export_sequence.cpp)

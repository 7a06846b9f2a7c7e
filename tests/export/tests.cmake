list(APPEND BRISTLE_TEST_SOURCES
  export/test_obj.cpp
  export/test_vtk.cpp
  export/test_usd.cpp
  export/test_export_colliders.cpp
  export/test_collider_mesh.cpp
  export/test_export_sequence.cpp)

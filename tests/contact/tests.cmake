list(APPEND BRISTLE_TEST_SOURCES
  contact/test_signed_distance.cpp
  contact/test_segment_distance.cpp
  contact/test_segment_contact_frame.cpp
  contact/test_coulomb_solver.cpp
  contact/test_rod_overlaps.cpp
  contact/test_constraint_filter.cpp
  contact/test_friction.cpp
  contact/test_drape.cpp
  contact/test_l_drop.cpp
  contact/test_handle.cpp
  contact/test_scene_handles.cpp
  contact/test_contact_regressions.cpp
  contact/test_pivot_friction.cpp
  contact/test_rod_contact.cpp
  contact/test_rod_friction.cpp
  contact/test_contact_check.cpp
  contact/test_contact_solver_rods.cpp)

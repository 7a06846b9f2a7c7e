list(APPEND BRISTLE_SOURCES
  src/contact/signed_distance.cpp
  src/contact/segment_distance.cpp
  src/contact/segment_contact_frame.cpp
  src/contact/coulomb_solver.cpp
  src/contact/rod_contact_rows.cpp
  src/contact/collider_contact_rows.cpp
  src/contact/rod_overlaps.cpp
  src/contact/constraint_filter.cpp
  src/contact/contact_solver.cpp
  src/contact/segment_distance_derivatives.cpp
  src/contact/capsule_ccd.cpp
  src/contact/rod_contact.cpp
  src/contact/box_pairs.cpp
  src/contact/contact_check.cpp)

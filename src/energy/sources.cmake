list(APPEND BRISTLE_SOURCES
  src/energy/stretch.cpp
  src/energy/bend.cpp
  src/energy/rod_frame.cpp
  src/energy/material_bend.cpp
  src/energy/twist.cpp
  src/energy/discrete_elastic_rod.cpp
  src/energy/rod_contact.cpp
  src/energy/rod_friction.cpp)

list(APPEND BRISTLE_TEST_SOURCES
  integrator/test_active_rods.cpp
  integrator/test_assembly.cpp
  integrator/test_conjugate_gradient.cpp
  integrator/test_element_table.cpp
  integrator/test_implicit_euler.cpp
  integrator/test_rod_preconditioner.cpp
  integrator/test_length_correction.cpp
  integrator/test_newton.cpp
  integrator/test_time_schemes.cpp
  integrator/test_twist_dynamics.cpp
  integrator/test_twist_sections.cpp)

list(APPEND BRISTLE_SOURCES
  src/integrator/assembly.cpp
  src/integrator/conjugate_gradient.cpp
  src/integrator/rod_preconditioner.cpp
  src/integrator/length_correction.cpp
  src/integrator/implicit_euler.cpp)

# Command-line tests of `bristle export` that read its files with other tools' readers
# (included by tests/cli/cli_tests.cmake, which defines _cli_dir and _cli_work).

# VTK's own reader (python3-vtk9, installed by tools/install-deps.sh) reads the .pvd series
# and every .vtp, rods and colliders, and agrees with the OBJ export (docs/export.md).
# Debian's packages install into /usr/bin/python3's modules: that interpreter first, so a
# python3 of another installation earlier on PATH does not hide them.
find_program(BRISTLE_SYSTEM_PYTHON3 python3 PATHS /usr/bin NO_DEFAULT_PATH)
find_program(BRISTLE_SYSTEM_PYTHON3 python3)
if(BRISTLE_SYSTEM_PYTHON3)
  add_test(NAME cli_export_vtk_read_by_vtk
           COMMAND ${BRISTLE_SYSTEM_PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/export/check_vtk_export.py
                   $<TARGET_FILE:bristle> ${_cli_dir}/export/colliders.json ${_cli_work}/export/vtk_read)
  set_tests_properties(cli_export_vtk_read_by_vtk PROPERTIES FAIL_REGULAR_EXPRESSION "CHECK FAILED")
else()
  # No Python at all: a test that fails, saying so, rather than silence.
  add_test(NAME cli_export_vtk_read_by_vtk
           COMMAND ${CMAKE_COMMAND} -E echo "CHECK FAILED: python3 not found (tools/install-deps.sh)")
  set_tests_properties(cli_export_vtk_read_by_vtk PROPERTIES FAIL_REGULAR_EXPRESSION "CHECK FAILED")
endif()

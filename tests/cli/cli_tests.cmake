# Command-line tests: they run the real `bristle` executable (included by tests/CMakeLists.txt).
# Names start with "cli_" so `ctest -R cli` selects them.
if(NOT TARGET bristle)
  return()
endif()

set(_cli_dir ${CMAKE_CURRENT_SOURCE_DIR}/cli)
set(_cli_work ${CMAKE_CURRENT_BINARY_DIR}/cli_work)
set(_scenes ${PROJECT_SOURCE_DIR}/scenes)

# --- Golden frames --------------------------------------------------------------------------
# For each scene in tests/golden/scenes.txt: run it into the build tree, then compare with the
# stored folder tests/golden/<scene>/ using the same `bristle compare` users run. Tolerances are
# looser than compare's defaults so that a different compiler or CPU (another rounding of the
# same arithmetic) still passes, while any change of the physics fails.
set(BRISTLE_GOLDEN_ATOL 1e-8)
set(BRISTLE_GOLDEN_RTOL 1e-6)
file(STRINGS ${CMAKE_CURRENT_SOURCE_DIR}/golden/scenes.txt _golden_lines)
foreach(_line IN LISTS _golden_lines)
  string(STRIP "${_line}" _scene)
  if(_scene STREQUAL "" OR _scene MATCHES "^#")
    continue()
  endif()
  add_test(NAME cli_golden_${_scene}_run
           COMMAND bristle run ${_scenes}/${_scene}.json -o ${_cli_work}/golden/${_scene} --force --quiet)
  set_tests_properties(cli_golden_${_scene}_run PROPERTIES FIXTURES_SETUP golden_${_scene})
  add_test(NAME cli_golden_${_scene}_compare
           COMMAND bristle compare ${CMAKE_CURRENT_SOURCE_DIR}/golden/${_scene} ${_cli_work}/golden/${_scene}
                   --atol ${BRISTLE_GOLDEN_ATOL} --rtol ${BRISTLE_GOLDEN_RTOL})
  set_tests_properties(cli_golden_${_scene}_compare PROPERTIES FIXTURES_REQUIRED golden_${_scene})
endforeach()

# --- Malformed scenes -----------------------------------------------------------------------
# Each file under tests/cli/malformed/ must be refused by `bristle run`: exit code 2, the JSON
# pointer of the offending value in the message, and no output folder. The pointer (or, for a
# JSON syntax error, the line) expected for each file:
set(_malformed
  "01_wrong_format|/format"
  "02_missing_format|/format"
  "03_dimension_4|/dimension"
  "04_dt_negative|/time/dt"
  "05_dt_zero|/time/dt"
  "06_frame_dt_not_multiple|/time/frame_dt"
  "07_duration_negative|/time/duration"
  "08_missing_duration|/time/duration"
  "09_gravity_two_components|/gravity"
  "10_density_negative|/materials/nylon/density"
  "11_radius_zero|/materials/nylon/radius"
  "12_youngs_modulus_string|/materials/nylon/youngs_modulus"
  "13_unknown_material|/rods/0/material"
  "14_inline_material_density|/rods/1/material/density"
  "15_zero_length_edge|/rods/0/vertices/2"
  "16_fixed_out_of_range|/rods/0/fixed/1"
  "17_unknown_top_level_key|/gravty"
  "18_unknown_rod_key|/rods/0/vertexes"
  "19_vertex_two_components|/rods/0/vertices/1"
  "20_rest_unknown|/rods/0/rest"
  "21_generator_segments_zero|/rods/0/generator/segments"
  "22_generator_unknown_type|/rods/0/generator/type"
  "23_collider_unknown_type|/colliders/0/type"
  "24_friction_negative|/colliders/0/friction"
  "25_load_unknown_rod|/loads/0/rod"
  "26_load_vertex_out_of_range|/loads/0/vertex"
  "27_cg_tolerance_negative|/solver/cg_tolerance"
  "28_solver_mode_unknown|/solver/mode"
  "29_damping_negative|/damping/mass"
  "30_duplicate_rod_name|/rods/1/name"
  "31_vertices_and_generator|/rods/0/generator"
  "32_rods_empty|/rods"
  "33_syntax_error|33_syntax_error.json:5: invalid JSON at column 1")
foreach(_entry IN LISTS _malformed)
  string(REPLACE "|" ";" _parts "${_entry}")
  list(GET _parts 0 _name)
  list(GET _parts 1 _pointer)
  add_test(NAME cli_malformed_${_name}
           COMMAND ${CMAKE_COMMAND} -DBRISTLE=$<TARGET_FILE:bristle> -DSCENE=${_cli_dir}/malformed/${_name}.json
                   -DOUT=${_cli_work}/malformed/${_name} "-DPOINTER=${_pointer}"
                   -P ${_cli_dir}/expect_refused.cmake)
  set_tests_properties(cli_malformed_${_name} PROPERTIES
                       PASS_REGULAR_EXPRESSION "${_pointer}: "
                       FAIL_REGULAR_EXPRESSION "CHECK FAILED")
endforeach()

# --- Exit codes -----------------------------------------------------------------------------
# bristle_cli_exit_test(NAME EXPECTED "ARG|ARG|..." [extra -D definitions...])
function(bristle_cli_exit_test name expected arguments)
  add_test(NAME cli_exit_${name}
           COMMAND ${CMAKE_COMMAND} -DBRISTLE=$<TARGET_FILE:bristle> "-DARGS=${arguments}" -DEXPECTED=${expected}
                   ${ARGN} -P ${_cli_dir}/expect_exit.cmake)
  set_tests_properties(cli_exit_${name} PROPERTIES FAIL_REGULAR_EXPRESSION "CHECK FAILED")
endfunction()

bristle_cli_exit_test(no_command 2 "")
bristle_cli_exit_test(unknown_command 2 "frobnicate")
bristle_cli_exit_test(version 0 "--version" "-DSTDOUT_MATCHES=^bristle [0-9]+\\.[0-9]+\\.[0-9]+")
bristle_cli_exit_test(help 0 "help" "-DSTDOUT_MATCHES=compare")
bristle_cli_exit_test(help_run 0 "help|run" "-DSTDOUT_MATCHES=^usage: bristle run")
bristle_cli_exit_test(help_unknown 2 "help|frobnicate")
bristle_cli_exit_test(run_help 0 "run|--help" "-DSTDOUT_MATCHES=--force")
bristle_cli_exit_test(run_missing_scene 2 "run")
bristle_cli_exit_test(run_missing_output 2 "run|${_scenes}/rod_3d_straight.json")
bristle_cli_exit_test(run_unknown_flag 2 "run|${_scenes}/rod_3d_straight.json|-o|${_cli_work}/exit/flag|--bogus"
                      "-DABSENT=${_cli_work}/exit/flag" "-DSTDERR_MATCHES=unknown option '--bogus'")
bristle_cli_exit_test(run_scene_missing 2 "run|${_cli_work}/no-such-scene.json|-o|${_cli_work}/exit/missing"
                      "-DABSENT=${_cli_work}/exit/missing")
bristle_cli_exit_test(run_nonempty_output 2 "run|${_scenes}/rod_3d_straight.json|-o|${_cli_work}/exit/busy"
                      "-DSETUP_NONEMPTY=${_cli_work}/exit/busy" "-DSTDERR_MATCHES=--force")
bristle_cli_exit_test(validate_ok 0 "validate|${_scenes}/demo.json" "-DSTDOUT_MATCHES=valid")
# Rods that start inside each other: a warning, not a refusal; the scene still runs.
bristle_cli_exit_test(validate_overlaps 0 "validate|${_cli_dir}/overlap/crossing_rods.json"
                      "-DSTDOUT_MATCHES=valid" "-DSTDERR_MATCHES=warning: .*: 2 overlapping segment pairs between 1 pair of rods")
bristle_cli_exit_test(run_overlaps 0 "run|${_cli_dir}/overlap/crossing_rods.json|-o|${_cli_work}/exit/overlaps|--force|--quiet")
# A brush whose tilted bristles cannot be drawn clear of each other is refused at its generator.
bristle_cli_exit_test(validate_brush_too_dense 2 "validate|${_cli_dir}/malformed/61_brush_too_dense.json"
                      "-DSTDERR_MATCHES=/rods/0/generator: the bristles do not fit.*increase layout.spacing.*reduce jitter.direction.*radius")
# One whose overlap check would take unbounded time likewise, saying so.
bristle_cli_exit_test(validate_brush_check_unbounded 2 "validate|${_cli_dir}/malformed/62_brush_check_unbounded.json"
                      "-DSTDERR_MATCHES=/rods/0/generator: the bristles cannot be checked for overlaps in bounded time.*reduce jitter.direction")
bristle_cli_exit_test(schema 0 "schema" "-DSTDOUT_MATCHES=json-schema.org/draft-07/schema")
bristle_cli_exit_test(schema_extra_argument 2 "schema|scene.json")
bristle_cli_exit_test(validate_malformed 2 "validate|${_cli_dir}/malformed/10_density_negative.json"
                      "-DSTDERR_MATCHES=/materials/nylon/density")
bristle_cli_exit_test(validate_two_scenes 2 "validate|a.json|b.json")
bristle_cli_exit_test(compare_missing_argument 2 "compare|${CMAKE_CURRENT_SOURCE_DIR}/golden/curl_2d")
bristle_cli_exit_test(compare_bad_tolerance 2 "compare|a|b|--atol|abc" "-DSTDERR_MATCHES=--atol expects a number")
bristle_cli_exit_test(compare_unreadable 2 "compare|${CMAKE_CURRENT_SOURCE_DIR}/golden/curl_2d|${_cli_work}/nothing"
                      "-DSTDERR_MATCHES=no such output folder")
bristle_cli_exit_test(compare_golden_differs 1
                      "compare|${CMAKE_CURRENT_SOURCE_DIR}/golden/curl_2d|${CMAKE_CURRENT_SOURCE_DIR}/golden/l_shape_2d"
                      "-DSTDOUT_MATCHES=^different")
bristle_cli_exit_test(compare_golden_same 0
                      "compare|${CMAKE_CURRENT_SOURCE_DIR}/golden/curl_2d|${CMAKE_CURRENT_SOURCE_DIR}/golden/curl_2d"
                      "-DSTDOUT_MATCHES=^same")

# --- Analysis: bristle modes, static scenes -------------------------------------------------
include(${CMAKE_CURRENT_SOURCE_DIR}/cli/analysis_cli_tests.cmake)

# --- Rendering, export, batch ---------------------------------------------------------------
include(${CMAKE_CURRENT_SOURCE_DIR}/cli/render_cli_tests.cmake)
include(${CMAKE_CURRENT_SOURCE_DIR}/cli/export_cli_tests.cmake)

# --- Binary frames (--frames binary): every reader, exact round trip, the Python reader --------
include(${CMAKE_CURRENT_SOURCE_DIR}/cli/frames_cli_tests.cmake)

# --- Threads: byte-identical frames -----------------------------------------------------------
# `bristle run` uses one thread for scenes under 5000 free DOFs per extra thread
# (runner/thread_count.hpp), which the bundled scenes below are; threads_brush (6075 free DOFs)
# really runs on two.
add_test(NAME cli_threads_identical_threads_brush
         COMMAND ${CMAKE_COMMAND} -DBRISTLE=$<TARGET_FILE:bristle> -DSCENE=${_cli_dir}/limits/threads_brush.json
                 -DWORK=${_cli_work}/threads/threads_brush -P ${_cli_dir}/expect_same_frames.cmake)
set_tests_properties(cli_threads_identical_threads_brush PROPERTIES FAIL_REGULAR_EXPRESSION "CHECK FAILED")
foreach(_scene demo swing_3d hair_strands)
  add_test(NAME cli_threads_identical_${_scene}
           COMMAND ${CMAKE_COMMAND} -DBRISTLE=$<TARGET_FILE:bristle> -DSCENE=${_scenes}/${_scene}.json
                   -DWORK=${_cli_work}/threads/${_scene} -P ${_cli_dir}/expect_same_frames.cmake)
  set_tests_properties(cli_threads_identical_${_scene} PROPERTIES FAIL_REGULAR_EXPRESSION "CHECK FAILED")
endforeach()

# --- Limits (docs/limits.md): what run accepts others read; damaged folders refused -----------
set(_limits_work ${_cli_work}/limits)
bristle_cli_exit_test(run_threads_past_limit 2
                      "run|${_scenes}/rod_3d_straight.json|-o|${_limits_work}/threads_limit|--threads|99999"
                      "-DSTDERR_MATCHES=--threads expects an integer in \\[1, 1024\\]" "-DABSENT=${_limits_work}/threads_limit")
bristle_cli_exit_test(run_threads_past_hardware 0
                      "run|${_scenes}/rod_3d_straight.json|-o|${_limits_work}/threads_clamped|--threads|1024|--force"
                      "-DSTDERR_MATCHES=hardware threads: using")
bristle_cli_exit_test(modes_count_past_limit 2 "modes|${_scenes}/rod_3d_straight.json|--count|1001"
                      "-DSTDERR_MATCHES=--count expects an integer in")
foreach(_pair "zero_radius_colliders|render" "long_name|obj" "long_name|vtk")
  string(REPLACE "|" ";" _parts "${_pair}")
  list(GET _parts 0 _scene)
  list(GET _parts 1 _command)
  add_test(NAME cli_limits_${_scene}_${_command}
           COMMAND ${CMAKE_COMMAND} -DBRISTLE=$<TARGET_FILE:bristle> -DSCENE=${_cli_dir}/limits/${_scene}.json
                   -DWORK=${_limits_work}/${_scene}_${_command} -DREADER=${_command}
                   -P ${_cli_dir}/expect_run_then.cmake)
  set_tests_properties(cli_limits_${_scene}_${_command} PROPERTIES FAIL_REGULAR_EXPRESSION "CHECK FAILED")
endforeach()

# bristle_damaged_test(NAME COMMAND FILE FROM-REGEX TO EXPECTED-TEXT): a copy of the golden
# curl_2d folder damaged by one replacement must be refused by COMMAND with nothing written.
function(bristle_damaged_test name command file from to expect)
  add_test(NAME cli_damaged_${name}
           COMMAND ${CMAKE_COMMAND} -DBRISTLE=$<TARGET_FILE:bristle> -DSOURCE=${CMAKE_CURRENT_SOURCE_DIR}/golden/curl_2d
                   -DWORK=${_limits_work}/damaged_${name} -DFILE=${file} "-DFROM=${from}" "-DTO=${to}"
                   -DREADER=${command} "-DEXPECT=${expect}" -P ${_cli_dir}/expect_damaged_refused.cmake)
  set_tests_properties(cli_damaged_${name} PROPERTIES FAIL_REGULAR_EXPRESSION "CHECK FAILED")
endfunction()
# A damaged frame 5 of 21: export used to write frames 0-4 first.
bristle_damaged_test(export_frame5_1e400 export frames/000005.json "0.00195090322" "1e400"
                     "000005.json: /rods/0/positions/1/0: ")
bristle_damaged_test(render_frame5_1e400 render frames/000005.json "0.00195090322" "1e400"
                     "000005.json: /rods/0/positions/1/0: ")
bristle_damaged_test(compare_frame5_1e400 compare frames/000005.json "0.00195090322" "1e400"
                     "000005.json: /rods/0/positions/1/0: ")
bristle_damaged_test(render_far_coordinate render frames/000005.json "0.00195090322" "1e300"
                     "000005.json: /rods/0/positions/1/0: a coordinate of")
bristle_damaged_test(export_dimension_wraps export manifest.json "dimension.: 2" "dimension': 4294967298"
                     "manifest.json: /dimension: expected an integer in [2, 3]")
bristle_damaged_test(render_frame_index_wraps render frames/000003.json "frame.: 3" "frame': 4294967299"
                     "000003.json: /frame: expected an integer in [0, 10000000]")
# The scene a manifest records is loaded again for its colliders: one that no longer loads is
# refused at its pointer under /scene, before anything is written.
bristle_damaged_test(export_recorded_collider export manifest.json "colliders.: \\[\\]"
                     "colliders': [{'type': 'sphere', 'center': [0, 0], 'radius': -1}]"
                     "manifest.json: /scene/colliders/0/radius: ")
bristle_damaged_test(export_frame_file_outside export manifest.json "frames/000002.json" "../outside.json"
                     "manifest.json: /frame_files/2: expected a frame file name")
bristle_damaged_test(compare_frame_file_absolute compare manifest.json "frames/000002.json" "/etc/hostname"
                     "manifest.json: /frame_files/2: expected a frame file name")

include(${CMAKE_CURRENT_SOURCE_DIR}/cli/contact_check_cli_tests.cmake)
bristle_damaged_test(check_contact_frame5_1e400 check-contact frames/000005.json "0.00195090322" "1e400"
                     "000005.json: /rods/0/positions/1/0: ")
# The recorded scene, loaded again for rest lengths and rod_contact.self, must still load.
bristle_damaged_test(check_contact_recorded_scene check-contact manifest.json "  .dimension.: 2"
                     "  'dimension': 3" "manifest.json: /scene/")

# --- Install, man page, completion, batch recipes ---------------------------------------------
include(${CMAKE_CURRENT_SOURCE_DIR}/cli/install_cli_tests.cmake)

# --- tools/iteration-cost.py over a bench run's iteration log ----------------------------------
find_program(BRISTLE_ITERATION_COST_PYTHON3 python3)
if(BRISTLE_ITERATION_COST_PYTHON3)
  add_test(NAME cli_iteration_cost_tool
           COMMAND ${CMAKE_COMMAND} -DBRISTLE=$<TARGET_FILE:bristle> -DPYTHON=${BRISTLE_ITERATION_COST_PYTHON3}
                   -DTOOL=${PROJECT_SOURCE_DIR}/tools/iteration-cost.py -DWORK=${_cli_work}/iteration_cost
                   -P ${_cli_dir}/expect_iteration_cost.cmake)
else()
  message(STATUS "python3 not found: the iteration-cost tool's test is not registered")
endif()

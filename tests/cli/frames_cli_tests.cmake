# Command-line tests of binary frames, `bristle run --frames binary|compressed` (included by
# tests/cli/cli_tests.cmake, which defines _cli_dir, _cli_work, _scenes and
# bristle_cli_exit_test). docs/output-format.md, "Binary frames".
set(_frames_work ${_cli_work}/frames)

bristle_cli_exit_test(run_frames_unknown 2 "run|${_scenes}/swing_3d.json|-o|${_frames_work}/unknown|--frames|hdf5"
                      "-DSTDERR_MATCHES=--frames expects json, binary or compressed" "-DABSENT=${_frames_work}/unknown")
bristle_cli_exit_test(run_help_frames 0 "run|--help" "-DSTDOUT_MATCHES=--frames F")
bristle_cli_exit_test(modes_frames_needs_shapes 2
                      "modes|${_cli_dir}/analysis/cantilever_2d.json|--frames|binary"
                      "-DSTDERR_MATCHES=--frames needs --shapes OUT")

# The same scenes, 3D and 2D, written as JSON, stored and deflated .npz; the readers' tests
# below use them.
foreach(_scene swing_3d curl_2d)
  foreach(_layout json binary compressed)
    add_test(NAME cli_frames_run_${_scene}_${_layout}
             COMMAND bristle run ${_scenes}/${_scene}.json -o ${_frames_work}/${_scene}_${_layout} --force --quiet
                     --frames ${_layout})
    set_tests_properties(cli_frames_run_${_scene}_${_layout} PROPERTIES FIXTURES_SETUP frames_${_scene})
  endforeach()
  # compare (binary against JSON: bitwise equal, velocities too), render, export, batch and
  # modes --shapes on binary frames, stored and deflated.
  foreach(_layout binary compressed)
    add_test(NAME cli_frames_readers_${_scene}_${_layout}
             COMMAND ${CMAKE_COMMAND} -DBRISTLE=$<TARGET_FILE:bristle> -DJSON=${_frames_work}/${_scene}_json
                     -DBINARY=${_frames_work}/${_scene}_${_layout} -DWORK=${_frames_work}/${_scene}_readers_${_layout}
                     -P ${_cli_dir}/expect_binary_frames_read.cmake)
    set_tests_properties(cli_frames_readers_${_scene}_${_layout} PROPERTIES FIXTURES_REQUIRED frames_${_scene}
                         FAIL_REGULAR_EXPRESSION "CHECK FAILED")
  endforeach()
endforeach()

add_test(NAME cli_frames_compressed_damaged
         COMMAND ${CMAKE_COMMAND} -DBRISTLE=$<TARGET_FILE:bristle> -DCOMPRESSED=${_frames_work}/swing_3d_compressed
                 -DWORK=${_frames_work}/compressed_damaged -P ${_cli_dir}/expect_damaged_deflate.cmake)
set_tests_properties(cli_frames_compressed_damaged PROPERTIES FIXTURES_REQUIRED frames_swing_3d
                     FAIL_REGULAR_EXPRESSION "CHECK FAILED")

# The compressed frames are smaller than the stored ones: deflate really ran.
add_test(NAME cli_frames_compressed_smaller
         COMMAND ${CMAKE_COMMAND} -DSMALL=${_frames_work}/swing_3d_compressed/frames
                 -DLARGE=${_frames_work}/swing_3d_binary/frames -P ${_cli_dir}/expect_smaller_folder.cmake)
set_tests_properties(cli_frames_compressed_smaller PROPERTIES FIXTURES_REQUIRED frames_swing_3d
                     FAIL_REGULAR_EXPRESSION "CHECK FAILED")

add_test(NAME cli_frames_modes_shapes_binary
         COMMAND ${CMAKE_COMMAND} -DBRISTLE=$<TARGET_FILE:bristle> -DSCENE=${_cli_dir}/analysis/cantilever_2d.json
                 -DWORK=${_frames_work}/modes -P ${_cli_dir}/expect_binary_shapes.cmake)
set_tests_properties(cli_frames_modes_shapes_binary PROPERTIES FAIL_REGULAR_EXPRESSION "CHECK FAILED")

add_test(NAME cli_frames_batch_binary
         COMMAND bristle batch ${_scenes}/curl_2d.json -o ${_frames_work}/batch --force --quiet --frames compressed -j 1)
add_test(NAME cli_frames_batch_binary_check
         COMMAND ${CMAKE_COMMAND} -DDIR=${_frames_work}/batch/curl_2d/frames -DEXTENSION=npz
                 -P ${_cli_dir}/expect_frame_files.cmake)
set_tests_properties(cli_frames_batch_binary PROPERTIES FIXTURES_SETUP frames_batch)
set_tests_properties(cli_frames_batch_binary_check PROPERTIES FIXTURES_REQUIRED frames_batch
                     FAIL_REGULAR_EXPRESSION "CHECK FAILED")

# Same scene, same build: byte-identical binary frames whatever the thread count.
add_test(NAME cli_threads_identical_threads_brush_binary
         COMMAND ${CMAKE_COMMAND} -DBRISTLE=$<TARGET_FILE:bristle> -DSCENE=${_cli_dir}/limits/threads_brush.json
                 -DWORK=${_cli_work}/threads/threads_brush_binary -DFRAMES=binary
                 -P ${_cli_dir}/expect_same_frames.cmake)
set_tests_properties(cli_threads_identical_threads_brush_binary PROPERTIES FAIL_REGULAR_EXPRESSION "CHECK FAILED")
add_test(NAME cli_threads_identical_threads_brush_compressed
         COMMAND ${CMAKE_COMMAND} -DBRISTLE=$<TARGET_FILE:bristle> -DSCENE=${_cli_dir}/limits/threads_brush.json
                 -DWORK=${_cli_work}/threads/threads_brush_compressed -DFRAMES=compressed
                 -P ${_cli_dir}/expect_same_frames.cmake)
set_tests_properties(cli_threads_identical_threads_brush_compressed PROPERTIES FAIL_REGULAR_EXPRESSION "CHECK FAILED")

# tools/bristle_frames.py (numpy) on the JSON and binary folders of both scenes. CI installs
# python3-numpy (tools/install-deps.sh); without it this test fails, it is never skipped.
# The first python3 that imports numpy is used: a python3 earlier on PATH (pyenv, a venv)
# may lack it while Debian's /usr/bin/python3 has it.
find_package(Python3 COMPONENTS Interpreter)
set(_python_with_numpy "")
foreach(_python IN ITEMS "${Python3_EXECUTABLE}" /usr/bin/python3)
  if(_python AND EXISTS "${_python}" AND NOT _python_with_numpy)
    execute_process(COMMAND "${_python}" -c "import numpy" RESULT_VARIABLE _no_numpy OUTPUT_QUIET ERROR_QUIET)
    if(_no_numpy EQUAL 0)
      set(_python_with_numpy "${_python}")
    endif()
  endif()
endforeach()
foreach(_scene swing_3d curl_2d)
  foreach(_layout binary compressed)
    set(_test cli_frames_python_${_scene}_${_layout})
    if(_layout STREQUAL "binary")
      set(_method stored)
    else()
      set(_method deflated)
    endif()
    if(_python_with_numpy)
      add_test(NAME ${_test}
               COMMAND ${_python_with_numpy} ${_cli_dir}/check_bristle_frames.py ${PROJECT_SOURCE_DIR}/tools
                       ${_frames_work}/${_scene}_json ${_frames_work}/${_scene}_${_layout}
                       ${_frames_work}/${_scene}_python_${_layout} $<TARGET_FILE:bristle> ${_method})
    else()
      add_test(NAME ${_test}
               COMMAND ${CMAKE_COMMAND} -E echo
                       "CHECK FAILED: no python3 with numpy found (apt-get install python3-numpy; tools/install-deps.sh)")
      set_tests_properties(${_test} PROPERTIES FAIL_REGULAR_EXPRESSION "CHECK FAILED")
    endif()
    set_tests_properties(${_test} PROPERTIES FIXTURES_REQUIRED frames_${_scene})
  endforeach()
endforeach()

# A scene with a rod with twist (format bristle-frames/2, material directors): every layout
# holds the same directors bit for bit (compare --director-tol 0), the frames are the same for 1
# and 2 threads, and compare, export --format usd and render use the directors.
foreach(_layout json binary compressed)
  add_test(NAME cli_frames_run_twist_${_layout}
           COMMAND bristle run ${_cli_dir}/twist/twisted_helix.json -o ${_frames_work}/twist_${_layout} --force --quiet
                   --frames ${_layout})
  set_tests_properties(cli_frames_run_twist_${_layout} PROPERTIES FIXTURES_SETUP frames_twist)
endforeach()
foreach(_layout binary compressed)
  add_test(NAME cli_frames_twist_directors_${_layout}
           COMMAND bristle compare ${_frames_work}/twist_json ${_frames_work}/twist_${_layout} --atol 0 --rtol 0
                   --director-tol 0 --velocities)
  set_tests_properties(cli_frames_twist_directors_${_layout} PROPERTIES FIXTURES_REQUIRED frames_twist
                       PASS_REGULAR_EXPRESSION "^same \\(atol 0, rtol 0, positions and velocities, directors within 0 rad")
endforeach()
add_test(NAME cli_frames_twist_readers
         COMMAND ${CMAKE_COMMAND} -DBRISTLE=$<TARGET_FILE:bristle> -DJSON=${_frames_work}/twist_json
                 -DWORK=${_frames_work}/twist_readers -P ${_cli_dir}/expect_twist_frames.cmake)
set_tests_properties(cli_frames_twist_readers PROPERTIES FIXTURES_REQUIRED frames_twist
                     FAIL_REGULAR_EXPRESSION "CHECK FAILED")
foreach(_layout json compressed)
  add_test(NAME cli_frames_twist_threads_${_layout}
           COMMAND ${CMAKE_COMMAND} -DBRISTLE=$<TARGET_FILE:bristle> -DSCENE=${_cli_dir}/twist/twisted_helix.json
                   -DWORK=${_frames_work}/twist_threads_${_layout} -DFRAMES=${_layout}
                   -P ${_cli_dir}/expect_same_frames.cmake)
  set_tests_properties(cli_frames_twist_threads_${_layout} PROPERTIES FAIL_REGULAR_EXPRESSION "CHECK FAILED")
endforeach()

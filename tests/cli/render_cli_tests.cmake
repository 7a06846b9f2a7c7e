# Command-line tests of `bristle render`, `bristle export` and `bristle batch` (included by
# tests/cli/cli_tests.cmake, which defines _cli_dir, _cli_work, _scenes and
# bristle_cli_exit_test). The stored golden output folders are the inputs, so these tests
# need no simulation except batch's.
set(_golden ${CMAKE_CURRENT_SOURCE_DIR}/golden)
set(_render_work ${_cli_work}/render)

# --- help and usage errors ------------------------------------------------------------------
bristle_cli_exit_test(help_lists_render 0 "help" "-DSTDOUT_MATCHES=  render +draw")
bristle_cli_exit_test(help_lists_export 0 "help" "-DSTDOUT_MATCHES=  export +write")
bristle_cli_exit_test(help_lists_batch 0 "help" "-DSTDOUT_MATCHES=  batch +run many")
bristle_cli_exit_test(render_help 0 "render|--help" "-DSTDOUT_MATCHES=^usage: bristle render OUT -o DIR")
bristle_cli_exit_test(export_help 0 "help|export" "-DSTDOUT_MATCHES=--format obj")
bristle_cli_exit_test(batch_help 0 "batch|-h" "-DSTDOUT_MATCHES=docs/batch.md")
bristle_cli_exit_test(render_missing_output 2 "render|${_golden}/curl_2d" "-DSTDERR_MATCHES=missing -o DIR")
bristle_cli_exit_test(render_unreadable 2 "render|${_render_work}/nothing|-o|${_render_work}/unreadable"
                      "-DSTDERR_MATCHES=no such output folder" "-DABSENT=${_render_work}/unreadable")
bristle_cli_exit_test(render_bad_camera 2 "render|${_golden}/swing_3d|-o|${_render_work}/camera|--camera|fisheye"
                      "-DSTDERR_MATCHES=--camera expects" "-DABSENT=${_render_work}/camera")
bristle_cli_exit_test(render_bad_vector 2 "render|${_golden}/swing_3d|-o|${_render_work}/vector|--target|1,x,2"
                      "-DSTDERR_MATCHES=--target expects" "-DABSENT=${_render_work}/vector")
bristle_cli_exit_test(render_2d_eye_refused 2 "render|${_golden}/curl_2d|-o|${_render_work}/eye2d|--position|0,0,1"
                      "-DSTDERR_MATCHES=2D scene" "-DABSENT=${_render_work}/eye2d")
bristle_cli_exit_test(render_zero_jobs 2 "render|${_golden}/curl_2d|-o|${_render_work}/zero|-j|0")
bristle_cli_exit_test(render_nonempty 2 "render|${_golden}/curl_2d|-o|${_render_work}/busy"
                      "-DSETUP_NONEMPTY=${_render_work}/busy" "-DSTDERR_MATCHES=--force")
bristle_cli_exit_test(export_missing_format 2 "export|${_golden}/curl_2d|-o|${_render_work}/nofmt"
                      "-DSTDERR_MATCHES=missing --format" "-DABSENT=${_render_work}/nofmt")
bristle_cli_exit_test(export_bad_format 2 "export|${_golden}/curl_2d|--format|stl|-o|${_render_work}/stl"
                      "-DSTDERR_MATCHES=expected obj, vtk or usd" "-DABSENT=${_render_work}/stl")
bristle_cli_exit_test(batch_no_scene 2 "batch|-o|${_render_work}/none")
bristle_cli_exit_test(batch_same_stem 2
                      "batch|${_scenes}/curl_2d.json|${_cli_dir}/../../scenes/curl_2d.json|-o|${_render_work}/same"
                      "-DSTDERR_MATCHES=share the output folder" "-DABSENT=${_render_work}/same")

# --video without ffmpeg on PATH: refused before anything is drawn, with a clear message.
add_test(NAME cli_exit_render_video_without_ffmpeg
         COMMAND ${CMAKE_COMMAND} -E env PATH=${_render_work}/empty-path
                 ${CMAKE_COMMAND} -DBRISTLE=$<TARGET_FILE:bristle>
                 "-DARGS=render|${_golden}/curl_2d|-o|${_render_work}/noffmpeg|--video|${_render_work}/x.mp4"
                 -DEXPECTED=2 "-DSTDERR_MATCHES=ffmpeg, which was not found on PATH"
                 -DABSENT=${_render_work}/noffmpeg -P ${_cli_dir}/expect_exit.cmake)
set_tests_properties(cli_exit_render_video_without_ffmpeg PROPERTIES FAIL_REGULAR_EXPRESSION "CHECK FAILED")

# --- render, export and batch at work -------------------------------------------------------
function(bristle_render_cli_check name mode)
  add_test(NAME cli_${name}
           COMMAND ${CMAKE_COMMAND} -DBRISTLE=$<TARGET_FILE:bristle> -DMODE=${mode}
                   -DWORK=${_render_work}/${name} ${ARGN} -P ${_cli_dir}/render_cli_check.cmake)
  set_tests_properties(cli_${name} PROPERTIES FAIL_REGULAR_EXPRESSION "CHECK FAILED")
endfunction()

# -j 1 and -j 2 give byte-identical PNGs: a 2D scene (orthographic, in its plane) and a 3D one.
bristle_render_cli_check(render_jobs_2d jobs -DOUT=${_golden}/curl_2d -DFRAMES=21)
bristle_render_cli_check(render_jobs_3d jobs -DOUT=${_golden}/swing_3d -DFRAMES=16)
# --fov zooms (the camera keeps its fitted eye) rather than refitting the distance.
bristle_render_cli_check(render_fov_zooms fov -DOUT=${_golden}/swing_3d -DFRAME=15)
bristle_render_cli_check(export_formats export -DOUT=${_golden}/swing_3d -DFRAMES=16)
# Two scenes, the second invalid: the first completes, the second is reported, exit code 1.
bristle_render_cli_check(batch_one_invalid batch -DVALID=${_scenes}/rod_3d_straight.json
                         -DINVALID=${_cli_dir}/malformed/10_density_negative.json)
bristle_render_cli_check(batch_render batch_render -DSCENE=${_scenes}/rod_3d_straight.json -DFRAMES=11)
# A scene that completes with a warning about its accuracy beside one without: the summary lists it.
bristle_render_cli_check(batch_warnings batch_warnings -DWARNED=${_cli_dir}/batch/small_brush_stalls.json
                         -DCLEAN=${_scenes}/rod_3d_straight.json)

# `bristle modes --shapes OUT --frames binary` (and compressed) writes its mode shapes as
# binary frames that render reads, holding the same doubles as the JSON shapes.
#   cmake -DBRISTLE=... -DSCENE=... -DWORK=<scratch> -P expect_binary_shapes.cmake
file(REMOVE_RECURSE "${WORK}")
foreach(layout json binary compressed)
  execute_process(COMMAND "${BRISTLE}" modes "${SCENE}" --count 2 --shapes "${WORK}/${layout}" --frames ${layout}
                  RESULT_VARIABLE code OUTPUT_QUIET ERROR_VARIABLE stderr)
  if(NOT code STREQUAL "0")
    message(FATAL_ERROR "CHECK FAILED: modes --frames ${layout} exited ${code}: ${stderr}")
  endif()
endforeach()
file(GLOB npz "${WORK}/binary/frames/*.npz")
list(LENGTH npz count)
if(NOT count EQUAL 3)
  message(FATAL_ERROR "CHECK FAILED: ${count} .npz frames, expected 3 (the point and 2 modes)")
endif()
foreach(layout binary compressed)
  execute_process(COMMAND "${BRISTLE}" compare "${WORK}/${layout}" "${WORK}/json" --atol 0 --rtol 0 --velocities
                  RESULT_VARIABLE code OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr)
  if(NOT code STREQUAL "0")
    message(FATAL_ERROR "CHECK FAILED: compare of ${layout} and JSON shapes exited ${code}: ${stdout}${stderr}")
  endif()
endforeach()
execute_process(COMMAND "${BRISTLE}" render "${WORK}/binary" -o "${WORK}/images" --width 64 --height 36 --quiet
                RESULT_VARIABLE code ERROR_VARIABLE stderr)
if(NOT code STREQUAL "0")
  message(FATAL_ERROR "CHECK FAILED: render of binary shapes exited ${code}: ${stderr}")
endif()
message("modes --shapes --frames binary: 3 frames, equal to the JSON shapes, rendered")

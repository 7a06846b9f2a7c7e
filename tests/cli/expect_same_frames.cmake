# Runs `bristle run SCENE` with --threads 1 and --threads 2 and checks that every frame file is
# byte-identical (interface: same scene, same build, bitwise identical frames whatever the
# thread count).  cmake -DBRISTLE=... -DSCENE=... -DWORK=... [-DFRAMES=binary] -P expect_same_frames.cmake
# FRAMES: the run's --frames layout (json by default; binary and compressed frames are frames/*.npz).
file(REMOVE_RECURSE "${WORK}")
set(layout_arguments)
set(extension json)
if(FRAMES)
  set(layout_arguments --frames ${FRAMES})
  if(FRAMES STREQUAL "binary" OR FRAMES STREQUAL "compressed")
    set(extension npz)
  endif()
endif()
foreach(threads 1 2)
  execute_process(COMMAND "${BRISTLE}" run "${SCENE}" -o "${WORK}/t${threads}" --quiet --threads ${threads}
                          ${layout_arguments}
                  RESULT_VARIABLE code ERROR_VARIABLE stderr)
  if(NOT code STREQUAL "0")
    message(FATAL_ERROR "CHECK FAILED: run with --threads ${threads} exited ${code}: ${stderr}")
  endif()
endforeach()
file(GLOB frames RELATIVE "${WORK}/t1/frames" "${WORK}/t1/frames/*.${extension}")
list(LENGTH frames count)
if(count LESS 2)
  message(FATAL_ERROR "CHECK FAILED: only ${count} frames written")
endif()
foreach(frame IN LISTS frames)
  file(SHA256 "${WORK}/t1/frames/${frame}" a)
  file(SHA256 "${WORK}/t2/frames/${frame}" b)
  if(NOT a STREQUAL b)
    message(FATAL_ERROR "CHECK FAILED: frames/${frame} differs between 1 and 2 threads")
  endif()
endforeach()
message("${count} frames byte-identical with 1 and 2 threads")

# A compressed (deflated) frame damaged inside its DEFLATE data is refused with exit 2, the
# file and the array named, and nothing written.
#   cmake -DBRISTLE=... -DCOMPRESSED=<run --frames compressed> -DWORK=<scratch> -P expect_damaged_deflate.cmake
file(REMOVE_RECURSE "${WORK}")
file(COPY "${COMPRESSED}/" DESTINATION "${WORK}/damaged")
set(frame "${WORK}/damaged/frames/000001.npz")
file(SIZE "${frame}" size)
# The middle of the file lies inside the positions' or velocities' deflated data: overwrite
# 8 bytes there.
math(EXPR middle "${size} / 2")
execute_process(COMMAND sh -c "printf 'XXXXXXXX' | dd of='${frame}' bs=1 seek=${middle} conv=notrunc status=none"
                RESULT_VARIABLE code)
if(NOT code STREQUAL "0")
  message(FATAL_ERROR "CHECK FAILED: could not damage ${frame}")
endif()
execute_process(COMMAND "${BRISTLE}" export "${WORK}/damaged" --format obj -o "${WORK}/export" --quiet
                RESULT_VARIABLE code ERROR_VARIABLE stderr)
message("$ bristle export (damaged deflate)\nexit ${code}\nstderr:\n${stderr}")
if(NOT code STREQUAL "2" OR NOT stderr MATCHES "000001\\.npz: not a readable \\.npz frame: member (positions|velocities)\\.npy: ")
  message(FATAL_ERROR "CHECK FAILED: a damaged deflated frame was not refused with exit 2 naming the file and array")
endif()
if(EXISTS "${WORK}/export")
  message(FATAL_ERROR "CHECK FAILED: export wrote ${WORK}/export from a damaged folder")
endif()

# Runs `bristle run SCENE -o OUT` on a malformed scene and checks that it is refused:
# exit code 2, the expected JSON pointer in the message, and OUT not created.
#   cmake -DBRISTLE=... -DSCENE=... -DOUT=... -DPOINTER=... -P expect_refused.cmake
# Prints "CHECK FAILED: ..." (the test's FAIL_REGULAR_EXPRESSION) on any failed check.
file(REMOVE_RECURSE "${OUT}")
execute_process(COMMAND "${BRISTLE}" run "${SCENE}" -o "${OUT}"
                RESULT_VARIABLE code OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr)
message("${stderr}")
set(failed FALSE)
if(NOT code STREQUAL "2")
  message("CHECK FAILED: exit code ${code}, expected 2")
  set(failed TRUE)
endif()
if(EXISTS "${OUT}")
  message("CHECK FAILED: ${OUT} was created")
  set(failed TRUE)
endif()
string(FIND "${stderr}" "${POINTER}" position)
if(position EQUAL -1)
  message("CHECK FAILED: the message does not name ${POINTER}")
  set(failed TRUE)
endif()
if(NOT stdout STREQUAL "")
  message("CHECK FAILED: unexpected output on stdout: ${stdout}")
  set(failed TRUE)
endif()
if(failed)
  message(FATAL_ERROR "refused-scene check failed")
endif()

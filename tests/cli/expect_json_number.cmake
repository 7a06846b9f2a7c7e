# Runs `bristle ARGS...` (exit code 0 expected), then reads one number from a JSON document
# (the command's stdout, or JSON_FILE when given) and checks LOW <= value <= HIGH.
#   cmake -DBRISTLE=... "-DARGS=a|b|c" "-DJSON_PATH=key|0|key" -DLOW=x -DHIGH=y
#         [-DJSON_FILE=path] [-DCLEAN=folder] [-DSTDERR_MATCHES=regex] -P expect_json_number.cmake
# CLEAN is removed before the command runs (an output folder from an earlier run).
# JSON_PATH lists object keys and array indices, '|'-separated (string(JSON ... GET)).
# CMake has no floating-point arithmetic; if(LESS) compares numbers as doubles, so the
# tolerance band is computed by whoever writes the test (and commented there).
string(REPLACE "|" ";" arguments "${ARGS}")
string(REPLACE "|" ";" path "${JSON_PATH}")
if(CLEAN)
  file(REMOVE_RECURSE "${CLEAN}")
endif()
execute_process(COMMAND "${BRISTLE}" ${arguments} RESULT_VARIABLE code OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr)
message("stdout:\n${stdout}\nstderr:\n${stderr}")
if(NOT code STREQUAL "0")
  message(FATAL_ERROR "CHECK FAILED: exit code ${code}, expected 0")
endif()
if(STDERR_MATCHES AND NOT stderr MATCHES "${STDERR_MATCHES}")
  message(FATAL_ERROR "CHECK FAILED: stderr does not match ${STDERR_MATCHES}")
endif()
set(document "${stdout}")
if(JSON_FILE)
  file(READ "${JSON_FILE}" document)
endif()
string(JSON value ERROR_VARIABLE json_error GET "${document}" ${path})
if(json_error)
  message(FATAL_ERROR "CHECK FAILED: ${JSON_PATH}: ${json_error}")
endif()
message("${JSON_PATH} = ${value} (want [${LOW}, ${HIGH}])")
if(value LESS LOW OR value GREATER HIGH)
  message(FATAL_ERROR "CHECK FAILED: ${JSON_PATH} = ${value} is outside [${LOW}, ${HIGH}]")
endif()

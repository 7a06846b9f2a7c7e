# tools/iteration-cost.py over a real iteration log: a small brush's `bench --brush
# --iteration-log`, then the tool, whose count must be the run's Newton iterations and whose
# kinds must add up to it; a file that is not a log is refused with exit code 2.
#   cmake -DBRISTLE=... -DPYTHON=python3 -DTOOL=tools/iteration-cost.py -DWORK=<scratch>
#         -P expect_iteration_cost.cmake
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")
execute_process(COMMAND "${BRISTLE}" bench --brush --rows 2 --columns 2 --segments 6 --duration 0.15
                        --iteration-log "${WORK}/it.jsonl" --json
                RESULT_VARIABLE code OUTPUT_VARIABLE report ERROR_VARIABLE stderr)
if(NOT code STREQUAL "0")
  message(FATAL_ERROR "CHECK FAILED: bench exited ${code}: ${stderr}")
endif()
string(JSON newton GET "${report}" newton_iterations)
execute_process(COMMAND "${PYTHON}" "${TOOL}" "${WORK}/it.jsonl" --bins 3
                RESULT_VARIABLE code OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr)
message("$ iteration-cost.py it.jsonl --bins 3\nexit ${code}\n${stdout}${stderr}")
if(NOT code STREQUAL "0")
  message(FATAL_ERROR "CHECK FAILED: iteration-cost.py exited ${code}")
endif()
if(NOT stdout MATCHES "^${newton} Newton iterations, ")
  message(FATAL_ERROR "CHECK FAILED: the tool does not count the run's ${newton} Newton iterations")
endif()
# The three kinds of the whole run (the first table) add up to the count.
string(REGEX MATCH "first solve +([0-9]+)" _ "${stdout}")
set(first ${CMAKE_MATCH_1})
string(REGEX MATCH "over every bristle +([0-9]+)" _ "${stdout}")
set(full ${CMAKE_MATCH_1})
string(REGEX MATCH "over the moving ones +([0-9]+)" _ "${stdout}")
set(partial ${CMAKE_MATCH_1})
math(EXPR sum "${first} + ${full} + ${partial}")
if(NOT sum EQUAL newton OR first EQUAL 0)
  message(FATAL_ERROR "CHECK FAILED: kinds ${first} + ${full} + ${partial} against ${newton} Newton iterations")
endif()
file(WRITE "${WORK}/not-a-log.jsonl" "{\"t\": 0.1}\n")
execute_process(COMMAND "${PYTHON}" "${TOOL}" "${WORK}/not-a-log.jsonl"
                RESULT_VARIABLE code OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr)
if(NOT code STREQUAL "2" OR NOT stderr MATCHES "not-a-log.jsonl:1: not an iteration record")
  message(FATAL_ERROR "CHECK FAILED: a record without the log's keys gave exit ${code}: ${stderr}")
endif()

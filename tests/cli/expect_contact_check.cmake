# Runs a bundled scene and `bristle check-contact` on its output folder, expecting EXPECTED
# (0: no overlap beyond 1% of the smaller radius, no crossing; 1: violations found).
#   cmake -DBRISTLE=... -DPYTHON=python3 -DSCENE=... -DWORK=<scratch> -DEXPECTED=0|1
#         -DMAX_STEPS=N [-DROD_CONTACT=off] -P expect_contact_check.cmake
# A scene longer than MAX_STEPS steps runs over its first MAX_STEPS only, and ROD_CONTACT=off
# runs it without rod contact: both from a temporary copy (tests/cli/contact_check_scene.py).
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")
if(NOT DEFINED ROD_CONTACT OR ROD_CONTACT STREQUAL "")  # not if(NOT ...): "off" is false to if()
  set(ROD_CONTACT keep)
endif()
execute_process(COMMAND "${PYTHON}" "${CMAKE_CURRENT_LIST_DIR}/contact_check_scene.py" "${SCENE}" "${WORK}/scene.json"
                        --max-steps ${MAX_STEPS} --rod-contact ${ROD_CONTACT}
                RESULT_VARIABLE code OUTPUT_VARIABLE what ERROR_VARIABLE stderr OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT code STREQUAL "0")
  message(FATAL_ERROR "CHECK FAILED: contact_check_scene.py exited ${code}: ${stderr}")
endif()
set(scene "${SCENE}")
if(what MATCHES "^copy")
  set(scene "${WORK}/scene.json")
endif()
message("${SCENE}: ${what}")
execute_process(COMMAND "${BRISTLE}" run "${scene}" -o "${WORK}/out" --quiet RESULT_VARIABLE code ERROR_VARIABLE stderr)
if(NOT code STREQUAL "0")
  message(FATAL_ERROR "CHECK FAILED: run exited ${code}: ${stderr}")
endif()
execute_process(COMMAND "${BRISTLE}" check-contact "${WORK}/out" RESULT_VARIABLE code OUTPUT_VARIABLE stdout
                ERROR_VARIABLE stderr)
message("$ bristle check-contact ${WORK}/out\nexit ${code}\n${stdout}${stderr}")
if(NOT code STREQUAL "${EXPECTED}")
  message(FATAL_ERROR "CHECK FAILED: check-contact exited ${code}, expected ${EXPECTED}")
endif()
if(ROD_CONTACT STREQUAL "off" AND NOT stdout MATCHES "rod contact off")
  message(FATAL_ERROR "CHECK FAILED: the run had rod contact on")
endif()
if(EXPECTED STREQUAL "0" AND NOT stdout MATCHES "contact ok")
  message(FATAL_ERROR "CHECK FAILED: no 'contact ok' in the summary")
endif()
if(EXPECTED STREQUAL "1" AND NOT stdout MATCHES "contact violated: [1-9]")
  message(FATAL_ERROR "CHECK FAILED: no 'contact violated' in the summary")
endif()

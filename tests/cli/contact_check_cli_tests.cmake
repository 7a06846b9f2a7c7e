# --- bristle check-contact (docs/contact.md, "Checking a run") ------------------------------
# The issue's required check, over every bundled scene with rod contact: no two segments
# overlap by more than 1% of the smaller radius at any frame, and no centre lines meet between
# frames. The scenes are found here, not listed: every scenes/*.json whose "rod_contact" has
# "enabled": true gets a test, so a scene added later is covered (the glob and the files are
# configure dependencies: a new or edited scene re-runs CMake at the next build).
#
# Each runs whole up to BRISTLE_CONTACT_CHECK_MAX_STEPS steps; a longer one runs its first
# frames that fit (time.duration cut in a temporary copy, tests/cli/contact_check_scene.py).
# A scene slow per step gets a lower cap in _contact_check_caps ("name|steps"; hair_on_sphere
# took 17 s for 40 steps with rod contact on a loaded machine, docs/contact.md; overhand_knot's
# strands touch at step 64 of 96 and jam, each later step taking ~40 times the CG iterations:
# 72 steps check the touch and 8 jammed steps in 1.8 s; brush_stroke's 225 bristles land on the
# paper at step 16 and are pressed by step 24: 28 steps took 41 s, 40 steps 75 s).
set(BRISTLE_CONTACT_CHECK_MAX_STEPS 240 CACHE STRING "steps a contact-check CLI test simulates at most per scene")
set(_contact_check_caps "hair_on_sphere|30" "brush_stroke|28" "overhand_knot|72")
find_program(BRISTLE_CONTACT_CHECK_PYTHON3 python3)
if(NOT BRISTLE_CONTACT_CHECK_PYTHON3)
  message(STATUS "python3 not found: the check-contact scene tests are not registered")
  return()
endif()

# bristle_contact_check_test(NAME SCENE-PATH EXPECTED [ROD_CONTACT off])
function(bristle_contact_check_test name path expected)
  get_filename_component(_scene ${path} NAME_WE)
  set(_steps ${BRISTLE_CONTACT_CHECK_MAX_STEPS})
  foreach(_cap IN LISTS _contact_check_caps)
    string(REPLACE "|" ";" _parts "${_cap}")
    list(GET _parts 0 _cap_scene)
    list(GET _parts 1 _cap_steps)
    if(_cap_scene STREQUAL _scene)
      set(_steps ${_cap_steps})
    endif()
  endforeach()
  set(_rod_contact keep)
  list(LENGTH ARGN _extra)
  if(_extra GREATER 0)
    list(GET ARGN 0 _rod_contact)
  endif()
  add_test(NAME cli_check_contact_${name}
           COMMAND ${CMAKE_COMMAND} -DBRISTLE=$<TARGET_FILE:bristle> -DPYTHON=${BRISTLE_CONTACT_CHECK_PYTHON3}
                   -DSCENE=${path} -DWORK=${_cli_work}/check_contact/${name} -DEXPECTED=${expected}
                   -DMAX_STEPS=${_steps} -DROD_CONTACT=${_rod_contact} -P ${_cli_dir}/expect_contact_check.cmake)
  set_tests_properties(cli_check_contact_${name} PROPERTIES FAIL_REGULAR_EXPRESSION "CHECK FAILED")
endfunction()

file(GLOB _contact_check_scenes CONFIGURE_DEPENDS ${_scenes}/*.json)
set(_contact_check_count 0)
foreach(_path IN LISTS _contact_check_scenes)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${_path})
  file(READ ${_path} _text)
  string(JSON _enabled ERROR_VARIABLE _error GET "${_text}" rod_contact enabled)
  if(_error OR NOT _enabled)
    continue()
  endif()
  get_filename_component(_scene ${_path} NAME_WE)
  bristle_contact_check_test(${_scene} ${_path} 0)
  math(EXPR _contact_check_count "${_contact_check_count} + 1")
endforeach()
if(_contact_check_count EQUAL 0)
  message(WARNING "no scene in ${_scenes} enables rod_contact: no check-contact scene test")
endif()

# The check can fail: the rod pile without rod contact, whose upper layers fall through the
# lower ones, overlaps and crosses (exit 1).
if(EXISTS ${_scenes}/rod_pile.json)
  bristle_contact_check_test(rod_pile_without_rod_contact ${_scenes}/rod_pile.json 1 off)
endif()

# Usage and unreadable folders: exit 2 with a message.
bristle_cli_exit_test(check_contact_missing_out 2 "check-contact")
bristle_cli_exit_test(check_contact_no_folder 2 "check-contact|${_cli_work}/no-such-folder"
                      "-DSTDERR_MATCHES=no such output folder")
bristle_cli_exit_test(check_contact_negative_tolerance 2
                      "check-contact|${CMAKE_CURRENT_SOURCE_DIR}/golden/curl_2d|--overlap-tolerance|-0.1"
                      "-DSTDERR_MATCHES=--overlap-tolerance must be >= 0")
bristle_cli_exit_test(check_contact_threads_zero 2 "check-contact|${CMAKE_CURRENT_SOURCE_DIR}/golden/curl_2d|--threads|0"
                      "-DSTDERR_MATCHES=--threads expects an integer")
# A 2D folder without contact reads and passes; a folder whose rods pass through each other
# between frames fails (hair_strands, 24 steps a frame, no rod contact).
bristle_cli_exit_test(check_contact_curl_2d 0 "check-contact|${CMAKE_CURRENT_SOURCE_DIR}/golden/curl_2d"
                      "-DSTDOUT_MATCHES=checked 21 frames.*contact ok")
bristle_cli_exit_test(check_contact_hair_strands 1 "check-contact|${CMAKE_CURRENT_SOURCE_DIR}/golden/hair_strands|--threads|2"
                      "-DSTDOUT_MATCHES=24 steps each.*crossings between frames: 8;.*contact violated: 0 overlaps, 8 crossings")

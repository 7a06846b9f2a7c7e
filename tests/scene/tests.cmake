list(APPEND BRISTLE_TEST_SOURCES
  scene/test_scene.cpp
  scene/test_scene_error.cpp
  scene/test_suggest.cpp
  scene/test_json_locator.cpp
  scene/test_json_value.cpp
  scene/test_straight_generator.cpp
  scene/test_brush_generator.cpp
  scene/test_curly_brush.cpp
  scene/test_load_scene.cpp
  scene/test_scene_validation.cpp
  scene/test_read_pose.cpp
  scene/test_read_render.cpp
  scene/test_input_limits.cpp
  scene/test_scene_schema.cpp)

# The schema test validates scenes with valijson (header-only; Debian's libvalijson-dev,
# installed by tools/install-deps.sh).
find_path(BRISTLE_VALIJSON_INCLUDE_DIR valijson/validator.hpp REQUIRED
          DOC "valijson headers (Debian package libvalijson-dev)")
# Debian's headers are in /usr/include, which must not be named again (-isystem /usr/include
# breaks the C++ library's #include_next); another prefix is added to this test's includes.
if(NOT BRISTLE_VALIJSON_INCLUDE_DIR IN_LIST CMAKE_CXX_IMPLICIT_INCLUDE_DIRECTORIES)
  set_source_files_properties(scene/test_scene_schema.cpp PROPERTIES INCLUDE_DIRECTORIES ${BRISTLE_VALIJSON_INCLUDE_DIR})
endif()

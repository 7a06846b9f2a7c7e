list(APPEND BRISTLE_TEST_SOURCES
  scene/test_scene.cpp
  scene/test_scene_error.cpp
  scene/test_suggest.cpp
  scene/test_json_locator.cpp
  scene/test_json_value.cpp
  scene/test_straight_generator.cpp
  scene/test_brush_generator.cpp
  scene/test_load_scene.cpp
  scene/test_scene_validation.cpp
  scene/test_read_pose.cpp
  scene/test_read_render.cpp
  scene/test_input_limits.cpp)

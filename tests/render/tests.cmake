list(APPEND BRISTLE_TEST_SOURCES
  render/test_camera.cpp
  render/test_shading.cpp
  render/test_render_frame.cpp
  render/test_ray_render.cpp
  render/test_occlusion.cpp
  render/test_scene_render.cpp
  render/test_video.cpp
  render/test_render_sequence.cpp)

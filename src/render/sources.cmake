list(APPEND BRISTLE_SOURCES
  src/render/color.cpp
  src/render/camera.cpp
  src/render/shading.cpp
  src/render/occlusion.cpp
  src/render/handle_shapes.cpp
  src/render/ray_scene.cpp
  src/render/image.cpp
  src/render/render_frame.cpp
  src/render/scene_render.cpp
  src/render/render_sequence.cpp
  src/render/video.cpp)

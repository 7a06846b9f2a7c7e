list(APPEND BRISTLE_SOURCES
  src/scene/scene.cpp
  src/scene/scene_error.cpp
  src/scene/suggest.cpp
  src/scene/json_locator.cpp
  src/scene/json_value.cpp
  src/scene/straight_generator.cpp
  src/scene/brush_generator.cpp
  src/scene/read_settings.cpp
  src/scene/read_materials.cpp
  src/scene/read_generator.cpp
  src/scene/read_rods.cpp
  src/scene/read_pose.cpp
  src/scene/read_loads.cpp
  src/scene/read_colliders.cpp
  src/scene/read_render.cpp
  src/scene/read_handles.cpp
  src/scene/load_scene.cpp)

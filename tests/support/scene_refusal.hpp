#pragma once
/// The SceneError a scene text must be refused with, for the loader's tests.

#include <string>

#include <doctest/doctest.h>

#include "bristle/scene/load_scene.hpp"
#include "bristle/scene/scene_error.hpp"

namespace bristle::test {

/// Loads `text` as "scene.json"; returns the SceneError it must throw (fails the test if none).
inline SceneError scene_refusal(const std::string& text) {
  try {
    load_scene_from_string(text, "scene.json");
  } catch (const SceneError& e) {
    return e;
  }
  FAIL("the scene loaded, but it should have been refused");
  return SceneError("", "", 0, "");
}

}  // namespace bristle::test

#pragma once
/// Loading and validating scene files (interface.md section 1; every key in
/// docs/scene-format.md). The only code that sees JSON.

#include <string>

#include "bristle/scene/scene.hpp"
#include "bristle/scene/scene_error.hpp"

namespace bristle {

/// Reads, validates and builds a scene. Throws SceneError (file, JSON pointer, line, what
/// was expected and what was found) on any bad input, before anything is simulated.
Scene load_scene(const std::string& path);

/// The same from text; `file_label` names the source in error messages.
Scene load_scene_from_string(const std::string& text, const std::string& file_label);

}  // namespace bristle

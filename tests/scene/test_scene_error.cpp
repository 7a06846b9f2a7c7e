#include <doctest/doctest.h>

#include "bristle/scene/scene_error.hpp"

using namespace bristle;

TEST_CASE("scene: SceneError reads file:line: pointer: message") {
  const SceneError with_line("scene.json", "/rods/0/material/density", 12,
                             "expected a positive number, found -5");
  CHECK(std::string(with_line.what()) ==
        "scene.json:12: /rods/0/material/density: expected a positive number, found -5");
  CHECK(with_line.file() == "scene.json");
  CHECK(with_line.pointer() == "/rods/0/material/density");
  CHECK(with_line.line() == 12);
  CHECK(with_line.message() == "expected a positive number, found -5");

  const SceneError no_line("scene.json", "/time/dt", 0, "expected a positive number, found 0");
  CHECK(std::string(no_line.what()) == "scene.json: /time/dt: expected a positive number, found 0");

  const SceneError whole_file("scene.json", "", 3, "invalid JSON at column 5: oops");
  CHECK(std::string(whole_file.what()) == "scene.json:3: invalid JSON at column 5: oops");
}

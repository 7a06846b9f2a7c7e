#pragma once
/// The error the rendering library throws: a file it cannot write or read, a malformed
/// `render` block or collider in a manifest's scene, a video encoder that is missing or fails.

#include <stdexcept>
#include <string>

namespace bristle {

class RenderError : public std::runtime_error {
 public:
  explicit RenderError(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace bristle

#pragma once
/// The error the exporters throw: a file that cannot be written, a frame that does not match
/// its manifest.

#include <stdexcept>
#include <string>

namespace bristle {

class ExportError : public std::runtime_error {
 public:
  explicit ExportError(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace bristle

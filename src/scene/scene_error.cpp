#include "bristle/scene/scene_error.hpp"

#include <utility>

namespace bristle {
namespace {

// "file:line: pointer: message", leaving out the parts that are unknown, the way compilers
// print diagnostics (editors and terminals make "file:line" clickable).
std::string format_what(const std::string& file, const std::string& pointer, int line,
                        const std::string& message) {
  std::string what = file.empty() ? std::string("scene") : file;
  if (line > 0) what += ":" + std::to_string(line);
  what += ": ";
  // A pointer holds user keys, which may be megabytes long: cut it for the message (the
  // pointer() accessor keeps it whole).
  constexpr std::size_t kLongestPointer = 256;
  if (!pointer.empty())
    what += (pointer.size() <= kLongestPointer ? pointer : pointer.substr(0, kLongestPointer) + "...") + ": ";
  return what + message;
}

}  // namespace

SceneError::SceneError(std::string file, std::string pointer, int line, std::string message)
    : std::runtime_error(format_what(file, pointer, line, message)),
      file_(std::move(file)),
      pointer_(std::move(pointer)),
      line_(line),
      message_(std::move(message)) {}

}  // namespace bristle

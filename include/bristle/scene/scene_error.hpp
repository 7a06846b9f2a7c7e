#pragma once

#include <stdexcept>
#include <string>

namespace bristle {

/// Bad scene input: names the file, the JSON pointer and line of the offending value, what
/// was expected and what was found. The command line prints what() and exits with code 2.
class SceneError : public std::runtime_error {
 public:
  SceneError(std::string file, std::string pointer, int line, std::string message);

  const std::string& file() const { return file_; }
  const std::string& pointer() const { return pointer_; }  ///< "" for whole-file errors
  int line() const { return line_; }                       ///< 0 when unknown
  const std::string& message() const { return message_; }

 private:
  std::string file_, pointer_;
  int line_;
  std::string message_;
};

}  // namespace bristle

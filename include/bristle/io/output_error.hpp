#pragma once
/// Errors reading or writing an output folder: an unreadable, missing or malformed manifest or
/// frame, or a file that cannot be written.

#include <stdexcept>
#include <string>

namespace bristle {

class OutputError : public std::runtime_error {
 public:
  /// `file` is the path involved; `message` says what went wrong with it.
  OutputError(std::string file, std::string message)
      : std::runtime_error(file.empty() ? message : file + ": " + message),
        file_(std::move(file)),
        message_(std::move(message)) {}

  const std::string& file() const { return file_; }
  const std::string& message() const { return message_; }

 private:
  std::string file_, message_;
};

}  // namespace bristle

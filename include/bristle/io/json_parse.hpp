#pragma once
/// Parsing JSON that a user or a script handed us (scenes, manifests, frames) with bounded
/// work: nesting is limited before anything walks the document recursively, and every
/// failure says where, as a JSON pointer (docs/limits.md).
///
/// nlohmann/json parses iteratively and frees iteratively, but dump(), operator== and our
/// own readers recurse; a 200 KB file of nested brackets would overflow the stack in any of
/// them. So nesting deeper than kMaxJsonDepth is refused while parsing, with the pointer of
/// the first container too deep.

#include <cstddef>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

namespace bristle {

/// Arrays and objects may nest at most this deep (the document itself is level 1). Scenes
/// nest fewer than 8 levels and a manifest adds one; 64 also matches the depth to which
/// JsonLocator records lines, so the refusal can name a line.
constexpr int kMaxJsonDepth = 64;

/// A document that could not be parsed: `pointer` locates the offending value (the value
/// being read when the parser stopped), `reason` says what is wrong without position. For a
/// syntax error `syntax` is true and `byte` is the 0-based offset where the parser stopped
/// (a line and column are then more useful than a pointer).
class JsonParseError : public std::runtime_error {
 public:
  JsonParseError(std::string pointer, std::string reason, bool syntax = false, std::size_t byte = 0)
      : std::runtime_error(pointer.empty() ? reason : pointer + ": " + reason),
        pointer_(std::move(pointer)),
        reason_(std::move(reason)),
        syntax_(syntax),
        byte_(byte) {}
  const std::string& pointer() const { return pointer_; }
  const std::string& reason() const { return reason_; }
  bool syntax() const { return syntax_; }
  std::size_t byte() const { return byte_; }

 private:
  std::string pointer_;
  std::string reason_;
  bool syntax_;
  std::size_t byte_;
};

/// Parses `text`; throws JsonParseError for invalid JSON, numbers beyond a double's range
/// (1e400) and nesting deeper than kMaxJsonDepth.
nlohmann::json parse_json_bounded(const std::string& text);

}  // namespace bristle

#pragma once
/// Where each value of a JSON text starts, by JSON pointer.
///
/// nlohmann/json keeps no source positions, so on its own a scene error could name only the
/// pointer of the offending value. JsonLocator walks the raw text once more (a small
/// tokenizer, no values are built) and records the line on which each value starts, so that
/// every SceneError can also name the line. It also notices keys given twice in one object,
/// which nlohmann/json silently collapses to the last one.
///
/// Scalars inside an array that start on the array's own line are not recorded (a vector
/// written as [x, y, z] would triple the table for nothing): line_of() falls back to the
/// nearest recorded ancestor, which is on the same line.

#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace bristle {

class JsonLocator {
 public:
  JsonLocator() = default;
  /// Scans `text`. Meant for text a JSON parser has accepted; on malformed text it stops at
  /// the fault and knows the values before it.
  explicit JsonLocator(std::string_view text);

  /// Line (1-based) on which the value at `pointer` starts. For a pointer that is not in the
  /// text (a missing key), the line of its nearest ancestor that is; 0 when not even the
  /// root is known.
  int line_of(const std::string& pointer) const;

  /// Pointers of keys that occur a second (third, ...) time in the same object, in text order.
  const std::vector<std::string>& duplicate_keys() const { return duplicate_keys_; }

 private:
  std::unordered_map<std::string, int> lines_;
  std::vector<std::string> duplicate_keys_;
};

struct TextPosition {
  int line = 1;    ///< 1-based
  int column = 1;  ///< 1-based, in bytes
};

/// Line and column of the byte at `offset` (0-based) in `text`; offsets past the end give
/// the position just after the last byte.
TextPosition text_position(std::string_view text, std::size_t offset);

/// Appends one reference token to a JSON pointer, escaping '~' as "~0" and '/' as "~1"
/// (RFC 6901).
std::string pointer_append(const std::string& pointer, const std::string& key);
std::string pointer_append(const std::string& pointer, std::size_t index);

}  // namespace bristle

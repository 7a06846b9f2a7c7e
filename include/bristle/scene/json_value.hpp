#pragma once
/// Typed, pointer-tracking reads of a parsed scene document: the building blocks every scene
/// reader uses.
///
/// A JsonValue is a JSON value together with its JSON pointer and its source (file label and
/// line map). Each typed read either returns a value of the expected kind or throws
/// SceneError naming the file, line, pointer, what was expected and what was found.
///
/// An ObjectReader is a JSON object with the set of keys it may contain. It refuses unknown
/// keys when constructed (suggesting the closest allowed key), so a typo is reported as a typo
/// and not as "missing required key". Adding a scene key means listing it in its reader's
/// allowed set and reading it; nothing else changes.

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bristle/math/types.hpp"
#include "bristle/scene/json_locator.hpp"

namespace bristle {

class ObjectReader;

/// The file label and line map errors are reported against.
class JsonSource {
 public:
  JsonSource(std::string file, JsonLocator locator);

  const std::string& file() const { return file_; }
  const JsonLocator& locator() const { return locator_; }
  /// Throws SceneError for the value at `pointer`, with its line.
  [[noreturn]] void fail(const std::string& pointer, const std::string& message) const;

 private:
  std::string file_;
  JsonLocator locator_;
};

/// User text quoted in a message is cut to this many bytes, so that a 20 MB value cannot
/// make a 20 MB error line (docs/limits.md).
inline constexpr std::size_t kLongestQuote = 64;
/// `text` in double quotes, cut to kLongestQuote bytes with "..." and its full size.
std::string quoted_text(const std::string& text);

/// A number as JSON writes it (the shortest text that reads back the same double).
std::string number_text(double x);
/// A large whole count as digits ("100000001", not "1.00000001e+08").
std::string count_text(double count);

/// A short description of a JSON value for "found ..." in messages: the value itself when
/// it is short, otherwise its kind and size.
std::string describe_json(const nlohmann::json& value);

class JsonValue {
 public:
  /// `json` and `source` must outlive this value and everything read from it.
  JsonValue(const JsonSource& source, const nlohmann::json& json, std::string pointer);

  const nlohmann::json& json() const { return *json_; }
  const std::string& pointer() const { return pointer_; }
  const JsonSource& source() const { return *source_; }

  [[noreturn]] void fail(const std::string& message) const;
  /// Throws "expected <what>, found <this value>".
  [[noreturn]] void fail_expected(const std::string& what) const;

  bool is_string() const { return json_->is_string(); }
  bool is_object() const { return json_->is_object(); }
  bool is_array() const { return json_->is_array(); }

  /// Any finite number.
  double number() const;
  /// A finite number > 0.
  double positive_number() const;
  /// A finite number >= 0.
  double non_negative_number() const;
  /// A finite number in [low, high) (the upper bound excluded).
  double number_in_half_open(double low, double high) const;
  /// An integral number (3 and 3.0 both qualify) in [minimum, maximum].
  std::int64_t integer(std::int64_t minimum = std::numeric_limits<std::int64_t>::min(),
                       std::int64_t maximum = std::numeric_limits<std::int64_t>::max()) const;
  /// integer() narrowed to int, for counts and indices.
  int int_in(int minimum, int maximum = std::numeric_limits<int>::max()) const;
  std::string string() const;
  /// true or false.
  bool boolean() const;
  /// A non-empty string.
  std::string name() const;
  /// A string equal to one of `choices`; otherwise an error that suggests the closest.
  std::string choice(const std::vector<std::string>& choices) const;
  /// The "type" member of an object whose other keys depend on it (generators, colliders,
  /// layouts): required, one of `types`. Read before the object's keys are checked.
  std::string type_of(const std::vector<std::string>& types) const;
  /// Exactly `dimension` finite numbers, as a 3-vector (z = 0 in 2D).
  Vec3 vector(int dimension) const;
  /// vector(), refusing the zero vector; returned normalised.
  Vec3 direction(int dimension) const;

  /// The elements of an array (`what` describes the array in the error when it is not one).
  std::vector<JsonValue> elements(const std::string& what) const;
  /// This value as an object that may hold only `allowed_keys`.
  ObjectReader object(std::vector<std::string> allowed_keys) const;

 private:
  const JsonSource* source_;
  const nlohmann::json* json_;
  std::string pointer_;
};

class ObjectReader {
 public:
  /// Throws when `value` is not an object or holds a key outside `allowed_keys`.
  ObjectReader(const JsonValue& value, std::vector<std::string> allowed_keys);

  const JsonValue& value() const { return value_; }
  const std::string& pointer() const { return value_.pointer(); }

  bool has(const std::string& key) const;
  /// The value of a key that must be present.
  JsonValue require(const std::string& key) const;
  std::optional<JsonValue> find(const std::string& key) const;
  /// The value of `key`, or an empty object (at the pointer the key would have) when absent:
  /// optional blocks whose every key has a default read the same either way.
  JsonValue find_or_empty_object(const std::string& key) const;
  /// The same for optional arrays.
  JsonValue find_or_empty_array(const std::string& key) const;

  /// The pointer `key` has (or would have) inside this object.
  std::string pointer_to(const std::string& key) const;
  /// Throws SceneError at `key` (present or not).
  [[noreturn]] void fail_at(const std::string& key, const std::string& message) const;

 private:
  JsonValue value_;
  std::vector<std::string> allowed_keys_;
};

}  // namespace bristle

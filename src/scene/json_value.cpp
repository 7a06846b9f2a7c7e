#include "bristle/scene/json_value.hpp"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <sstream>
#include <utility>

#include "bristle/scene/scene_error.hpp"
#include "bristle/scene/suggest.hpp"

namespace bristle {
namespace {

std::string quoted(const std::string& s) { return quoted_text(s); }

// At most `bytes` bytes of `s`, cut at a UTF-8 character boundary (never before a
// continuation byte 10xxxxxx), so that the piece is still valid UTF-8 for dump().
std::string utf8_prefix(const std::string& s, std::size_t bytes) {
  if (s.size() <= bytes) return s;
  std::size_t cut = bytes;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
  return s.substr(0, cut);
}

std::string quoted_list(const std::vector<std::string>& words) {
  std::string out;
  for (std::size_t i = 0; i < words.size(); ++i) {
    if (i > 0) out += i + 1 == words.size() ? " or " : ", ";
    out += quoted(words[i]);
  }
  return out;
}

/// A bound in a message, short: "0", "1", "1.5708" (the exact value is in the docs).
std::string bound_text(double x) {
  std::ostringstream out;
  out << std::setprecision(6) << x;
  return out.str();
}

std::string plural(std::size_t n, const char* noun) {
  return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
}

}  // namespace

std::string quoted_text(const std::string& text) {
  if (text.size() <= kLongestQuote) return "\"" + text + "\"";
  return "\"" + utf8_prefix(text, kLongestQuote) + "...\" (" + std::to_string(text.size()) + " bytes)";
}

std::string number_text(double x) { return nlohmann::json(x).dump(); }

std::string count_text(double count) {
  if (std::isfinite(count) && std::fabs(count) < 1e18) return std::to_string(std::llround(count));
  return number_text(count);
}

JsonSource::JsonSource(std::string file, JsonLocator locator)
    : file_(std::move(file)), locator_(std::move(locator)) {}

void JsonSource::fail(const std::string& pointer, const std::string& message) const {
  throw SceneError(file_, pointer, locator_.line_of(pointer), message);
}

std::string describe_json(const nlohmann::json& value) {
  constexpr std::size_t kShort = 48;
  // Containers of more than a few members are described by size without dumping them:
  // dump() walks the whole value, which may be megabytes.
  if (value.is_array() && value.size() > kShort / 2) return "an array of " + plural(value.size(), "element");
  if (value.is_object() && value.size() > kShort / 2) return "an object with " + plural(value.size(), "key");
  if (value.is_string() && value.get_ref<const std::string&>().size() > kShort) {
    const std::string text = nlohmann::json(utf8_prefix(value.get_ref<const std::string&>(), kShort)).dump();
    return text.substr(0, kShort - 4) + "...\"";
  }
  const std::string text = value.dump();
  if (text.size() <= kShort) return text;
  if (value.is_array()) return "an array of " + plural(value.size(), "element");
  if (value.is_object()) return "an object with " + plural(value.size(), "key");
  return text;
}

// ---------------------------------------------------------------------------------------
// JsonValue

JsonValue::JsonValue(const JsonSource& source, const nlohmann::json& json, std::string pointer)
    : source_(&source), json_(&json), pointer_(std::move(pointer)) {}

void JsonValue::fail(const std::string& message) const { source_->fail(pointer_, message); }

void JsonValue::fail_expected(const std::string& what) const {
  fail("expected " + what + ", found " + describe_json(*json_));
}

double JsonValue::number() const {
  if (!json_->is_number()) fail_expected("a number");
  const double x = json_->get<double>();
  if (!std::isfinite(x)) fail_expected("a finite number");
  return x;
}

double JsonValue::positive_number() const {
  if (!json_->is_number() || !(json_->get<double>() > 0.0) || !std::isfinite(json_->get<double>()))
    fail_expected("a positive number");
  return json_->get<double>();
}

double JsonValue::non_negative_number() const {
  if (!json_->is_number() || !(json_->get<double>() >= 0.0) || !std::isfinite(json_->get<double>()))
    fail_expected("a number >= 0");
  return json_->get<double>();
}

double JsonValue::number_in_half_open(double low, double high) const {
  const double x = json_->is_number() ? json_->get<double>() : std::nan("");
  if (!(x >= low && x < high))
    fail_expected("a number in [" + bound_text(low) + ", " + bound_text(high) + ")");
  return x;
}

std::int64_t JsonValue::integer(std::int64_t minimum, std::int64_t maximum) const {
  // Bounds that are only the limits of int or int64 are not worth a user's reading.
  const bool has_minimum = minimum > std::numeric_limits<int>::min();
  const bool has_maximum = maximum < std::numeric_limits<int>::max();
  std::string range;
  if (has_minimum && has_maximum)
    range = " in [" + std::to_string(minimum) + ", " + std::to_string(maximum) + "]";
  else if (has_minimum)
    range = " >= " + std::to_string(minimum);
  else if (has_maximum)
    range = " <= " + std::to_string(maximum);
  const std::string expected = "an integer" + range;

  std::int64_t value = 0;
  if (json_->is_number_unsigned()) {
    const auto u = json_->get<std::uint64_t>();
    if (u > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) fail_expected(expected);
    value = static_cast<std::int64_t>(u);
  } else if (json_->is_number_integer()) {
    value = json_->get<std::int64_t>();
  } else if (json_->is_number_float()) {
    // 3.0 or 1e3 is an integer written as a float; 2^63 and beyond would not convert.
    const double x = json_->get<double>();
    if (!std::isfinite(x) || std::floor(x) != x || std::fabs(x) >= 9.2e18) fail_expected(expected);
    value = static_cast<std::int64_t>(x);
  } else {
    fail_expected(expected);
  }
  if (value < minimum || value > maximum) fail_expected(expected);
  return value;
}

int JsonValue::int_in(int minimum, int maximum) const { return static_cast<int>(integer(minimum, maximum)); }

std::string JsonValue::string() const {
  if (!json_->is_string()) fail_expected("a string");
  return json_->get<std::string>();
}

bool JsonValue::boolean() const {
  if (!json_->is_boolean()) fail_expected("true or false");
  return json_->get<bool>();
}

std::string JsonValue::name() const {
  if (!json_->is_string() || json_->get<std::string>().empty()) fail_expected("a non-empty string");
  return json_->get<std::string>();
}

std::string JsonValue::choice(const std::vector<std::string>& choices) const {
  if (!json_->is_string()) fail_expected(quoted_list(choices));
  const std::string value = json_->get<std::string>();
  if (std::find(choices.begin(), choices.end(), value) == choices.end())
    fail("expected " + quoted_list(choices) + ", found " + quoted(value) + did_you_mean(value, choices));
  return value;
}

std::string JsonValue::type_of(const std::vector<std::string>& types) const {
  if (!json_->is_object()) fail_expected("an object with \"type\" " + quoted_list(types));
  const std::string pointer = pointer_append(pointer_, std::string("type"));
  if (!json_->contains("type"))
    source_->fail(pointer, "missing required key \"type\" (" + quoted_list(types) + ")");
  return JsonValue(*source_, json_->at("type"), pointer).choice(types);
}

Vec3 JsonValue::vector(int dimension) const {
  const std::string expected = "a vector of " + std::to_string(dimension) + " numbers";
  if (!json_->is_array()) fail_expected(expected);
  if (static_cast<int>(json_->size()) != dimension)
    fail("expected " + expected + " (the scene's dimension is " + std::to_string(dimension) +
         "), found " + plural(json_->size(), "component") + ": " + describe_json(*json_));
  Vec3 v = Vec3::Zero();
  for (int k = 0; k < dimension; ++k)
    v[k] = JsonValue(*source_, (*json_)[k], pointer_append(pointer_, static_cast<std::size_t>(k))).number();
  return v;
}

Vec3 JsonValue::direction(int dimension) const {
  const Vec3 v = vector(dimension);
  // stableNorm: the plain norm squares the components, so [5e-324, 0, 0] would read as zero
  // and [1e300, 1e300, 0] as infinite, and a valid direction be refused as "not non-zero".
  const double length = v.stableNorm();
  if (!(length > 0.0) || !std::isfinite(length)) fail_expected("a non-zero direction vector");
  return v / length;
}

std::vector<JsonValue> JsonValue::elements(const std::string& what) const {
  if (!json_->is_array()) fail_expected(what);
  std::vector<JsonValue> out;
  out.reserve(json_->size());
  for (std::size_t i = 0; i < json_->size(); ++i)
    out.emplace_back(*source_, (*json_)[i], pointer_append(pointer_, i));
  return out;
}

ObjectReader JsonValue::object(std::vector<std::string> allowed_keys) const {
  return ObjectReader(*this, std::move(allowed_keys));
}

// ---------------------------------------------------------------------------------------
// ObjectReader

ObjectReader::ObjectReader(const JsonValue& value, std::vector<std::string> allowed_keys)
    : value_(value), allowed_keys_(std::move(allowed_keys)) {
  if (!value_.is_object()) value_.fail_expected("an object");
  for (const auto& [key, member] : value_.json().items()) {
    if (std::find(allowed_keys_.begin(), allowed_keys_.end(), key) != allowed_keys_.end()) continue;
    std::string message = "unknown key " + quoted(key);
    const std::string suggestion = did_you_mean(key, allowed_keys_);
    message += suggestion.empty() ? "; expected " + quoted_list(allowed_keys_) : suggestion;
    value_.source().fail(pointer_to(key), message);
  }
}

bool ObjectReader::has(const std::string& key) const { return value_.json().contains(key); }

JsonValue ObjectReader::require(const std::string& key) const {
  if (!has(key)) fail_at(key, "missing required key " + quoted(key));
  return JsonValue(value_.source(), value_.json().at(key), pointer_to(key));
}

std::optional<JsonValue> ObjectReader::find(const std::string& key) const {
  if (!has(key)) return std::nullopt;
  return JsonValue(value_.source(), value_.json().at(key), pointer_to(key));
}

JsonValue ObjectReader::find_or_empty_object(const std::string& key) const {
  static const nlohmann::json empty = nlohmann::json::object();
  if (!has(key)) return JsonValue(value_.source(), empty, pointer_to(key));
  return require(key);
}

JsonValue ObjectReader::find_or_empty_array(const std::string& key) const {
  static const nlohmann::json empty = nlohmann::json::array();
  if (!has(key)) return JsonValue(value_.source(), empty, pointer_to(key));
  return require(key);
}

std::string ObjectReader::pointer_to(const std::string& key) const {
  return pointer_append(value_.pointer(), key);
}

void ObjectReader::fail_at(const std::string& key, const std::string& message) const {
  value_.source().fail(pointer_to(key), message);
}

}  // namespace bristle

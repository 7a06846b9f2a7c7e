#pragma once
/// JSON text as the output folder writes it: numbers that read back to the same double, and
/// a layout a person can diff (one vertex per line).

#include <string>

#include <nlohmann/json.hpp>

namespace bristle {

/// The shortest decimal text that reads back (strtod, nlohmann's parser) to exactly `value`,
/// always with a '.' or an exponent so JSON readers see a floating-point number ("1.0",
/// "-0.0", "2.5e-07"). Non-finite values, which JSON cannot hold, are written as `null`.
std::string format_double(double value);

/// Pretty-prints JSON: objects one key per line; arrays of scalars on one line; other
/// arrays one element per line. Numbers through format_double. Keys keep the json's order.
/// `indent` is the number of spaces per level. No trailing newline.
std::string pretty_json(const nlohmann::ordered_json& value, int indent = 1);

}  // namespace bristle

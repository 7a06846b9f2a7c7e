#include "bristle/io/json_text.hpp"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <string>

namespace bristle {

std::string format_double(double value) {
  if (!std::isfinite(value)) return "null";
  // std::to_chars without a format gives the shortest text that std::from_chars (and any
  // correctly rounded strtod) reads back to the same double.
  char buffer[64];
  const auto [end, error] = std::to_chars(buffer, buffer + sizeof(buffer), value);
  std::string text(buffer, error == std::errc() ? end : buffer);
  if (text.find_first_of(".e") == std::string::npos) text += ".0";
  return text;
}

namespace {

bool is_scalar(const nlohmann::ordered_json& value) {
  return !value.is_array() && !value.is_object();
}

void append_padding(std::string& out, int level, int indent) {
  out.append(static_cast<std::size_t>(level * indent), ' ');
}

void append_value(std::string& out, const nlohmann::ordered_json& value, int level, int indent) {
  using Type = nlohmann::ordered_json::value_t;
  switch (value.type()) {
    case Type::number_float:
      out += format_double(value.get<double>());
      return;
    case Type::number_integer:
      out += std::to_string(value.get<std::int64_t>());
      return;
    case Type::number_unsigned:
      out += std::to_string(value.get<std::uint64_t>());
      return;
    case Type::array: {
      if (value.empty()) {
        out += "[]";
        return;
      }
      bool scalars = true;
      for (const auto& element : value) scalars = scalars && is_scalar(element);
      if (scalars) {
        out += '[';
        bool first = true;
        for (const auto& element : value) {
          if (!first) out += ", ";
          first = false;
          append_value(out, element, level, indent);
        }
        out += ']';
        return;
      }
      out += "[\n";
      std::size_t i = 0;
      for (const auto& element : value) {
        append_padding(out, level + 1, indent);
        append_value(out, element, level + 1, indent);
        out += (++i < value.size()) ? ",\n" : "\n";
      }
      append_padding(out, level, indent);
      out += ']';
      return;
    }
    case Type::object: {
      if (value.empty()) {
        out += "{}";
        return;
      }
      out += "{\n";
      std::size_t i = 0;
      for (auto it = value.begin(); it != value.end(); ++it) {
        append_padding(out, level + 1, indent);
        out += nlohmann::ordered_json(it.key()).dump();
        out += ": ";
        append_value(out, it.value(), level + 1, indent);
        out += (++i < value.size()) ? ",\n" : "\n";
      }
      append_padding(out, level, indent);
      out += '}';
      return;
    }
    default:  // null, boolean, string, binary
      out += value.dump();
      return;
  }
}

}  // namespace

std::string pretty_json(const nlohmann::ordered_json& value, int indent) {
  std::string out;
  append_value(out, value, 0, indent);
  return out;
}

}  // namespace bristle

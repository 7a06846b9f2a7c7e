#include "bristle/cli/args.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace bristle::cli {

std::optional<std::string> ParsedArgs::value(const std::string& name) const {
  const auto it = values_.find(name);
  if (it == values_.end()) return std::nullopt;
  return it->second;
}

double ParsedArgs::number(const std::string& name, double fallback) const {
  const auto text = value(name);
  if (!text) return fallback;
  errno = 0;
  char* end = nullptr;
  const double parsed = std::strtod(text->c_str(), &end);
  if (text->empty() || end != text->c_str() + text->size() || errno == ERANGE || !std::isfinite(parsed))
    throw UsageError(name + " expects a number, got '" + *text + "'");
  return parsed;
}

int ParsedArgs::integer(const std::string& name, int fallback) const {
  const auto text = value(name);
  if (!text) return fallback;
  errno = 0;
  char* end = nullptr;
  const long parsed = std::strtol(text->c_str(), &end, 10);
  if (text->empty() || end != text->c_str() + text->size() || errno == ERANGE || parsed < -2147483647L ||
      parsed > 2147483647L)
    throw UsageError(name + " expects an integer, got '" + *text + "'");
  return static_cast<int>(parsed);
}

void ParsedArgs::set(const std::string& name, std::optional<std::string> value) {
  given_.insert(name);
  if (value) values_[name] = std::move(*value);
}

ParsedArgs parse_args(const std::vector<std::string>& args, const std::vector<OptionSpec>& options) {
  ParsedArgs parsed;
  bool options_ended = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (options_ended || arg.size() < 2 || arg[0] != '-') {
      parsed.positionals.push_back(arg);
      continue;
    }
    if (arg == "--") {
      options_ended = true;
      continue;
    }
    std::string key = arg;
    std::optional<std::string> inline_value;
    if (arg.rfind("--", 0) == 0) {
      const auto equals = arg.find('=');
      if (equals != std::string::npos) {
        key = arg.substr(0, equals);
        inline_value = arg.substr(equals + 1);
      }
    }
    const OptionSpec* spec = nullptr;
    for (const OptionSpec& option : options)
      if (key == option.name || (!option.short_name.empty() && key == option.short_name)) spec = &option;
    if (!spec) throw UsageError("unknown option '" + key + "'");
    if (parsed.has(spec->name)) throw UsageError("option " + spec->name + " given more than once");
    if (!spec->takes_value) {
      if (inline_value) throw UsageError("option " + spec->name + " takes no value");
      parsed.set(spec->name, std::nullopt);
      continue;
    }
    if (!inline_value) {
      if (i + 1 >= args.size()) throw UsageError("option " + key + " needs a value");
      inline_value = args[++i];
    }
    parsed.set(spec->name, inline_value);
  }
  return parsed;
}

void expect_positionals(const ParsedArgs& parsed, const std::vector<std::string>& names) {
  if (parsed.positionals.size() < names.size()) {
    std::string missing;
    for (std::size_t i = parsed.positionals.size(); i < names.size(); ++i)
      missing += (missing.empty() ? "" : " ") + names[i];
    throw UsageError("missing " + missing);
  }
  if (parsed.positionals.size() > names.size())
    throw UsageError("unexpected argument '" + parsed.positionals[names.size()] + "'");
}

}  // namespace bristle::cli

#pragma once
/// A small parser for `--key value` command-line flags, shared by every command.
///
/// Accepted forms: `--key value`, `--key=value`, `-k value` (a declared short name), boolean
/// `--flag`, positionals anywhere, and `--` ending the options. An undeclared option, a
/// repeated option, a missing value or a wrong number of positionals throws UsageError.

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "bristle/cli/command.hpp"

namespace bristle::cli {

struct OptionSpec {
  std::string name;          ///< long form, with dashes: "--output"
  std::string short_name;    ///< "-o", or "" for none
  bool takes_value = false;  ///< false: a boolean flag
};

class ParsedArgs {
 public:
  std::vector<std::string> positionals;

  /// True when the flag or option was given.
  bool has(const std::string& name) const { return given_.count(name) > 0; }
  /// The option's value, when given.
  std::optional<std::string> value(const std::string& name) const;
  /// The option's value as a finite number; `fallback` when absent. Throws UsageError.
  double number(const std::string& name, double fallback) const;
  /// The option's value as an integer; `fallback` when absent. Throws UsageError.
  int integer(const std::string& name, int fallback) const;

  void set(const std::string& name, std::optional<std::string> value);

 private:
  std::set<std::string> given_;
  std::map<std::string, std::string> values_;
};

/// Parses `args` against `options`. Positionals are collected; their count is checked by
/// `expect_positionals`.
ParsedArgs parse_args(const std::vector<std::string>& args, const std::vector<OptionSpec>& options);

/// Requires exactly `names.size()` positionals; names them in the error ("missing SCENE",
/// "unexpected argument 'x'").
void expect_positionals(const ParsedArgs& parsed, const std::vector<std::string>& names);

}  // namespace bristle::cli

#pragma once
/// Runs the `bristle` command line in-process (cli::run_cli) and keeps what it printed: for
/// tests of commands' output and exit codes without starting a process.

#include <sstream>
#include <string>
#include <vector>

#include "bristle/cli/command.hpp"

namespace bristle::test {

struct CliOutcome {
  int code = -1;
  std::string out, err;
};

inline CliOutcome run_cli_captured(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  cli::CommandContext context{out, err, false};
  CliOutcome outcome;
  outcome.code = cli::run_cli(args, context);
  outcome.out = out.str();
  outcome.err = err.str();
  return outcome;
}

}  // namespace bristle::test

#pragma once
/// The `bristle` command line: a table of subcommands and the dispatcher that runs them.
///
/// A command is {name, summary, usage, run}. `run` gets the arguments after the command name
/// and a CommandContext (where results and diagnostics go), and returns the exit code:
///
///   0  success
///   1  the work ran but failed or differs (simulation failure, frames that differ)
///   2  bad usage or bad input (unknown flag, missing argument, invalid scene, unreadable folder)
///
/// The dispatcher handles `--help`/`-h` for every command (prints `usage` to stdout, exit 0)
/// and turns exceptions into messages on stderr: UsageError (and the parser's errors) ->
/// message + usage line, exit 2; SceneError, OutputError -> message, exit 2; anything else ->
/// "internal error", exit 1. Commands never call exit().
///
/// Adding a command (docs/cli.md, "Adding a command"):
///  - modes, render, export, batch, verify, bench: create src/cli/<name>_command.cpp defining
///    `bristle::cli::Command bristle::cli::make_<name>_command()`. src/cli/sources.cmake picks
///    the file up when it exists and the table lists the command. No other edit.
///  - any other name: add it to BRISTLE_CLI_OPTIONAL_COMMANDS in src/cli/sources.cmake and to
///    the list in src/cli/commands.cpp (two one-line edits).

#include <functional>
#include <iosfwd>
#include <stdexcept>
#include <string>
#include <vector>

namespace bristle::cli {

enum ExitCode : int {
  kExitSuccess = 0,  ///< success
  kExitFailure = 1,  ///< ran, but failed or differs
  kExitUsage = 2,    ///< bad usage or bad input
};

/// Where a command writes. Results go to `out` (stdout), diagnostics and progress to `err`
/// (stderr). Tests pass string streams.
struct CommandContext {
  std::ostream& out;
  std::ostream& err;
  bool err_is_terminal = false;  ///< stderr is a terminal: progress bars may redraw in place
};

struct Command {
  std::string name;     ///< the word after `bristle`
  std::string summary;  ///< one line for `bristle help`
  /// Full help: starts with "usage: bristle NAME ..." (its first line is repeated in usage
  /// errors), then a description, options and exit codes.
  std::string usage;
  std::function<int(const std::vector<std::string>& args, CommandContext& context)> run;
};

/// Bad command-line usage (unknown flag, missing or extra argument, malformed value). The
/// dispatcher prints "bristle NAME: <what()>", the usage line, and exits with code 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Every command, in the order `bristle help` lists them.
const std::vector<Command>& command_table();

/// The command called `name`, or nullptr.
const Command* find_command(const std::string& name);

/// Runs `bristle ARGS...` (args without the program name) and returns the exit code.
int run_cli(const std::vector<std::string>& args, CommandContext& context);

/// "bristle 0.1.0".
std::string version_text();

// The built-in commands (src/cli/<name>_command.cpp).
Command make_run_command();
Command make_validate_command();
Command make_compare_command();

}  // namespace bristle::cli

/// The command table and the dispatcher (include/bristle/cli/command.hpp).

#include <algorithm>
#include <exception>
#include <ostream>

#include "bristle/cli/command.hpp"
#include "bristle/io/output_error.hpp"
#include "bristle/scene/scene_error.hpp"

namespace bristle::cli {

// Commands other engineers add in their own files: src/cli/sources.cmake defines
// BRISTLE_CLI_HAS_<NAME> when src/cli/<name>_command.cpp exists.
#ifdef BRISTLE_CLI_HAS_CHECK_CONTACT
Command make_check_contact_command();
#endif
#ifdef BRISTLE_CLI_HAS_MODES
Command make_modes_command();
#endif
#ifdef BRISTLE_CLI_HAS_RENDER
Command make_render_command();
#endif
#ifdef BRISTLE_CLI_HAS_EXPORT
Command make_export_command();
#endif
#ifdef BRISTLE_CLI_HAS_BATCH
Command make_batch_command();
#endif
#ifdef BRISTLE_CLI_HAS_VERIFY
Command make_verify_command();
#endif
#ifdef BRISTLE_CLI_HAS_BENCH
Command make_bench_command();
#endif
#ifdef BRISTLE_CLI_HAS_SCHEMA
Command make_schema_command();
#endif

namespace {

const char* const kHelpUsage =
    "usage: bristle help [COMMAND]\n"
    "\n"
    "Without COMMAND, lists the commands; with it, prints that command's help\n"
    "(the same as `bristle COMMAND --help`).\n"
    "\n"
    "exit codes: 0 help printed, 2 unknown command\n";

std::vector<Command> build_table() {
  std::vector<Command> table;
  table.push_back(make_run_command());
  table.push_back(make_validate_command());
  table.push_back(make_compare_command());
#ifdef BRISTLE_CLI_HAS_CHECK_CONTACT
  table.push_back(make_check_contact_command());
#endif
#ifdef BRISTLE_CLI_HAS_MODES
  table.push_back(make_modes_command());
#endif
#ifdef BRISTLE_CLI_HAS_RENDER
  table.push_back(make_render_command());
#endif
#ifdef BRISTLE_CLI_HAS_EXPORT
  table.push_back(make_export_command());
#endif
#ifdef BRISTLE_CLI_HAS_BATCH
  table.push_back(make_batch_command());
#endif
#ifdef BRISTLE_CLI_HAS_VERIFY
  table.push_back(make_verify_command());
#endif
#ifdef BRISTLE_CLI_HAS_BENCH
  table.push_back(make_bench_command());
#endif
#ifdef BRISTLE_CLI_HAS_SCHEMA
  table.push_back(make_schema_command());
#endif
  // `help` lists the table, so it is added last and reads the table through command_table().
  Command help;
  help.name = "help";
  help.summary = "list the commands, or show one command's help";
  help.usage = kHelpUsage;
  help.run = [](const std::vector<std::string>& args, CommandContext& context) -> int {
    if (args.size() > 1) throw UsageError("unexpected argument '" + args[1] + "'");
    if (args.empty()) {
      context.out << "usage: bristle COMMAND [ARGS...]\n\nBristle simulates discrete elastic rods.\n\ncommands:\n";
      // Summaries in one column, two spaces after the longest name (at least 10 wide).
      std::size_t width = 10;
      for (const Command& command : command_table()) width = std::max(width, command.name.size() + 2);
      for (const Command& command : command_table())
        context.out << "  " << command.name << std::string(width - command.name.size(), ' ') << command.summary << "\n";
      context.out << "\n  --version  print the version\n\n"
                     "Run 'bristle help COMMAND' or 'bristle COMMAND --help' for a command's options.\n"
                     "exit codes: 0 success, 1 ran but failed or differs, 2 bad usage or bad input\n";
      return kExitSuccess;
    }
    const Command* command = find_command(args[0]);
    if (!command) throw UsageError("unknown command '" + args[0] + "'");
    context.out << command->usage;
    return kExitSuccess;
  };
  table.push_back(std::move(help));
  return table;
}

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

bool asks_for_help(const std::vector<std::string>& args) {
  for (const std::string& arg : args) {
    if (arg == "--") return false;
    if (arg == "--help" || arg == "-h") return true;
  }
  return false;
}

}  // namespace

const std::vector<Command>& command_table() {
  static const std::vector<Command> table = build_table();
  return table;
}

const Command* find_command(const std::string& name) {
  for (const Command& command : command_table())
    if (command.name == name) return &command;
  return nullptr;
}

std::string version_text() { return std::string("bristle ") + BRISTLE_VERSION; }

int run_cli(const std::vector<std::string>& args, CommandContext& context) {
  if (args.empty()) {
    context.err << "bristle: missing command\nusage: bristle COMMAND [ARGS...]\n"
                   "Run 'bristle help' for the list of commands.\n";
    return kExitUsage;
  }
  const std::string& name = args[0];
  if (name == "--version" || name == "-V") {
    if (args.size() > 1) {
      context.err << "bristle: unexpected argument '" << args[1] << "' after --version\n";
      return kExitUsage;
    }
    context.out << version_text() << "\n";
    return kExitSuccess;
  }
  if (name == "--help" || name == "-h") return run_cli({"help"}, context);

  const Command* command = find_command(name);
  if (!command) {
    context.err << "bristle: unknown command '" << name << "'\n"
                << "Run 'bristle help' for the list of commands.\n";
    return kExitUsage;
  }
  const std::vector<std::string> rest(args.begin() + 1, args.end());
  if (asks_for_help(rest)) {
    context.out << command->usage;
    return kExitSuccess;
  }
  try {
    return command->run(rest, context);
  } catch (const UsageError& error) {
    context.err << "bristle " << name << ": " << error.what() << "\n"
                << first_line(command->usage) << "\n"
                << "Run 'bristle help " << name << "' for details.\n";
    return kExitUsage;
  } catch (const SceneError& error) {
    context.err << "error: " << error.what() << "\n";
    return kExitUsage;
  } catch (const OutputError& error) {
    context.err << "error: " << error.what() << "\n";
    return kExitUsage;
  } catch (const std::exception& error) {
    context.err << "bristle " << name << ": internal error: " << error.what() << "\n";
    return kExitFailure;
  }
}

}  // namespace bristle::cli

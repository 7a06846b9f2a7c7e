// The `bristle` executable: everything lives in the library (src/cli/commands.cpp).
#include <unistd.h>

#include <iostream>
#include <string>
#include <vector>

#include "bristle/cli/command.hpp"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  bristle::cli::CommandContext context{std::cout, std::cerr, isatty(STDERR_FILENO) == 1};
  const int code = bristle::cli::run_cli(args, context);
  std::cout.flush();
  return code;
}

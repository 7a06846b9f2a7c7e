list(APPEND BRISTLE_SOURCES
  src/cli/args.cpp
  src/cli/commands.cpp
  src/cli/interrupt.cpp
  src/cli/progress.cpp
  src/cli/scene_summary.cpp
  src/cli/run_command.cpp
  src/cli/validate_command.cpp
  src/cli/compare_command.cpp)

# Commands added in their own files: when src/cli/<name>_command.cpp exists it is compiled and
# commands.cpp, seeing BRISTLE_CLI_HAS_<NAME>, lists make_<name>_command() in the table.
# A new name needs one line here and one in commands.cpp (docs/cli.md, "Adding a command").
set(BRISTLE_CLI_OPTIONAL_COMMANDS modes render export batch verify bench)
set(_bristle_cli_definitions)
foreach(_command IN LISTS BRISTLE_CLI_OPTIONAL_COMMANDS)
  if(EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/src/cli/${_command}_command.cpp)
    list(APPEND BRISTLE_SOURCES src/cli/${_command}_command.cpp)
    string(TOUPPER ${_command} _upper)
    list(APPEND _bristle_cli_definitions BRISTLE_CLI_HAS_${_upper})
  endif()
endforeach()
set_source_files_properties(src/cli/commands.cpp PROPERTIES COMPILE_DEFINITIONS "${_bristle_cli_definitions}")

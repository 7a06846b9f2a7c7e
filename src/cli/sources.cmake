list(APPEND BRISTLE_SOURCES
  src/cli/args.cpp
  src/cli/frames_option.cpp
  src/cli/commands.cpp
  src/cli/interrupt.cpp
  src/cli/progress.cpp
  src/cli/scene_summary.cpp
  src/cli/overlap_report.cpp
  src/cli/run_command.cpp
  src/cli/validate_command.cpp
  src/cli/compare_command.cpp)

# Commands added in their own files: when src/cli/<name>_command.cpp exists it is compiled and
# commands.cpp, seeing BRISTLE_CLI_HAS_<NAME>, lists make_<name>_command() in the table.
# A new name needs one line here and one in commands.cpp (docs/cli.md, "Adding a command").
set(BRISTLE_CLI_OPTIONAL_COMMANDS check_contact modes render export batch verify bench schema)
set(_bristle_cli_definitions)
foreach(_command IN LISTS BRISTLE_CLI_OPTIONAL_COMMANDS)
  if(EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/src/cli/${_command}_command.cpp)
    list(APPEND BRISTLE_SOURCES src/cli/${_command}_command.cpp)
    string(TOUPPER ${_command} _upper)
    list(APPEND _bristle_cli_definitions BRISTLE_CLI_HAS_${_upper})
  endif()
endforeach()
set_source_files_properties(src/cli/commands.cpp PROPERTIES COMPILE_DEFINITIONS "${_bristle_cli_definitions}")

# `bristle schema` prints scenes/bristle-scene.schema.json exactly as shipped: the file's bytes
# are written into a generated header at configure time, and a change to the file re-runs
# CMake. configure_file rewrites the header only when the bytes change.
if(EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/src/cli/schema_command.cpp)
  set(_schema_file ${CMAKE_CURRENT_SOURCE_DIR}/scenes/bristle-scene.schema.json)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${_schema_file})
  file(READ ${_schema_file} _schema_hex HEX)
  string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," BRISTLE_SCENE_SCHEMA_BYTES "${_schema_hex}")
  configure_file(${CMAKE_CURRENT_SOURCE_DIR}/src/cli/scene_schema_bytes.hpp.in
                 ${CMAKE_CURRENT_BINARY_DIR}/generated/cli/scene_schema_bytes.hpp @ONLY)
  set_source_files_properties(src/cli/schema_command.cpp PROPERTIES
                              INCLUDE_DIRECTORIES ${CMAKE_CURRENT_BINARY_DIR}/generated/cli)
endif()

list(APPEND BRISTLE_TEST_SOURCES
  cli/test_args.cpp
  cli/test_commands.cpp
  cli/test_interrupt.cpp
  cli/test_interrupted_run.cpp
  cli/test_schema_command.cpp)

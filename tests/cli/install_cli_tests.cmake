# Installation, man page, bash completion and the batch recipes of docs/batch.md (included by
# tests/cli/cli_tests.cmake; `ctest -R cli_install` selects them).

# cmake --install into a prefix under the build tree; the installed bristle must run.
add_test(NAME cli_install_prefix
         COMMAND ${CMAKE_COMMAND} -DBUILD=${PROJECT_BINARY_DIR} -DPREFIX=${_cli_work}/install/prefix
                 -DSOURCE=${PROJECT_SOURCE_DIR} -P ${_cli_dir}/expect_install.cmake)
set_tests_properties(cli_install_prefix PROPERTIES FAIL_REGULAR_EXPRESSION "CHECK FAILED")

# The man page the build wrote beside bristle (tools/man-page.sh): every command and option.
add_test(NAME cli_install_man_page
         COMMAND bash ${_cli_dir}/check_man_page.sh $<TARGET_FILE:bristle> ${PROJECT_BINARY_DIR}/bristle.1)
set_tests_properties(cli_install_man_page PROPERTIES FAIL_REGULAR_EXPRESSION "CHECK FAILED")

add_test(NAME cli_install_bash_completion
         COMMAND bash ${_cli_dir}/check_completion.sh $<TARGET_FILE:bristle>
                 ${PROJECT_SOURCE_DIR}/tools/bristle-completion.bash ${_cli_work}/install/completion)
set_tests_properties(cli_install_bash_completion PROPERTIES FAIL_REGULAR_EXPRESSION "CHECK FAILED")

# docs/batch.md's GNU parallel and Slurm recipes, read from the page and run with this build's
# bristle on the PATH, on two scenes of a few tenths of a second.
add_test(NAME cli_install_batch_recipes
         COMMAND bash ${_cli_dir}/check_batch_recipes.sh $<TARGET_FILE_DIR:bristle> ${PROJECT_SOURCE_DIR}/docs/batch.md
                 ${_scenes}/rod_3d_straight.json ${_scenes}/curl_2d.json ${_cli_work}/install/recipes)
set_tests_properties(cli_install_batch_recipes PROPERTIES FAIL_REGULAR_EXPRESSION "CHECK FAILED")

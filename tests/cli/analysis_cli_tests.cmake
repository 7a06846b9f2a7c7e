# Command-line tests of the analysis features: `bristle modes` and static scenes in `bristle run`
# (docs/analysis.md). Included by cli_tests.cmake, after bristle_cli_exit_test is defined.
set(_analysis ${CMAKE_CURRENT_SOURCE_DIR}/cli/analysis)
set(_analysis_work ${_cli_work}/analysis)

# bristle_cli_number_test(NAME "ARG|ARG|..." "KEY|INDEX|..." LOW HIGH [extra -D definitions...])
# Runs bristle (exit 0 expected) and checks LOW <= the JSON value <= HIGH (expect_json_number.cmake).
function(bristle_cli_number_test name arguments json_path low high)
  add_test(NAME cli_number_${name}
           COMMAND ${CMAKE_COMMAND} -DBRISTLE=$<TARGET_FILE:bristle> "-DARGS=${arguments}" "-DJSON_PATH=${json_path}"
                   -DLOW=${low} -DHIGH=${high} ${ARGN} -P ${_cli_dir}/expect_json_number.cmake)
  set_tests_properties(cli_number_${name} PROPERTIES FAIL_REGULAR_EXPRESSION "CHECK FAILED")
endfunction()

# --- bristle modes ----------------------------------------------------------------------------
# cantilever_2d.json: 40 edges clamped by vertices 0 and 1, the clamp (first edge's midpoint) at
# the origin, so L = (40 - 1/2) h = 1 m; r = 1 mm, E = 1 GPa, density 2.54842 kg/m^3 (Gamma = 0.1).
# f_n = (beta_n L)^2 / (2 pi L^2) sqrt(E I / (rho A)): 5.542496 Hz (beta_1 L = 1.87510),
# 34.73423 Hz (4.69409), 97.25685 Hz (7.85476). At 40 edges the discrete rod is within 0.01%,
# 0.12% and 0.33% of them; the bands are +-0.1% for mode 1 and +-0.5% for modes 2 and 3.
set(_modes_args "modes|${_analysis}/cantilever_2d.json|--count|3|--json")
bristle_cli_number_test(modes_json_mode1 "${_modes_args}" "frequencies_hz|0" 5.536954 5.548038
                        "-DSTDERR_MATCHES=not an equilibrium")
bristle_cli_number_test(modes_json_mode2 "${_modes_args}" "frequencies_hz|1" 34.56056 34.90790)
bristle_cli_number_test(modes_json_mode3 "${_modes_args}" "frequencies_hz|2" 96.77057 97.74313)
# About the sagged equilibrium (Gamma = 0.1) the first frequency moves by less than 0.1%.
bristle_cli_number_test(modes_json_at_equilibrium
                        "modes|${_analysis}/cantilever_2d.json|--count|1|--json|--at|equilibrium"
                        "frequencies_hz|0" 5.536954 5.548038)
bristle_cli_exit_test(modes_equilibrium_flag 0 "modes|${_analysis}/cantilever_2d.json|--count|1|--json|--at|equilibrium"
                      "-DSTDOUT_MATCHES=\"is_equilibrium\":true")
bristle_cli_exit_test(modes_json_key_first 0 "modes|${_analysis}/cantilever_2d.json|--count|2|--json"
                      "-DSTDOUT_MATCHES=^\\{\"frequencies_hz\":\\[")
bristle_cli_exit_test(modes_plain 0 "modes|${_analysis}/cantilever_2d.json|--count|2"
                      "-DSTDOUT_MATCHES=linearised about: the initial configuration.*mode  frequency \\(Hz\\)"
                      "-DSTDERR_MATCHES=warning: .*not an equilibrium")
bristle_cli_exit_test(modes_help 0 "modes|--help" "-DSTDOUT_MATCHES=--at POINT")
bristle_cli_exit_test(modes_missing_scene 2 "modes")
bristle_cli_exit_test(modes_unreadable_scene 2 "modes|${_cli_work}/no-such-scene.json"
                      "-DSTDERR_MATCHES=cannot open the scene file")
bristle_cli_exit_test(modes_malformed_scene 2 "modes|${_cli_dir}/malformed/10_density_negative.json"
                      "-DSTDERR_MATCHES=/materials/nylon/density")
bristle_cli_exit_test(modes_bad_count 2 "modes|${_analysis}/cantilever_2d.json|--count|0"
                      "-DSTDERR_MATCHES=--count expects an integer in")
bristle_cli_exit_test(modes_bad_at 2 "modes|${_analysis}/cantilever_2d.json|--at|rest"
                      "-DSTDERR_MATCHES=--at expects")
bristle_cli_exit_test(modes_amplitude_without_shapes 2 "modes|${_analysis}/cantilever_2d.json|--amplitude|0.2"
                      "-DSTDERR_MATCHES=--amplitude needs --shapes")
bristle_cli_exit_test(modes_shapes_nonempty 2
                      "modes|${_analysis}/cantilever_2d.json|--shapes|${_analysis_work}/busy"
                      "-DSETUP_NONEMPTY=${_analysis_work}/busy" "-DSTDERR_MATCHES=--force")
# No equilibrium to linearise about (a free rod under gravity): the work fails, exit 1.
bristle_cli_exit_test(modes_no_equilibrium 1 "modes|${_analysis}/free_rod_static_2d.json|--at|equilibrium"
                      "-DSTDERR_MATCHES=no fixed vertex")

# column_2d.json: a straight column clamped at its base, 16 edges, Gamma = 10 > 7.8373. Its
# straight equilibrium is a saddle: about it the lowest "frequency" is negative.
bristle_cli_number_test(modes_unstable_column
                        "modes|${_analysis}/column_2d.json|--count|2|--json|--at|equilibrium"
                        "frequencies_hz|0" -10.0 -0.001 "-DSTDERR_MATCHES=unstable: 1 negative eigenvalue")

# --shapes: frame k is mode k, its largest displacement --amplitude (0.2) times the rod length
# (1.0127 m: the generator runs from -h/2 to L); the folder reads back (compare with itself).
set(_shapes ${_analysis_work}/shapes)
bristle_cli_number_test(modes_shapes_written
                        "modes|${_analysis}/cantilever_2d.json|--count|3|--shapes|${_shapes}|--amplitude|0.2|--force"
                        "stats|max_displacement" 0.2025316 0.2025317
                        "-DJSON_FILE=${_shapes}/frames/000002.json")
set_tests_properties(cli_number_modes_shapes_written PROPERTIES FIXTURES_SETUP modes_shapes)
bristle_cli_exit_test(modes_shapes_readable 0 "compare|${_shapes}|${_shapes}" "-DSTDOUT_MATCHES=^same")
set_tests_properties(cli_exit_modes_shapes_readable PROPERTIES FIXTURES_REQUIRED modes_shapes)

# --- static scenes in bristle run -------------------------------------------------------------
# cantilever_static_2d.json is cantilever_2d.json in static mode: Gamma = 0.1, so the tip
# deflection is w L^4 / (8 E I) = Gamma / 8 L = 0.0125 m to first order (the elastica's
# nonlinear correction is below 1e-5 here); band +-0.5%.
set(_static ${_analysis_work}/static)
bristle_cli_number_test(run_static_tip
                        "run|${_analysis}/cantilever_static_2d.json|-o|${_static}|--force"
                        "rods|0|positions|40|1" -0.0125625 -0.0124375
                        "-DJSON_FILE=${_static}/frames/000001.json" "-DCLEAN=${_static}")
bristle_cli_exit_test(run_static_summary 0
                      "run|${_analysis}/cantilever_static_2d.json|-o|${_analysis_work}/static_summary|--force"
                      "-DSTDOUT_MATCHES=static equilibrium: [0-9]+ Newton iterations.*stable")
bristle_cli_exit_test(run_static_fails 1 "run|${_analysis}/free_rod_static_2d.json|-o|${_analysis_work}/static_failed|--force"
                      "-DSTDERR_MATCHES=static solve: rod 'rod' has no fixed vertex")
# A static run of the same column, started perfectly straight, ends bent over (it is pushed off
# the saddle along its unstable mode): the tip (vertex 16) moves more than 0.2 L sideways.
set(_column ${_analysis_work}/column)
bristle_cli_number_test(run_static_column_buckles
                        "run|${_analysis}/column_2d.json|-o|${_column}|--force"
                        "rods|0|positions|16|0" 0.2 1.0
                        "-DJSON_FILE=${_column}/frames/000001.json" "-DCLEAN=${_column}")
# A static solve whose linear systems CG cannot solve (stiffnesses of 1e-30 and 1e299 N/m in one
# scene, fuzz seed 2026120216) stops at the solve's CG budget, in under a second, instead of
# running 1000 Newton iterations of five failed 2000-iteration CG solves each (28 s).
bristle_cli_exit_test(run_static_cg_budget 1
                      "run|${PROJECT_SOURCE_DIR}/tests/fuzz/regressions/scenes/static_cg_fails_at_every_regularisation.json|-o|${_analysis_work}/static_cg_budget|--force"
                      "-DSTDERR_MATCHES=static solve: no convergence after [0-9]+ Newton iterations .the linear solves. work budget of the whole solve.")

# A scene with a rod with twist writes format bristle-frames/2 with material directors, and
# every reader uses them: compare finds a turned director, export --format usd writes normals,
# render draws the stripe. docs/output-format.md ("directors"), docs/export.md, docs/rendering.md.
#   cmake -DBRISTLE=... -DJSON=<run of tests/cli/twist/twisted_helix.json> -DWORK=<scratch>
#         -P expect_twist_frames.cmake
file(REMOVE_RECURSE "${WORK}")

function(run_bristle expected)
  execute_process(COMMAND "${BRISTLE}" ${ARGN} RESULT_VARIABLE code OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr)
  message("$ bristle ${ARGN}\nexit ${code}\nstdout:\n${stdout}\nstderr:\n${stderr}")
  if(NOT code STREQUAL "${expected}")
    message(FATAL_ERROR "CHECK FAILED: exit ${code}, expected ${expected}")
  endif()
  set(stdout "${stdout}" PARENT_SCOPE)
endfunction()

file(READ "${JSON}/manifest.json" manifest)
if(NOT manifest MATCHES "\"format\": \"bristle-frames/2\"" OR NOT manifest MATCHES "\"twist\": true")
  message(FATAL_ERROR "CHECK FAILED: the manifest of a scene with twist is not bristle-frames/2 with \"twist\": true")
endif()
file(READ "${JSON}/frames/000002.json" frame)
string(JSON directors ERROR_VARIABLE missing GET "${frame}" rods 0 directors)
string(JSON plain ERROR_VARIABLE plain_missing GET "${frame}" rods 1 directors)
if(missing OR NOT plain_missing)
  message(FATAL_ERROR "CHECK FAILED: rod 0 (twist) must carry directors, rod 1 (no twist) none: ${missing}")
endif()
string(JSON edge_count LENGTH "${frame}" rods 0 directors)
if(NOT edge_count EQUAL 30)
  message(FATAL_ERROR "CHECK FAILED: ${edge_count} directors for 30 edges")
endif()

# compare: the same folder is the same, with directors compared; a director turned by 1e-3 rad
# about y (0.000987 rad between the two, since it is not perpendicular to y) is a difference
# the angle tolerance catches.
run_bristle(0 compare "${JSON}" "${JSON}" --json)
if(NOT stdout MATCHES "\"directors_compared\": 150" OR NOT stdout MATCHES "\"largest_director\"")
  message(FATAL_ERROR "CHECK FAILED: compare did not compare 5 x 30 directors")
endif()
file(COPY "${JSON}/" DESTINATION "${WORK}/turned")
string(JSON d0 GET "${frame}" rods 0 directors 7 0)
string(JSON d1 GET "${frame}" rods 0 directors 7 1)
string(JSON d2 GET "${frame}" rods 0 directors 7 2)
# Turn it about the y axis by 1e-3 rad: (x cos + z sin, y, -x sin + z cos), still unit.
execute_process(COMMAND python3 -c "import math,sys; a=1e-3; x,y,z=map(float,sys.argv[1:]); print(repr(x*math.cos(a)+z*math.sin(a)), repr(y), repr(-x*math.sin(a)+z*math.cos(a)))" ${d0} ${d1} ${d2}
                OUTPUT_VARIABLE turned OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE python_code)
if(NOT python_code STREQUAL "0")
  message(FATAL_ERROR "CHECK FAILED: python3 is needed to turn a director")
endif()
separate_arguments(turned)
list(GET turned 0 t0)
list(GET turned 1 t1)
list(GET turned 2 t2)
string(JSON frame SET "${frame}" rods 0 directors 7 "[${t0}, ${t1}, ${t2}]")
file(WRITE "${WORK}/turned/frames/000002.json" "${frame}")
run_bristle(1 compare "${JSON}" "${WORK}/turned")
if(NOT stdout MATCHES "first difference beyond tolerance: frame 2, rod \"curl\" \\(index 0\\), edge 7, director"
   OR NOT stdout MATCHES "largest director difference: frame 2, rod \"curl\" \\(index 0\\), edge 7, director: A = [^\n]*angle = 0\\.000987[0-9]* rad")
  message(FATAL_ERROR "CHECK FAILED: compare did not report the turned director")
endif()
run_bristle(0 compare "${JSON}" "${WORK}/turned" --director-tol 0.002)
run_bristle(2 compare "${JSON}" "${WORK}/turned" --director-tol -1)

# export --format usd: normals for the curves.
set(usda_file "${WORK}/twisted_helix.usda")
run_bristle(0 export "${JSON}" --format usd -o "${usda_file}" --quiet)
file(READ "${usda_file}" text)
if(NOT text MATCHES "normal3f\\[\\] normals \\(\n            interpolation = \"vertex\"" OR
   NOT text MATCHES "normal3f\\[\\] normals.timeSamples = {\n            0: \\[\\(")
  message(FATAL_ERROR "CHECK FAILED: ${usda_file} has no per-vertex normals")
endif()

# render: the picture with directors differs from the one of the same frames without them.
run_bristle(0 render "${JSON}" -o "${WORK}/images" --width 96 --height 64 --frames 2 --quiet)
file(COPY "${JSON}/" DESTINATION "${WORK}/untwisted")
file(READ "${WORK}/untwisted/manifest.json" manifest)
string(REPLACE "\"format\": \"bristle-frames/2\"" "\"format\": \"bristle-frames/1\"" manifest "${manifest}")
string(REGEX REPLACE ",\n   \"twist\": true" "" manifest "${manifest}")
file(WRITE "${WORK}/untwisted/manifest.json" "${manifest}")
run_bristle(0 render "${WORK}/untwisted" -o "${WORK}/images_untwisted" --width 96 --height 64 --frames 2 --quiet)
file(GLOB a "${WORK}/images/*.png")
file(GLOB b "${WORK}/images_untwisted/*.png")
file(SHA256 "${a}" ha)
file(SHA256 "${b}" hb)
if(ha STREQUAL hb)
  message(FATAL_ERROR "CHECK FAILED: the render of the twisted rod shows no stripe")
endif()
message("twist frames: directors written, compared, exported as USD normals and drawn")

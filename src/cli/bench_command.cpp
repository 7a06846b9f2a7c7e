/// bristle bench [--strands N] [--vertices V] [--dt S] [--duration S] [--threads T] ... [--json]
#include <cmath>
#include <iomanip>
#include <ostream>
#include <sstream>

#include <filesystem>

#include "bristle/bench/brush_benchmark.hpp"
#include "bristle/bench/performance_report.hpp"
#include "bristle/bench/strand_benchmark.hpp"
#include "bristle/io/atomic_file.hpp"
#include "bristle/cli/args.hpp"
#include "bristle/scene/limits.hpp"
#include "bristle/cli/command.hpp"

namespace bristle::cli {

namespace {

// Counts of the benchmark's options (strands, vertices, Newton iterations, repeats): bounded so
// that a typo cannot allocate or run without end (docs/limits.md).
constexpr int kMaxBenchCount = 1'000'000;

const char* const kUsage =
    "usage: bristle bench [--strands N] [--vertices V] [--dt S] [--duration S] [--threads T]\n"
    "                     [--integrator backward_euler|bdf2] [--tolerance T] [--newton K]\n"
    "                     [--newton-tolerance T] [--linearization start|predicted]\n"
    "                     [--projection bending_modes|projected|gauss_newton] [--length-correction]\n"
    "                     [--line-search|--no-line-search] [--repeat R] [--no-accuracy] [--continuum] [--twist] [--json]\n"
    "       bristle bench --sweep [--docs PATH]\n"
    "       bristle bench --brush [--rows N] [--columns N] [--segments S] [--dt S] [--duration S]\n"
    "                     [--tilt A] [--threads T] [--speedup] [--no-rod-contact] [--all-rods] [--print-scene]\n"
    "                     [--iteration-log FILE] [--json]\n"
    "\n"
    "Steps N clamped hair strands of V vertices under gravity (L = 0.2 m, radius 50 um,\n"
    "E = 3 GPa, density 1300 kg/m^3, clamped horizontally at the root) and prints what a step\n"
    "costs: microseconds per vertex-step (assembly, solve, other), CG iterations per step, the\n"
    "step's cost in units of one sparse matrix-vector product with its own system matrix (a\n"
    "ratio that does not depend on the machine's speed), peak resident memory, and the strands'\n"
    "tip error after the run against a reference run of the same strands (backward Euler\n"
    "converged to 1e-12, cg_tolerance 1e-12), relative to the strand length, with the largest\n"
    "energy gain of one step and the Newton iterations per step.\n"
    "\n"
    "The solver by default is a scene's default (converged backward Euler, docs/scene-format.md):\n"
    "the figures are what a user gets. The options choose the cheaper or other variants.\n"
    "\n"
    "options:\n"
    "  --strands N        number of strands (default 1000)\n"
    "  --vertices V       vertices per strand (default 50)\n"
    "  --dt S             time step [s] (default 1/240)\n"
    "  --duration S       simulated time [s] (default 0.25)\n"
    "  --threads T        threads (default 1); results are identical for every T\n"
    "  --integrator I     backward_euler (default) or bdf2\n"
    "  --tolerance T      the converged solver's tolerance, a fraction of the strand length (default\n"
    "                     1e-3, with bdf2 1e-5: the scene defaults)\n"
    "  --newton K         a fixed K Newton iterations per step instead of converging (K = 1: one\n"
    "                     Baraff-Witkin solve; at most K with --newton-tolerance)\n"
    "  --newton-tolerance T  stop a step's iterations once the correction is below T (default 0)\n"
    "  --linearization L  start (default): Baraff-Witkin's first solve at the step's start;\n"
    "                     predicted: Newton from the velocity extrapolated from the last two steps\n"
    "  --projection P     bending Hessian: bending_modes (default), projected or gauss_newton\n"
    "  --length-correction  with --newton: the length correction after the last solve\n"
    "  --no-length-correction  (kept for old scripts: the fixed-count solver has none by default)\n"
    "  --line-search, --no-line-search  line search on every solve (default on)\n"
    "  --repeat R         time R runs and report the fastest (default 1; with --sweep 5\n"
    "                     rounds, every size and thread count once per round)\n"
    "  --no-accuracy      skip the reference run\n"
    "  --continuum        also compare with the dt -> 0 motion (Richardson extrapolation of\n"
    "                     converged backward Euler at dt/8 and dt/16; slower)\n"
    "  --twist            strands with twist DOFs (discrete elastic rods: material-frame bending\n"
    "                     and twist, docs/physics.md)\n"
    "  --json             print one JSON object\n"
    "  --sweep            the performance report instead: 1 to 20000 strands at 1\n"
    "                     and 2 threads, and 1000 strands at dt = 1/60 s and 1/24 s (several minutes)\n"
    "  --docs PATH        with --sweep: write the report as Markdown to PATH (docs/performance.md)\n"
    "                     and its plot to images/performance_scaling.png beside it\n"
    "\n"
    "--brush: the rod-contact benchmark instead. A brush of rows x columns nylon bristles (default\n"
    "25 x 40 = 1000, 20 segments each, radius 0.1 mm, 0.5 mm apart, scenes/brush_stroke.json's)\n"
    "held vertical, pressed 8 mm straight down onto paper and dragged 4 cm (1.2 s at dt = 1/60 s;\n"
    "--tilt for a painter's angle, the stroke of scenes/brush_stroke.json), bristle-bristle\n"
    "contact on and every solver setting a scene's default. Prints microseconds per vertex-step,\n"
    "CG and Newton iterations, unconverged steps, the time and Newton iterations of the converged\n"
    "and the unconverged steps and of the attempts given up and split into halves, the time by\n"
    "stage (each attempt's first solve, the later Newton iterations over all bristles and over\n"
    "the bristles still moving, the checks of each step's straight motion, the commits), the most\n"
    "rod-contact pairs and paper contacts of a step, the smallest gap between bristles and the\n"
    "deepest vertex in the paper (fractions of the radius), the pairs of segments that passed\n"
    "through each other during a step, the largest edge strain, and a CRC-32 of the last\n"
    "positions.\n"
    "  --rows N, --columns N  the bristle grid (default 25 x 40)\n"
    "  --segments S       edges per bristle, at least 2 (default 20)\n"
    "  --dt S, --duration S  (default 1/60 s and 1.2 s)\n"
    "  --tilt A           hold the brush at a painter's angle: its axis A radians from the\n"
    "                     vertical (0 to 1.2; default 0, the vertical press), leaning back from the\n"
    "                     stroke so the bristles trail it; the handle lowers the lowest tip to 0.3 mm\n"
    "                     above the paper by 0.2 s, then 4 cos(A) mm lower (the height of 4 mm along\n"
    "                     the axis) by 0.4 s, drags 4 cm by 0.9 s and lifts by 1.15 s\n"
    "                     (docs/contact.md, \"A brush held at a painter's angle\")\n"
    "  --threads T        threads (default 1)\n"
    "  --speedup          with --threads T > 1: also run on one thread, print the speedup and\n"
    "                     whether the last positions are bitwise identical\n"
    "  --no-rod-contact   bristles pass through each other (the cost of contact, by difference)\n"
    "  --all-rods         every Newton iteration solves every bristle (by default those after a\n"
    "                     step's first two solve only those still moving; for comparison)\n"
    "  --iteration-log FILE  write FILE with one JSON object per line for each Newton iteration\n"
    "                     of the run, given-up attempts included: the attempt's end time and step\n"
    "                     (t, h), the iteration (0: the attempt's first solve), whether it solved\n"
    "                     only the bristles still moving and how many it solved, its correction and\n"
    "                     the tolerance it is tested against (fractions of the bristle length),\n"
    "                     whether CCD shortened it, the line search's step, whether the pairs'\n"
    "                     force estimates were consistent, the deepest vertex in the paper (in\n"
    "                     radii), and its wall time in seconds (the one field that varies from run\n"
    "                     to run; tools/iteration-cost.py sums it up); with --speedup, of the run\n"
    "                     on T threads\n"
    "  --print-scene      print the scene (bristle-scene/1 JSON) and run nothing\n"
    "  -h, --help         show this help\n"
    "\n"
    "exit codes: 0 the run completed, 1 a step failed, 2 bad usage\n";

double parse_time(const ParsedArgs& parsed, const std::string& name, double fallback) {
  const double value = parsed.number(name, fallback);
  if (!(value > 0.0)) throw UsageError(name + " expects a positive number of seconds");
  return value;
}

int positive(const ParsedArgs& parsed, const std::string& name, int fallback, int minimum,
             int maximum = kMaxBenchCount) {
  const int value = parsed.integer(name, fallback);
  if (value < minimum || value > maximum)
    throw UsageError(name + " expects an integer in [" + std::to_string(minimum) + ", " + std::to_string(maximum) + "]");
  return value;
}

std::string fixed(double value, int digits) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(digits) << value;
  return out.str();
}

/// The solver in words: the scheme and how each step is solved.
std::string solver_text(const SolverSettings& solver) {
  std::ostringstream out;
  out << (solver.scheme == TimeScheme::Bdf2 ? "BDF2" : "backward Euler") << ", ";
  if (solver.converged())
    out << "Newton converged to " << solver.tolerance << " of the strand length (the default)";
  else
    out << solver.newton_iterations << " Newton iteration(s) per step ("
        << (solver.linearization == Linearization::Predicted ? "predicted" : "start")
        << (solver.length_correction ? ", length correction" : "") << ")";
  return out.str();
}

void print_table(const StrandBenchmarkSettings& settings, const StrandBenchmarkResult& r, std::ostream& out) {
  out << "strands            " << settings.strands << " x " << settings.vertices_per_strand << " vertices = "
      << r.vertices << " vertices\n"
      << "steps              " << r.steps << " of dt = " << settings.dt << " s, " << solver_text(settings.solver)
      << ", " << r.threads << " thread(s)\n"
      << "us per vertex-step " << fixed(r.us_per_vertex_step, 3) << "  (assembly "
      << fixed(r.us_per_vertex_step_assembly, 3) << ", solve " << fixed(r.us_per_vertex_step_solve, 3) << ", other "
      << fixed(r.us_per_vertex_step_other, 3) << ")\n"
      << "vertex-steps/s     " << fixed(r.us_per_vertex_step > 0.0 ? 1e6 / r.us_per_vertex_step : 0.0, 0) << "\n"
      << "CG iterations/step median " << r.cg_iterations_median << ", max " << r.cg_iterations_max
      << " (Newton iterations/step " << fixed(r.newton_iterations_mean, 2) << ")\n"
      << "SpMV-equivalents   " << fixed(r.spmv_equivalents_per_step, 2) << " per step\n"
      << "peak memory        " << fixed(r.peak_rss_bytes / 1048576.0, 1) << " MiB ("
      << fixed(r.vertices > 0 ? static_cast<double>(r.peak_rss_bytes) / r.vertices : 0.0, 0)
      << " bytes per vertex, whole process)\n";
  if (r.tip_error_relative >= 0.0)
    out << "tip error          " << fixed(100.0 * r.tip_error_relative, 4)
        << " % of the strand length (against backward Euler converged to 1e-12)\n";
  if (r.tip_error_continuum >= 0.0)
    out << "continuum error    " << fixed(100.0 * r.tip_error_continuum, 4)
        << " % of the strand length (against the dt -> 0 motion)\n";
  out << "energy             " << r.energy_start << " J -> " << r.energy_end << " J";
  if (r.energy_rise_strands > 0)
    out << ", largest gain in one step " << r.max_energy_rise << " J on " << r.energy_rise_strands
        << " strand(s) (m g L of a strand: " << r.energy_scale << " J)";
  out << "\n";
  if (!r.ok) out << "FAILED: " << r.failure << "\n";
}

int sweep(const ParsedArgs& parsed, CommandContext& context) {
  PerformanceSweepSettings settings;
  settings.base.repeats = positive(parsed, "--repeat", 5, 1);
  const PerformanceReport report =
      run_performance_sweep(settings, [&](const std::string& what) { context.err << "bench: " << what << "...\n"; });
  const std::string plot_name = "images/performance_scaling.png";
  if (const auto docs = parsed.value("--docs")) {
    const std::filesystem::path page(*docs);
    const std::filesystem::path folder = page.parent_path().empty() ? std::filesystem::path(".") : page.parent_path();
    std::filesystem::create_directories(folder / "images");
    write_file_atomically((folder / plot_name).string(), performance_plot_png(report));
    write_file_atomically(page.string(), performance_markdown(report, plot_name));
    context.err << "bench: wrote " << page.string() << " and " << (folder / plot_name).string() << "\n";
  } else {
    context.out << performance_markdown(report, plot_name);
  }
  bool ok = true;
  for (const PerformanceRow& row : report.sizes) ok = ok && row.result.ok;
  for (const PerformanceRow& row : report.large_steps) ok = ok && row.result.ok;
  return ok ? kExitSuccess : kExitFailure;
}

void print_brush_table(const BrushBenchmarkSettings& settings, const BrushBenchmarkResult& r, std::ostream& out) {
  out << "brush              " << settings.rows << " x " << settings.columns << " bristles x " << settings.segments
      << " segments = " << r.vertices << " vertices, rod contact " << (settings.rod_contact ? "on" : "off") << ", "
      << (settings.tilt > 0.0 ? "held " + fixed(settings.tilt, 2) + " rad from the vertical" : std::string("held vertical"))
      << "\n"
      << "steps              " << r.steps_taken << " of " << r.steps << " of dt = " << settings.dt
      << " s, the default solver, " << r.threads << " thread(s), " << fixed(r.seconds, 2) << " s\n"
      << "us per vertex-step " << fixed(r.us_per_vertex_step, 3) << "  (assembly "
      << fixed(r.us_per_vertex_step_assembly, 3) << ", solve " << fixed(r.us_per_vertex_step_solve, 3) << ")\n"
      << "CG iterations      " << r.cg_iterations << " (" << fixed(r.cg_iterations / std::max(1.0, 1.0 * r.steps_taken), 1)
      << " per step, max " << r.cg_iterations_max << "); Newton iterations " << r.newton_iterations << " ("
      << r.partial_iterations << " on the bristles still moving); unconverged steps " << r.unconverged_steps << " (" << r.unconverged_rod_steps << " of "
      << static_cast<long long>(r.bristles) * r.steps_taken << " bristle-steps)\n"
      << "time by outcome    " << r.steps_taken - r.unconverged_steps << " converged steps " << fixed(r.converged_seconds, 2)
      << " s (" << r.converged_newton_iterations << " Newton), " << r.unconverged_steps << " unconverged "
      << fixed(r.unconverged_seconds, 2) << " s (" << r.unconverged_newton_iterations << "); of all, "
      << r.failed_attempts << " attempts given up and split " << fixed(r.failed_attempt_seconds, 2) << " s ("
      << r.failed_attempt_newton_iterations << ")\n"
      << "time by stage      " << r.stages.first_solves << " first solves " << fixed(r.stages.first_solve_seconds, 2)
      << " s; later iterations over all bristles " << fixed(r.stages.full_iteration_seconds, 2) << " s ("
      << r.newton_iterations - r.stages.first_solves - r.partial_iterations << "), over the moving ones "
      << fixed(r.stages.partial_iteration_seconds, 2) << " s (" << r.partial_iterations << "); straight-path checks "
      << fixed(r.stages.path_check_seconds, 2) << " s; commits " << fixed(r.stages.commit_seconds, 2) << " s\n"
      << "paper's solves     " << r.contact_solves << " linear solves of the collider contact's active set ("
      << fixed(r.contact_solves / std::max(1.0, 1.0 * r.newton_iterations), 1) << " per Newton iteration), "
      << fixed(r.contact_rod_solves / std::max(1.0, 1.0 * r.contact_solves), 1) << " bristles solved per solve\n"
      << "contacts           at most " << r.rod_contact_pairs_max << " bristle pairs and " << r.collider_contacts_max
      << " vertices on the paper in one step\n"
      << "smallest gap       ";
  if (std::isfinite(r.min_gap_fraction))
    out << r.min_gap_fraction << " of the radius between bristles\n";
  else
    out << "none measured (no two bristles near each other" << (settings.rod_contact ? "" : ", or contact off") << ")\n";
  if (settings.rod_contact) out << "crossings          " << r.crossings << " pairs of segments passed through each other\n";
  out << "deepest in paper   " << r.max_depth_fraction << " of the radius\n"
      << "largest edge strain " << r.max_edge_strain << "\n"
      << "peak memory        " << fixed(r.peak_rss_bytes / 1048576.0, 1) << " MiB\n";
  std::ostringstream crc;
  crc << std::hex << std::setw(8) << std::setfill('0') << r.positions_crc;
  out << "positions CRC-32   " << crc.str() << "\n";
  if (!r.ok) out << "FAILED: " << r.failure << "\n";
}

int brush_bench(const ParsedArgs& parsed, CommandContext& context) {
  for (const char* option : {"--strands", "--vertices", "--newton", "--linearization", "--newton-tolerance",
                             "--projection", "--repeat", "--no-accuracy", "--no-length-correction", "--line-search",
                             "--no-line-search", "--length-correction", "--integrator", "--tolerance", "--continuum",
                             "--twist", "--sweep", "--docs"})
    if (parsed.has(option))
      throw UsageError(std::string(option) + " does not go with --brush (the brush uses the default solver)");
  BrushBenchmarkSettings settings;
  settings.rows = positive(parsed, "--rows", settings.rows, 1);
  settings.columns = positive(parsed, "--columns", settings.columns, 1);
  // Two fixed root vertices per bristle: one segment would leave nothing free to simulate.
  settings.segments = positive(parsed, "--segments", settings.segments, 2);
  if (static_cast<long long>(settings.rows) * settings.columns > kMaxBrushBristles)
    throw UsageError("--rows x --columns must be at most " + std::to_string(kMaxBrushBristles) + " bristles");
  if (static_cast<long long>(settings.rows) * settings.columns * (settings.segments + 1) > kMaxSceneVertices)
    throw UsageError("--rows x --columns x (--segments + 1) must be at most " + std::to_string(kMaxSceneVertices) +
                     " vertices");
  settings.dt = parse_time(parsed, "--dt", settings.dt);
  settings.duration = parse_time(parsed, "--duration", settings.duration);
  // A frame per step (the scene's frame_dt is dt): the frame limit is the tighter one.
  if (settings.duration / settings.dt > kMaxFrames - 1)
    throw UsageError("--duration / --dt must be at most " + std::to_string(static_cast<long long>(kMaxFrames - 1)) +
                     " steps");
  if (std::lround(settings.duration / settings.dt) < 1) throw UsageError("--duration must be at least one --dt");
  settings.threads = positive(parsed, "--threads", 1, 1, kMaxThreads);
  settings.rod_contact = !parsed.has("--no-rod-contact");
  settings.active_rods = !parsed.has("--all-rods");
  settings.tilt = parsed.number("--tilt", 0.0);
  if (!(settings.tilt >= 0.0 && settings.tilt <= kMaxBrushTilt))
    throw UsageError("--tilt expects an angle in [0, " + fixed(kMaxBrushTilt, 1) + "] radians");
  if (parsed.has("--speedup") && settings.threads < 2) throw UsageError("--speedup needs --threads 2 or more");
  if (parsed.has("--print-scene")) {
    context.out << brush_benchmark_scene(settings) << "\n";
    return kExitSuccess;
  }
  std::string iteration_log;
  const std::optional<std::string> iteration_log_path = parsed.value("--iteration-log");
  if (iteration_log_path) {
    if (iteration_log_path->empty()) throw UsageError("--iteration-log expects a file name");
    // Checked before the run, which may take minutes, rather than when the log is written.
    const std::filesystem::path log_path(*iteration_log_path);
    std::error_code error;
    if (std::filesystem::is_directory(log_path, error))
      throw UsageError("--iteration-log " + *iteration_log_path + " is a folder; give a file name");
    const std::filesystem::path folder = log_path.has_parent_path() ? log_path.parent_path() : ".";
    if (!std::filesystem::is_directory(folder, error))
      throw UsageError("--iteration-log: the folder " + folder.string() + " does not exist");
    settings.iteration_log = [&iteration_log](const IterationRecord& record) {
      iteration_log += iteration_record_json(record).dump() + "\n";
    };
  }
  const bool json = parsed.has("--json");
  if (!json)
    context.err << "bench: brush of " << settings.rows * settings.columns << " bristles x " << settings.segments
                << " segments, " << std::lround(settings.duration / settings.dt) << " steps...\n";
  const BrushBenchmarkResult result = run_brush_benchmark(settings);
  settings.iteration_log = nullptr;  // the one-thread run of --speedup is not logged
  // Written whole, whatever the run's outcome: the iterations up to a failed step are its record.
  if (iteration_log_path) write_file_atomically(*iteration_log_path, iteration_log);
  nlohmann::json report = result.to_json();
  report["tilt"] = settings.tilt;
  bool ok = result.ok;
  if (!json) print_brush_table(settings, result, context.out);
  if (parsed.has("--speedup")) {
    if (!json) context.err << "bench: the same on one thread...\n";
    BrushBenchmarkSettings one = settings;
    one.threads = 1;
    const BrushBenchmarkResult serial = run_brush_benchmark(one);
    const bool identical = serial.ok == result.ok && serial.steps_taken == result.steps_taken &&
                           serial.positions_crc == result.positions_crc;
    const double speedup = result.seconds > 0.0 ? serial.seconds / result.seconds : 0.0;
    ok = ok && serial.ok;
    if (json) {
      report["one_thread"] = serial.to_json();
      report["speedup"] = speedup;
      report["identical"] = identical;
    } else {
      context.out << "one thread         " << fixed(serial.us_per_vertex_step, 3) << " us per vertex-step; speedup "
                  << fixed(speedup, 2) << " on " << settings.threads << " threads; last positions "
                  << (identical ? "identical" : "DIFFERENT") << "\n";
    }
  }
  if (json) context.out << report.dump(2) << "\n";
  return ok ? kExitSuccess : kExitFailure;
}

int bench(const std::vector<std::string>& args, CommandContext& context) {
  const ParsedArgs parsed = parse_args(args, {{"--strands", "", true},
                                              {"--vertices", "", true},
                                              {"--dt", "", true},
                                              {"--duration", "", true},
                                              {"--threads", "", true},
                                              {"--newton", "", true},
                                              {"--linearization", "", true},
                                              {"--newton-tolerance", "", true},
                                              {"--projection", "", true},
                                              {"--repeat", "", true},
                                              {"--no-accuracy", "", false},
                                              {"--no-length-correction", "", false},
                                              {"--line-search", "", false},
                                              {"--no-line-search", "", false},
                                              {"--length-correction", "", false},
                                              {"--integrator", "", true},
                                              {"--tolerance", "", true},
                                              {"--continuum", "", false},
                                              {"--twist", "", false},
                                              {"--json", "", false},
                                              {"--sweep", "", false},
                                              {"--docs", "", true},
                                              {"--brush", "", false},
                                              {"--rows", "", true},
                                              {"--columns", "", true},
                                              {"--segments", "", true},
                                              {"--speedup", "", false},
                                              {"--no-rod-contact", "", false},
                                              {"--all-rods", "", false},
                                              {"--tilt", "", true},
                                              {"--print-scene", "", false},
                                              {"--iteration-log", "", true}});
  expect_positionals(parsed, {});
  if (parsed.has("--brush")) return brush_bench(parsed, context);
  for (const char* option : {"--rows", "--columns", "--segments", "--speedup", "--no-rod-contact", "--all-rods", "--print-scene",
                             "--tilt", "--iteration-log"})
    if (parsed.has(option)) throw UsageError(std::string(option) + " goes with --brush");
  if (parsed.has("--sweep")) return sweep(parsed, context);
  if (parsed.has("--docs")) throw UsageError("--docs goes with --sweep");
  StrandBenchmarkSettings settings;
  settings.strands = positive(parsed, "--strands", 1000, 1);
  settings.vertices_per_strand = positive(parsed, "--vertices", 50, 3);
  if (static_cast<long long>(settings.strands) * settings.vertices_per_strand > kMaxSceneVertices)
    throw UsageError("--strands x --vertices must be at most " + std::to_string(kMaxSceneVertices) + " vertices");
  settings.dt = parse_time(parsed, "--dt", 1.0 / 240.0);
  settings.duration = parse_time(parsed, "--duration", 0.25);
  if (settings.duration / settings.dt > kMaxSteps)
    throw UsageError("--duration / --dt must be at most " + std::to_string(static_cast<long long>(kMaxSteps)) + " steps");
  settings.threads = positive(parsed, "--threads", 1, 1, kMaxThreads);
  if (parsed.has("--newton")) settings.solver.newton_iterations = positive(parsed, "--newton", 1, 1, kMaxNewtonIterations);
  if (const auto scheme = parsed.value("--integrator")) {
    if (*scheme == "bdf2") {
      settings.solver.scheme = TimeScheme::Bdf2;
      settings.solver.tolerance = 1e-5;  // BDF2's scene default (docs/scene-format.md)
    }
    else if (*scheme == "backward_euler")
      settings.solver.scheme = TimeScheme::BackwardEuler;
    else
      throw UsageError("--integrator expects backward_euler or bdf2, found '" + *scheme + "'");
  }
  if (parsed.has("--tolerance")) {
    settings.solver.tolerance = parsed.number("--tolerance", settings.solver.tolerance);
    if (!(settings.solver.tolerance > 0.0)) throw UsageError("--tolerance expects a positive number");
  }
  if (parsed.has("--length-correction")) settings.solver.length_correction = true;
  if (const auto linearization = parsed.value("--linearization")) {
    if (*linearization == "predicted")
      settings.solver.linearization = Linearization::Predicted;
    else if (*linearization == "start")
      settings.solver.linearization = Linearization::Start;
    else
      throw UsageError("--linearization expects predicted or start, found '" + *linearization + "'");
  }
  settings.solver.threads = settings.threads;
  if (const auto projection = parsed.value("--projection")) {
    if (*projection == "projected")
      settings.solver.projection = HessianProjection::Projected;
    else if (*projection == "bending_modes")
      settings.solver.projection = HessianProjection::BendingModes;
    else if (*projection == "gauss_newton")
      settings.solver.projection = HessianProjection::GaussNewton;
    else
      throw UsageError("--projection expects bending_modes, projected or gauss_newton, found '" + *projection + "'");
  }
  settings.solver.newton_tolerance = parsed.number("--newton-tolerance", 0.0);
  if (settings.solver.newton_tolerance < 0.0) throw UsageError("--newton-tolerance expects a number >= 0");
  if (parsed.has("--no-length-correction")) settings.solver.length_correction = false;
  if (parsed.has("--line-search")) settings.solver.line_search = true;
  if (parsed.has("--no-line-search")) settings.solver.line_search = false;
  settings.measure_accuracy = !parsed.has("--no-accuracy");
  settings.continuum_reference = parsed.has("--continuum");
  settings.twist = parsed.has("--twist");
  if (settings.continuum_reference && !settings.measure_accuracy)
    throw UsageError("--continuum needs the accuracy runs (drop --no-accuracy)");
  settings.repeats = positive(parsed, "--repeat", 1, 1);
  if (!parsed.has("--json"))
    context.err << "bench: " << settings.strands << " strands x " << settings.vertices_per_strand << " vertices, "
                << std::lround(settings.duration / settings.dt) << " steps...\n";

  const StrandBenchmarkResult result = run_strand_benchmark(settings);
  if (parsed.has("--json"))
    context.out << result.to_json().dump(2) << "\n";
  else
    print_table(settings, result, context.out);
  return result.ok ? kExitSuccess : kExitFailure;
}

}  // namespace

Command make_bench_command() {
  return {"bench", "time the solver on N hair strands (or a pressed brush) and print the figures", kUsage, bench};
}

}  // namespace bristle::cli

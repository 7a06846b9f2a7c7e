/// bristle modes SCENE [--count K] [--json] [--at initial|equilibrium] [--shapes OUT]
///                     [--amplitude F] [--force] [--frames json|binary|compressed]
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <ostream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "bristle/analysis/modes.hpp"
#include "bristle/analysis/static_solver.hpp"
#include "bristle/cli/args.hpp"
#include "bristle/scene/limits.hpp"
#include "bristle/cli/command.hpp"
#include "bristle/cli/frames_option.hpp"
#include "bristle/io/frame_writer.hpp"
#include "bristle/runner/run_simulation.hpp"
#include "bristle/scene/load_scene.hpp"

namespace bristle::cli {

namespace {

const char* const kUsage =
    "usage: bristle modes SCENE [--count K] [--json] [--at initial|equilibrium]\n"
    "                           [--shapes OUT] [--amplitude F] [--force] [--frames F]\n"
    "\n"
    "Prints the K lowest natural frequencies (Hz) of SCENE's rods linearised about a\n"
    "configuration x*, fixed vertices held: the generalised eigenproblem K phi = omega^2 M phi,\n"
    "f = omega / (2 pi), with K the exact Hessian of the potential energy (stretch, bending,\n"
    "gravity, point loads in full) at x* and M the lumped mass; solved with Spectra\n"
    "(shift-invert, sparse). Damping and colliders are left out.\n"
    "\n"
    "The linearisation point x* (--at):\n"
    "  initial      (default) the scene's initial positions. Gravity and point loads are\n"
    "               linear in the positions, so they add nothing to K: when the initial state\n"
    "               is stress-free (rest shape = initial shape) these are the frequencies of the\n"
    "               rods without their loads. If x* is not an equilibrium (a cantilever under\n"
    "               gravity, say), the largest residual force is printed and a warning says so.\n"
    "  equilibrium  first solve the static equilibrium from the initial state, as a static\n"
    "               `bristle run` does but without pushing off a saddle, and linearise there:\n"
    "               K then carries the prestress of gravity and loads (a standing column\n"
    "               softens, a hanging one stiffens). If that equilibrium is unstable (a column\n"
    "               above its buckling load kept straight), its unstable modes are printed with\n"
    "               negative frequencies: -|omega| / (2 pi), |omega| their growth rate.\n"
    "\n"
    "options:\n"
    "  --count K       how many modes, 1 to 1000 (default 6; fewer if the rods have fewer\n"
    "                  free DOFs)\n"
    "  --json          print {\"frequencies_hz\": [...], ...} (more keys after it)\n"
    "  --at POINT      initial (default) or equilibrium, as above\n"
    "  --shapes OUT    also write the mode shapes as an output folder (docs/analysis.md):\n"
    "                  frame 0 = x*, frame k = x* + s_k phi_k for mode k, velocities zero,\n"
    "                  time = k; `bristle render OUT -o DIR` draws them\n"
    "  --amplitude F   s_k makes the largest vertex displacement F times the longest rod's\n"
    "                  length (default 0.1)\n"
    "  --force         reuse a non-empty OUT (its manifest.json and frames/ are removed first)\n"
    "  --frames F      json (default), binary or compressed: how the shapes' frames are\n"
    "                  stored (as `bristle run --frames`)\n"
    "  -h, --help      show this help\n"
    "\n"
    "exit codes: 0 done, 1 the eigensolver (or the static solve for --at equilibrium) failed,\n"
    "2 bad usage, invalid scene or unusable OUT\n";

constexpr double kDefaultAmplitude = 0.1;
constexpr int kDefaultCount = 6;

namespace fs = std::filesystem;

std::string number(double x, const char* format = "%.6g") {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), format, x);
  return buffer;
}

std::string where(const Model& model, int dof) {
  if (dof < 0) return "";
  const auto [rod, vertex] = model.layout.dof_owner(dof);
  return "rod '" + model.rods[rod].name + "' vertex " + std::to_string(vertex);
}

double longest_rod(const Model& model) {
  double longest = 0.0;
  for (const Rod& rod : model.rods) longest = std::max(longest, rod.rest_length());
  return longest;
}

/// Writes frame 0 = x*, frame k = x* + s_k phi_k (see the usage text).
void write_shapes(const Scene& scene, const State& point, const ModalResult& modes, double amplitude,
                  const std::string& at, const std::string& out, FramesChoice frames) {
  const Model& model = scene.model;
  Manifest manifest = make_manifest(scene);
  manifest.dt = 1.0;  // frame k is mode k: "time" counts modes, not seconds
  manifest.frame_dt = 1.0;
  manifest.frame_layout = frames.layout;
  FrameWriterOptions options;
  options.manifest_interval_seconds = 0.0;
  options.npz_compression = frames.compression;
  FrameWriter writer(out, manifest, options);

  State state = point;
  state.velocities.setZero();
  state.time = 0.0;
  Frame frame = make_frame(model, state, 0);
  frame.stats = {{"mode", 0}, {"linearisation", at}, {"max_residual_force", modes.max_force}};
  writer.write(frame);

  const double target = amplitude * longest_rod(model);
  const int D = model.dimension;
  for (std::size_t k = 0; k < modes.shapes.size(); ++k) {
    const VecX& phi = modes.shapes[k];
    double largest = 0.0;
    for (int v = 0; v < model.layout.vertex_count(); ++v)
      largest = std::max(largest, phi.segment(model.layout.vertex_dof(v), D).norm());
    // A twist DOF moves its rod's surface by angle x radius: a pure twist mode (its vertices
    // still to round-off) is scaled by that, not blown up by its vertices' round-off.
    for (int r = 0; r < static_cast<int>(model.rods.size()); ++r)
      for (int j = 0; j < model.rods[r].edge_count(); ++j)
        if (const int dof = model.layout.edge_dof(r, j); dof >= 0)
          largest = std::max(largest, std::abs(phi[dof]) * model.rods[r].material.radius);
    const double scale = largest > 0.0 && std::isfinite(target / largest) ? target / largest : 0.0;
    state.positions = point.positions + scale * phi;
    state.time = static_cast<double>(k + 1);
    frame = make_frame(model, state, static_cast<int>(k + 1));
    frame.stats = {{"mode", k + 1},
                   {"frequency_hz", modes.frequencies_hz[k]},
                   {"eigenvalue", modes.eigenvalues[k]},
                   {"scale", scale},
                   {"max_displacement", scale * largest}};
    writer.write(frame);
  }
  writer.finish("complete");
}

int modes(const std::vector<std::string>& args, CommandContext& context) {
  const ParsedArgs parsed = parse_args(args, {{"--count", "", true},
                                              {"--json", "", false},
                                              {"--at", "", true},
                                              {"--shapes", "", true},
                                              {"--amplitude", "", true},
                                              {"--force", "", false},
                                              {"--frames", "", true}});
  expect_positionals(parsed, {"SCENE"});
  const int count = parsed.integer("--count", kDefaultCount);
  if (count < 1 || count > kMaxModes)
    throw UsageError("--count expects an integer in [1, " + std::to_string(kMaxModes) + "]");
  const std::string at = parsed.value("--at").value_or("initial");
  if (at != "initial" && at != "equilibrium")
    throw UsageError("--at expects 'initial' or 'equilibrium', found '" + at + "'");
  const double amplitude = parsed.number("--amplitude", kDefaultAmplitude);
  if (!(amplitude > 0.0)) throw UsageError("--amplitude must be > 0");
  const auto shapes_out = parsed.value("--shapes");
  if (shapes_out && shapes_out->empty()) throw UsageError("--shapes needs a folder name");
  if (parsed.has("--amplitude") && !shapes_out) throw UsageError("--amplitude needs --shapes OUT");
  if (parsed.has("--force") && !shapes_out) throw UsageError("--force needs --shapes OUT");
  if (parsed.has("--frames") && !shapes_out) throw UsageError("--frames needs --shapes OUT");
  const FramesChoice frames = frames_option(parsed);
  const bool json = parsed.has("--json");

  // Validate everything before any work or any file.
  const Scene scene = load_scene(parsed.positionals[0]);
  for (const std::string& warning : scene.warnings) context.err << "warning: " << warning << "\n";
  if (shapes_out) {
    std::error_code error;
    if (fs::exists(*shapes_out, error) && !fs::is_directory(*shapes_out, error)) {
      context.err << "error: " << *shapes_out << ": exists and is not a folder\n";
      return kExitUsage;
    }
    if (!output_folder_is_empty(*shapes_out) && !parsed.has("--force")) {
      context.err << "error: " << *shapes_out << ": the output folder is not empty; pass --force to replace "
                  << "its frames (manifest.json and frames/ are removed, other files kept)\n";
      return kExitUsage;
    }
  }
  const Model& model = scene.model;

  State point = initial_state(model);
  StaticResult equilibrium;
  if (at == "equilibrium") {
    StaticSettings settings = static_run_settings();
    settings.saddle_escapes = 0;  // report the equilibrium reached from the initial state, saddle or not
    equilibrium = solve_static(model, point, settings);
    if (!equilibrium.ok) {
      context.err << "error: " << equilibrium.message << "\n";
      return kExitFailure;
    }
  }

  ModalSettings settings;
  settings.count = count;
  settings.want_shapes = shapes_out.has_value();
  settings.time = std::numeric_limits<double>::infinity();  // point loads in full
  const ModalResult result = modal_analysis(model, point, settings);
  if (!result.ok) {
    context.err << "error: " << result.message << "\n";
    return kExitFailure;
  }

  // Is x* an equilibrium? The static solver's force tolerance says what "is" means.
  const double tolerance = static_force_tolerance(model, point.positions);
  const bool is_equilibrium = result.max_force <= tolerance;
  const std::string point_text =
      at == "initial" ? "the initial configuration (the scene's positions)"
                      : "the static equilibrium (reached from the initial configuration in " +
                            std::to_string(equilibrium.iterations) + " Newton iteration" +
                            (equilibrium.iterations == 1 ? ")" : "s)");
  if (!is_equilibrium)
    context.err << "warning: " << point_text << " is not an equilibrium: residual force up to "
                << number(result.max_force, "%.3g") << " N (" << where(model, result.max_force_dof)
                << "; an equilibrium has at most " << number(tolerance, "%.3g") << " N).\n"
                << "  The frequencies are those of the exact Hessian there; gravity and point loads add "
                << "nothing to it (they are linear in the positions), so from a stress-free state they are "
                << "the unloaded rods' frequencies. Use --at equilibrium to linearise about the loaded "
                << "equilibrium instead.\n";
  if (result.unstable_count > 0)
    context.err << "warning: " << point_text << " is unstable: " << result.unstable_count
                << " negative eigenvalue(s) of K; those modes are printed with negative frequencies "
                << "(-growth rate / 2 pi)\n";
  if (!model.colliders.empty())
    context.err << "warning: colliders are not part of the linearisation (contact adds no stiffness here)\n";
  if (static_cast<int>(result.frequencies_hz.size()) < count)
    context.err << "note: the rods have only " << model.layout.free_dof_count() << " free DOFs: "
                << result.frequencies_hz.size() << " modes\n";

  if (shapes_out) {
    if (parsed.has("--force")) clear_output_folder(*shapes_out);
    write_shapes(scene, point, result, amplitude, at, *shapes_out, frames);
  }

  if (json) {
    nlohmann::ordered_json out;
    out["frequencies_hz"] = result.frequencies_hz;
    out["eigenvalues"] = result.eigenvalues;
    out["linearisation"] = at;
    out["max_residual_force"] = result.max_force;
    out["equilibrium_tolerance"] = tolerance;
    out["is_equilibrium"] = is_equilibrium;
    out["unstable_modes"] = result.unstable_count;
    out["free_dofs"] = model.layout.free_dof_count();
    out["method"] = result.method;
    if (shapes_out) out["shapes"] = *shapes_out;
    context.out << out.dump() << "\n";
    return kExitSuccess;
  }

  std::ostringstream text;
  text << "scene: " << scene.name << " (" << model.dimension << "D, " << model.rods.size() << " rod"
       << (model.rods.size() == 1 ? "" : "s") << ", " << model.layout.free_dof_count() << " free DOFs)\n";
  text << "linearised about: " << point_text << "\n";
  text << "  largest residual force there: " << number(result.max_force, "%.3g") << " N"
       << (result.max_force_dof >= 0 ? " (" + where(model, result.max_force_dof) + ")" : std::string())
       << (is_equilibrium ? ": an equilibrium" : ": NOT an equilibrium") << " (tolerance "
       << number(tolerance, "%.3g") << " N)\n";
  text << "method: " << result.method << "\n\n";
  text << "mode  frequency (Hz)\n";
  for (std::size_t k = 0; k < result.frequencies_hz.size(); ++k) {
    char line[64];
    std::snprintf(line, sizeof(line), "%4zu  %.9g\n", k + 1, result.frequencies_hz[k]);
    text << line;
  }
  if (shapes_out) text << "\nmode shapes written to " << *shapes_out << " (frame k = mode k)\n";
  context.out << text.str();
  return kExitSuccess;
}

}  // namespace

Command make_modes_command() {
  return {"modes", "natural frequencies and mode shapes of a scene", kUsage, modes};
}

}  // namespace bristle::cli

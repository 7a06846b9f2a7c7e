#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "bristle/analysis/elastica.hpp"
#include "bristle/io/output_reader.hpp"
#include "bristle/runner/run_simulation.hpp"
#include "bristle/scene/load_scene.hpp"
#include "io/temp_folder.hpp"
#include "test_paths.hpp"

namespace fs = std::filesystem;
using namespace bristle;

namespace {

Scene bundled(const std::string& name) { return load_scene(std::string(test::kScenesDir) + "/" + name + ".json"); }

std::string file_text(const fs::path& path) {
  std::ifstream stream(path, std::ios::binary);
  std::ostringstream text;
  text << stream.rdbuf();
  return text.str();
}

}  // namespace

TEST_CASE("runner writes frame 0 and one frame per frame_dt, with stats") {
  Scene scene = bundled("hanging_bristle");
  scene.time.duration = 0.2;  // 5 frames of 50 steps
  test::TempFolder folder("runner-frames");
  const std::string out = folder / "out";
  int frames_reported = 0;
  long long last_step = 0;
  const RunResult result = run_simulation(scene, out, {}, [&](const RunProgress& p) {
    if (p.frame_written) ++frames_reported;
    CHECK(p.step >= last_step);
    last_step = p.step;
    CHECK(p.frame_count == 5);
    CHECK(p.step_count == 200);
  });
  REQUIRE(result.ok());
  CHECK(result.status == "complete");
  CHECK(result.frames_written == 5);
  CHECK(result.steps_taken == 200);
  CHECK(frames_reported == 5);

  const OutputFolder read(out);
  CHECK(read.manifest().status == "complete");
  CHECK(read.manifest().frame_count == 5);
  CHECK(read.manifest().name == "hanging_bristle");
  CHECK(read.manifest().dt == scene.time.dt);
  CHECK(read.manifest().scene == scene.expanded);
  REQUIRE(read.manifest().rods.size() == 1);
  CHECK(read.manifest().rods[0].vertex_count == 21);
  CHECK(read.manifest().rods[0].radius == 1e-4);

  const Frame first = read.frame(0);
  CHECK(first.time == 0.0);
  CHECK(first.stats["steps"] == 0);
  CHECK(first.stats["energies"]["kinetic"] == 0.0);
  CHECK(first.rods[0].positions[20].x() == doctest::Approx(0.08));
  for (int k = 1; k < 5; ++k) {
    const Frame frame = read.frame(k);
    CHECK(frame.time == doctest::Approx(0.05 * k).epsilon(1e-14));
    const nlohmann::json& stats = frame.stats;
    CHECK(stats["steps"] == 50);
    CHECK(stats["cg_iterations"].get<int>() >= 50);
    CHECK(stats["cg_iterations_max"].get<int>() >= 1);
    CHECK(stats["newton_iterations"] == 50);
    CHECK(stats["cg_residual"].get<double>() <= scene.solver.cg_tolerance);
    for (const char* key : {"kinetic", "stretch", "bend", "elastic", "gravitational", "load", "potential", "total"})
      CHECK(stats["energies"].contains(key));
    // The bristle sags: its tip goes down.
    CHECK(frame.rods[0].positions[20].y() < 0.0);
  }
  // The root is clamped.
  CHECK(read.frame(4).rods[0].positions[0] == first.rods[0].positions[0]);
  CHECK(read.frame(4).rods[0].positions[1] == first.rods[0].positions[1]);
}

TEST_CASE("runner is deterministic: two runs write byte-identical files") {
  for (const char* name : {"curl_2d", "hanging_bristle"}) {
    CAPTURE(name);
    Scene scene = bundled(name);
    scene.time.duration = 0.3;
    test::TempFolder folder("runner-determinism");
    REQUIRE(run_simulation(scene, folder / "a").ok());
    REQUIRE(run_simulation(scene, folder / "b").ok());
    int files = 0;
    for (const auto& entry : fs::recursive_directory_iterator(folder.path() / "a")) {
      if (!entry.is_regular_file()) continue;
      const fs::path relative = fs::relative(entry.path(), folder.path() / "a");
      CAPTURE(relative.string());
      CHECK(file_text(entry.path()) == file_text(folder.path() / "b" / relative));
      ++files;
    }
    CHECK(files == 1 + scene.time.frame_count());
  }
}

TEST_CASE("runner stops at a failing step, keeps the frames and says why in the manifest") {
  Scene scene = bundled("hanging_bristle");
  scene.time.frame_dt = scene.time.dt;  // a frame per step
  scene.time.duration = 20 * scene.time.dt;
  // An absurd tip load: positions overflow to infinity within a few steps.
  PointLoad load;
  load.rod = 0;
  load.vertex = 20;
  load.force = Vec3(0.0, 1e300, 0.0);
  scene.model.loads.push_back(load);
  test::TempFolder folder("runner-failure");
  const std::string out = folder / "out";
  const RunResult result = run_simulation(scene, out);
  REQUIRE(result.outcome == RunOutcome::Failed);
  CAPTURE(result.status);
  CHECK(result.status.rfind("failed: step " + std::to_string(result.steps_taken + 1) + " (t = ", 0) == 0);
  CHECK(result.status.find("rod 'bristle' vertex") != std::string::npos);
  CHECK(result.frames_written == result.steps_taken + 1);
  CHECK(result.frames_written >= 1);

  const OutputFolder read(out);
  CHECK(read.manifest().status == result.status);
  CHECK(read.frame_count() == result.frames_written);
  for (int k = 0; k < read.frame_count(); ++k) CHECK(read.frame(k).index == k);
}

namespace {

constexpr double kGravity = 9.81;

/// A 2D rod of `segments` edges whose clamp (the midpoint of its first edge, vertices 0 and 1
/// fixed) is at the origin, of length L = 1 m from there along `axis` (+x or +y), with
/// density set for gravito-bending number Gamma = rho A g L^3 / (E I). `bow` displaces vertex
/// i across the axis by bow * s_i^2 (s_i its distance from the clamp; the clamped edge stays
/// on the axis): a slight imperfection when the rest shape is straight.
std::string rod_scene(int segments, double gamma, bool vertical, double bow, const std::string& extra = "") {
  const double length = 1.0, radius = 1e-3, youngs = 1e9;
  const double h = length / (segments - 0.5);
  const double density = gamma * youngs * radius * radius / (4.0 * kGravity * length * length * length);
  std::ostringstream json;
  json.precision(17);
  json << R"({"format": "bristle-scene/1", "name": "rod", "dimension": 2,
    "time": {"dt": 0.01, "duration": 0.5, "frame_dt": 0.5}, "gravity": [0, -9.81],
    "solver": {"mode": "static"},
    "materials": {"m": {"density": )" << density << R"(, "radius": )" << radius
       << R"(, "youngs_modulus": )" << youngs << R"(}},
    "rods": [{"name": "rod", "material": "m", "rest": "straight", "fixed": [0, 1], "vertices": [)";
  for (int i = 0; i <= segments; ++i) {
    const double s = (i - 0.5) * h;
    const double across = i <= 1 ? 0.0 : bow * (s * s - 0.25 * h * h);
    if (i) json << ", ";
    if (vertical) json << "[" << across << ", " << s << "]";
    else json << "[" << s << ", " << across << "]";
  }
  json << "]}]" << extra << "}";
  return json.str();
}

}  // namespace

TEST_CASE("runner static mode: frame 0 is the initial state, frame 1 the equilibrium, with the solve's stats") {
  // A horizontal cantilever, Gamma = 1, with a tip load alpha = P L^2 / (E I) = 1 given with a
  // ramp (ignored: static mode applies loads in full): the tip must match the elastica.
  const int n = 24;
  const double ei = 1e9 * 3.14159265358979323846 * 1e-12 / 4.0;
  std::ostringstream load;
  load.precision(17);
  load << R"(, "loads": [{"rod": "rod", "vertex": )" << n << R"(, "force": [0, )" << -ei << R"(], "ramp": 0.3}])";
  const Scene scene = load_scene_from_string(rod_scene(n, 1.0, false, 0.0, load.str()), "cantilever.json");
  REQUIRE(scene.mode == SolverMode::Static);
  REQUIRE(scene.model.loads.size() == 1);
  test::TempFolder folder("runner-static");
  const std::string out = folder / "out";
  int reports = 0;
  const RunResult result = run_simulation(scene, out, {}, [&](const RunProgress& p) {
    ++reports;
    CHECK(p.frame_count == 2);
  });
  INFO(result.message);
  REQUIRE(result.ok());
  CHECK(reports == 2);
  CHECK(result.frames_written == 2);
  CHECK(result.static_result.stable);

  const OutputFolder read(out);
  CHECK(read.manifest().status == "complete");
  REQUIRE(read.frame_count() == 2);
  const Frame initial = read.frame(0), equilibrium = read.frame(1);
  CHECK(initial.time == 0.0);
  CHECK(initial.stats["mode"] == "static");
  CHECK(initial.rods[0].positions[n].y() == 0.0);
  CHECK(equilibrium.time == scene.time.duration);
  const nlohmann::json& stats = equilibrium.stats;
  CHECK(stats["mode"] == "static");
  CHECK(stats["newton_iterations"].get<int>() >= 1);
  CHECK(stats["residual"].get<double>() <= stats["tolerance"].get<double>());
  CHECK(stats["stable"] == true);
  CHECK(stats["energies"]["kinetic"] == 0.0);
  CHECK(stats["energies"]["load"].get<double>() < 0.0);  // the load did work: fully applied
  for (const Vec3& v : equilibrium.rods[0].velocities) CHECK(v.norm() == 0.0);
  // The clamp held, the tip where the elastica puts it (L = 1 m).
  CHECK(equilibrium.rods[0].positions[1] == initial.rods[0].positions[1]);
  const ElasticaSolution reference = solve_cantilever_elastica(1.0, 1.0);
  REQUIRE(reference.ok);
  const Vec3 tip = equilibrium.rods[0].positions[n];
  MESSAGE("static cantilever Gamma = 1, alpha = 1, " << n << " edges: tip (" << tip.x() << ", " << tip.y()
                                                     << ") m, elastica (" << reference.tip_x << ", "
                                                     << reference.tip_y << "), " << stats["newton_iterations"]
                                                     << " Newton iterations");
  CHECK(std::hypot(tip.x() - reference.tip_x, tip.y() - reference.tip_y) < 5e-3);
}

TEST_CASE("runner static mode: a failed solve keeps frame 0 and says why") {
  const Scene scene = load_scene_from_string(rod_scene(12, 10.0, false, 0.0), "cantilever.json");
  RunOptions options;
  options.static_settings.max_iterations = 1;
  options.static_settings.max_subdivisions = 0;
  test::TempFolder folder("runner-static-failure");
  const std::string out = folder / "out";
  const RunResult result = run_simulation(scene, out, options);
  REQUIRE(result.outcome == RunOutcome::Failed);
  CAPTURE(result.status);
  CHECK(result.status.rfind("failed: static solve", 0) == 0);
  CHECK(result.status.find("no convergence") != std::string::npos);
  CHECK(result.frames_written == 1);
  const OutputFolder read(out);
  CHECK(read.manifest().status == result.status);
  CHECK(read.frame_count() == 1);
}

TEST_CASE("runner static mode: Greenhill's column buckles above Gamma = 7.8373 and stays straight below") {
  // Clamped at its base, standing up, rest shape straight, started slightly bowed (tip 1e-3 L
  // off the axis) or perfectly straight. 16 edges: coarse, but far enough from the threshold.
  struct Case {
    double gamma, bow;
    bool buckles;
  };
  for (const Case c : {Case{6.0, 1e-3, false}, Case{10.0, 1e-3, true}, Case{10.0, 0.0, true}}) {
    CAPTURE(c.gamma);
    CAPTURE(c.bow);
    const int n = 16;
    const Scene scene = load_scene_from_string(rod_scene(n, c.gamma, true, c.bow), "column.json");
    test::TempFolder folder("runner-column");
    const RunResult result = run_simulation(scene, folder / "out");
    INFO(result.message);
    REQUIRE(result.ok());
    const Frame last = OutputFolder(folder / "out").frame(1);
    const Vec3 tip = last.rods[0].positions[n];
    MESSAGE("column Gamma = " << c.gamma << ", bow " << c.bow << ": tip at (" << tip.x() << ", " << tip.y()
                              << ") m, " << last.stats["newton_iterations"] << " Newton iterations, "
                              << last.stats["saddle_escapes"] << " saddle escapes, stable " << last.stats["stable"]);
    CHECK(last.stats["stable"] == true);
    if (c.buckles) {
      CHECK(std::abs(tip.x()) > 0.2);  // bent well over
      CHECK(tip.y() < 0.95);
    } else {
      CHECK(std::abs(tip.x()) < 1e-9);  // back to straight (the bow was only the start)
      CHECK(tip.y() == doctest::Approx(1.0).epsilon(1e-4));
    }
    CHECK((last.stats["saddle_escapes"].get<int>() > 0) == (c.bow == 0.0 && c.buckles));
  }
}

TEST_CASE("runner stops between steps when RunOptions::stop is set, keeping whole frames") {
  Scene scene = bundled("hanging_bristle");
  scene.time.duration = 0.2;  // 5 frames of 50 steps
  test::TempFolder folder("runner-interrupted");
  REQUIRE(run_simulation(scene, folder / "complete").ok());

  SUBCASE("in the middle of a frame interval: the steps since the last frame are dropped") {
    volatile std::sig_atomic_t stop = 0;
    RunOptions options;
    options.stop = &stop;
    // The flag as a signal handler would set it: after step 120, in the middle of frame 3's steps.
    const RunResult result = run_simulation(scene, folder / "out", options, [&stop](const RunProgress& p) {
      if (p.step == 120) stop = 2;
    });
    CHECK(result.outcome == RunOutcome::Interrupted);
    CHECK(result.status == "interrupted");
    CHECK(result.message == "at t = 0.12 s (step 120 of 200)");
    CHECK(result.steps_taken == 120);
    CHECK(result.frames_written == 3);  // frames 0, 1, 2 (t = 0, 0.05, 0.1)

    const OutputFolder read(folder / "out");
    CHECK(read.manifest().status == "interrupted");
    CHECK(read.manifest().frame_count == 3);
    REQUIRE(read.frame_count() == 3);
    CHECK_FALSE(fs::exists(fs::path(folder / "out") / "frames" / "000003.json"));
    // The frames written are the complete run's, byte for byte.
    for (int k = 0; k < 3; ++k)
      CHECK(file_text(read.frame_path(k)) == file_text(OutputFolder(folder / "complete").frame_path(k)));
  }
  SUBCASE("set before the first step: frame 0 only") {
    volatile std::sig_atomic_t stop = 15;
    RunOptions options;
    options.stop = &stop;
    const RunResult result = run_simulation(scene, folder / "out", options);
    CHECK(result.outcome == RunOutcome::Interrupted);
    CHECK(result.message == "at t = 0 s (step 0 of 200)");
    CHECK(result.frames_written == 1);
    CHECK(OutputFolder(folder / "out").manifest().status == "interrupted");
  }
  SUBCASE("a flag that stays zero changes nothing") {
    volatile std::sig_atomic_t stop = 0;
    RunOptions options;
    options.stop = &stop;
    REQUIRE(run_simulation(scene, folder / "out", options).ok());
    for (int k = 0; k < 5; ++k)
      CHECK(file_text(OutputFolder(folder / "out").frame_path(k)) ==
            file_text(OutputFolder(folder / "complete").frame_path(k)));
  }
}

TEST_CASE("runner static mode: a stop before the solve keeps frame 0, status interrupted") {
  Scene scene = load_scene(std::string(test::kTestsDir) + "/cli/analysis/cantilever_static_2d.json");
  volatile std::sig_atomic_t stop = 2;
  RunOptions options;
  options.stop = &stop;
  test::TempFolder folder("runner-static-interrupted");
  const RunResult result = run_simulation(scene, folder / "out", options);
  CHECK(result.outcome == RunOutcome::Interrupted);
  CHECK(result.message == "before the static solve");
  CHECK(result.frames_written == 1);
  CHECK(OutputFolder(folder / "out").manifest().status == "interrupted");
}

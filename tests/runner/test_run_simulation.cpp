#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

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

TEST_CASE("runner static mode: refused without a solver, two frames with one") {
  Scene scene = bundled("hanging_bristle");
  scene.mode = SolverMode::Static;
  test::TempFolder folder("runner-static");
  const std::string out = folder / "out";

  const RunResult refused = run_simulation(scene, out);
  CHECK(refused.outcome == RunOutcome::NotRun);
  CHECK(refused.message.find("static mode") != std::string::npos);
  CHECK_FALSE(fs::exists(out));

  RunOptions options;
  options.static_solver = [](const Scene&, const State& initial) {
    StaticSolveResult solved;
    solved.ok = true;
    solved.state = initial;
    solved.state.positions.array() += 1e-3;  // a stand-in "equilibrium"
    solved.stats = {{"newton_iterations", 7}};
    return solved;
  };
  const RunResult result = run_simulation(scene, out, options);
  REQUIRE(result.ok());
  const OutputFolder read(out);
  REQUIRE(read.frame_count() == 2);
  CHECK(read.frame(1).stats["newton_iterations"] == 7);
  CHECK(read.frame(1).stats.contains("energies"));
  CHECK(read.frame(1).rods[0].positions[5].x() == doctest::Approx(read.frame(0).rods[0].positions[5].x() + 1e-3));
}

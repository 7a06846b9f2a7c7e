// The brush benchmark (include/bristle/bench/brush_benchmark.hpp): its scene is the brush the
// rod-contact issue asks for, loaded as a user's scene is; a tiny run reports its steps and
// contacts and gives the same positions on one and two threads. Speed is never asserted here
// (CG iteration counts are: exact for a build, unlike times).

#include <algorithm>
#include <cmath>

#include <doctest/doctest.h>

#include "bristle/bench/brush_benchmark.hpp"
#include "bristle/contact/rod_overlaps.hpp"
#include "bristle/model/model.hpp"
#include "bristle/scene/load_scene.hpp"

using namespace bristle;

namespace {
/// The benchmark's brush at a painter's angle (`--tilt 0.9`), rows x columns bristles of 20
/// segments, over `duration` seconds of its stroke (the whole stroke by default).
BrushBenchmarkSettings tilted_brush(int rows, int columns, double duration = BrushBenchmarkSettings{}.duration) {
  BrushBenchmarkSettings settings;
  settings.rows = rows;
  settings.columns = columns;
  settings.segments = 20;
  settings.tilt = 0.9;
  settings.duration = duration;
  return settings;
}

/// The brush ran its whole stroke, no two segments passing through each other.
BrushBenchmarkResult run_whole_stroke(const BrushBenchmarkSettings& settings) {
  const BrushBenchmarkResult result = run_brush_benchmark(settings);
  CHECK_MESSAGE(result.ok, result.failure);
  CHECK(result.steps_taken == result.steps);
  CHECK(result.crossings == 0);
  return result;
}
}  // namespace

TEST_CASE("brush benchmark: its scene plants rows x columns clear bristles with rod contact and default solver") {
  BrushBenchmarkSettings settings;  // the 1000 bristles x 20 segments
  const Scene scene = load_scene_from_string(brush_benchmark_scene(settings), "brush benchmark");
  REQUIRE(scene.model.rods.size() == 1000);
  for (const Rod& rod : scene.model.rods) CHECK(rod.edge_count() == 20);
  CHECK(scene.model.rod_contact.enabled);
  CHECK(scene.time.dt == doctest::Approx(1.0 / 60.0));
  // No solver keys: a scene's defaults (the figures are what a user gets).
  CHECK(scene.solver.converged());
  CHECK(scene.solver.cg_max_iterations == SolverSettings{}.cg_max_iterations);
  CHECK(find_initial_overlaps(scene.model).overlaps.empty());

  settings.rod_contact = false;
  settings.rows = 3;
  settings.columns = 2;
  const Scene off = load_scene_from_string(brush_benchmark_scene(settings), "brush benchmark");
  CHECK(off.model.rods.size() == 6);
  CHECK_FALSE(off.model.rod_contact.enabled);
}

TEST_CASE("brush benchmark: a tiny brush pressed onto the paper runs, counts its contacts, and is the same on two threads") {
  BrushBenchmarkSettings settings;
  settings.rows = 2;
  settings.columns = 2;
  settings.segments = 6;
  settings.duration = 0.15;  // the tips reach the paper at about 0.1 s
  const BrushBenchmarkResult one = run_brush_benchmark(settings);
  REQUIRE(one.ok);
  CHECK(one.bristles == 4);
  CHECK(one.vertices == 4 * 7);
  CHECK(one.steps == 9);
  CHECK(one.steps_taken == 9);
  CHECK(one.collider_contacts_max > 0);
  CHECK(one.cg_iterations >= 0);
  CHECK(one.newton_iterations >= one.steps_taken);
  // Pressed on the paper: the contact solver solves at least once per Newton iteration there.
  CHECK(one.contact_solves > 0);
  CHECK(one.to_json()["contact_solves"] == one.contact_solves);
  // Each Newton iteration's first pass solves a bristle at least (all of them in a step's
  // first iteration; later ones only the bristles still moving).
  CHECK(one.contact_rod_solves >= one.newton_iterations);
  CHECK(one.contact_rod_solves >= one.steps_taken * one.bristles);
  CHECK(one.to_json()["contact_rod_solves"] == one.contact_rod_solves);
  CHECK(one.us_per_vertex_step > 0.0);
  CHECK(std::isfinite(one.max_edge_strain));
  CHECK(one.to_json()["steps_taken"] == 9);
  // Time by outcome: every step is converged or not, and given-up attempts are part of them.
  CHECK(one.converged_newton_iterations + one.unconverged_newton_iterations == one.newton_iterations);
  CHECK(one.converged_seconds + one.unconverged_seconds == doctest::Approx(one.seconds).epsilon(1e-9));
  CHECK((one.unconverged_steps == 0) == (one.unconverged_newton_iterations == 0));
  CHECK(one.failed_attempt_newton_iterations <= one.newton_iterations);
  CHECK(one.failed_attempt_seconds <= one.seconds);
  CHECK(one.to_json()["converged_newton_iterations"] == one.converged_newton_iterations);
  CHECK(one.to_json()["failed_attempts"] == one.failed_attempts);
  // Time by stage: one first solve per attempt (a split step's halves and the attempts given up
  // each make one), the stages within the run's time, and iterations over the moving bristles
  // timed exactly where there were any.
  CHECK(one.stages.first_solves >= one.steps_taken + one.failed_attempts);
  CHECK(one.stages.first_solve_seconds > 0.0);
  CHECK(one.stages.first_solve_seconds + one.stages.full_iteration_seconds + one.stages.partial_iteration_seconds + one.stages.path_check_seconds +
            one.stages.commit_seconds <=
        one.seconds);
  CHECK(one.stages.path_check_seconds > 0.0);  // rod contact on: every step's straight motion is checked
  CHECK((one.stages.partial_iteration_seconds > 0.0) == (one.partial_iterations > 0));
  CHECK(one.to_json()["first_solves"] == one.stages.first_solves);
  CHECK(one.to_json()["partial_iteration_seconds"] == one.stages.partial_iteration_seconds);

  settings.threads = 2;
  const BrushBenchmarkResult two = run_brush_benchmark(settings);
  REQUIRE(two.ok);
  CHECK(two.positions_crc == one.positions_crc);
  CHECK(two.cg_iterations == one.cg_iterations);
  CHECK(two.contact_solves == one.contact_solves);

  // Without rod contact the bristles do not couple: a solve after the first of a Newton
  // iteration solves only the bristles whose contacts changed, whatever the threads.
  settings.rod_contact = false;
  settings.threads = 1;
  const BrushBenchmarkResult apart = run_brush_benchmark(settings);
  REQUIRE(apart.ok);
  CHECK(apart.contact_solves > apart.newton_iterations);
  CHECK(apart.contact_rod_solves >= apart.newton_iterations * apart.bristles);
  CHECK(apart.contact_rod_solves < apart.contact_solves * apart.bristles);
  settings.threads = 2;
  const BrushBenchmarkResult apart_two = run_brush_benchmark(settings);
  REQUIRE(apart_two.ok);
  CHECK(apart_two.positions_crc == apart.positions_crc);
  CHECK(apart_two.contact_rod_solves == apart.contact_rod_solves);
}

TEST_CASE("brush benchmark: a tilted 10 x 10 brush pressed with rod contact is the same on one and two threads") {
  // Big enough for the threaded parts of the contact step to run on threads (the narrow
  // phase's distances, the kept broad-phase list's filter, the coupled system's sum over 5700
  // free DOFs, the preconditioner's analysis), to touchdown and the first bristle pairs within
  // reach. About 3 s in Release.
  BrushBenchmarkSettings settings = tilted_brush(10, 10, 0.45);
  const BrushBenchmarkResult one = run_brush_benchmark(settings);
  REQUIRE(one.ok);
  REQUIRE(one.steps_taken == 27);
  CHECK(one.rod_contact_pairs_max > 0);
  CHECK(one.collider_contacts_max > 0);
  CHECK(one.crossings == 0);
  settings.threads = 2;
  const BrushBenchmarkResult two = run_brush_benchmark(settings);
  REQUIRE(two.ok);
  CHECK(two.positions_crc == one.positions_crc);
  CHECK(two.cg_iterations == one.cg_iterations);
  CHECK(two.newton_iterations == one.newton_iterations);
  CHECK(two.contact_solves == one.contact_solves);
  CHECK(two.min_gap_fraction == one.min_gap_fraction);
}

TEST_CASE("brush benchmark: --tilt holds the tuft at a painter's angle, its lowest tip 0.3 mm above the paper at 0.2 s") {
  BrushBenchmarkSettings settings;
  settings.rows = 5;
  settings.columns = 4;
  settings.segments = 8;
  settings.tilt = 0.9;
  const nlohmann::json text = nlohmann::json::parse(brush_benchmark_scene(settings));
  const Scene scene = load_scene_from_string(text.dump(), "brush benchmark");
  REQUIRE(scene.model.rods.size() == 20);
  CHECK(find_initial_overlaps(scene.model).overlaps.empty());
  // Every bristle leans back from the stroke (+x): its tip behind and below its root, about
  // 0.9 rad from the vertical (the jitter turns each by at most 0.12 rad).
  const State start = initial_state(scene.model);
  double lowest = 1.0;
  for (int r = 0; r < static_cast<int>(scene.model.rods.size()); ++r) {
    const int last = scene.model.rods[r].vertex_count() - 1;
    const Vec3 axis = vertex_position(scene.model, start.positions, r, last) - vertex_position(scene.model, start.positions, r, 0);
    CHECK(axis.x() < 0.0);
    CHECK(std::abs(std::acos(-axis.normalized().y()) - 0.9) <= 0.12 + 1e-9);
    for (int i = 0; i <= last; ++i) lowest = std::min(lowest, vertex_position(scene.model, start.positions, r, i).y());
  }
  // The keys: down to 0.3 mm above the paper by 0.2 s, then 4 mm along the axis (its vertical
  // part 4 cos 0.9 mm) by 0.4 s, held through the drag (4 cm along x by 0.9 s), lifted by 1.15 s.
  const nlohmann::json& keys = text["handles"][0]["keys"];
  REQUIRE(keys.size() == 5);
  CHECK(keys[1]["time"] == 0.2);
  CHECK(lowest + keys[1]["translation"][1].get<double>() == doctest::Approx(0.0003).epsilon(1e-9));
  CHECK(lowest + keys[2]["translation"][1].get<double>() == doctest::Approx(-0.004 * std::cos(0.9)).epsilon(1e-9));
  CHECK(keys[3]["translation"][0] == 0.04);
  CHECK(keys[3]["translation"][1] == keys[2]["translation"][1]);
  CHECK(keys[4]["time"] == 1.15);

  // Vertical (0, the default): brush_stroke.json's press, as before.
  settings.tilt = 0.0;
  const nlohmann::json vertical = nlohmann::json::parse(brush_benchmark_scene(settings));
  CHECK(vertical["rods"][0]["generator"]["direction"].dump() == "[0,-1,0]");
  CHECK(vertical["handles"][0]["keys"][1]["translation"] == nlohmann::json({0, -0.008, 0}));
}

TEST_CASE("brush benchmark: a vertical 4 x 4 brush with rod contact runs its whole stroke") {
  // Pressed end-on, the bristles buckle against each other; as the brush lifts off (t = 1 s)
  // a step's Newton iterations are cut short by CCD pair after pair and did not converge in 25
  // at any split level: the run failed at step 61. Such a step now ends at its last (feasible)
  // iterate, counted unconverged. While pressed, the handle's carry took the tips 11 radii
  // into the paper when Newton stopped after 8 iterations; it now goes on while a tip is deep.
  // How deep a tip ends depends on which pair of the buckling bristles jams at a tiny gap: one
  // such pair cut this brush's whole Newton step to its fraction until 2026-12-04 (0.099 radii),
  // and cuts only its own bristles since (5.9 radii; the vertical 5 x 5 and 6 x 6 brushes went
  // from 7.8 and 16.5 radii to 7.7 and 5.1), and 10.0 since Newton's later iterations solve
  // only the bristles still moving, which took it along another path (the 5 x 5 and 6 x 6
  // brushes: 4.2 and 5.2). Without going on while a tip is deep: 43 radii. The painter's
  // brush keeps its tips out (the next test).
  BrushBenchmarkSettings settings;
  settings.rows = 4;
  settings.columns = 4;
  settings.segments = 10;
  const BrushBenchmarkResult result = run_whole_stroke(settings);
  MESSAGE("deepest in the paper: " << result.max_depth_fraction << " of the radius");
  CHECK(result.max_depth_fraction < 12.0);
  // 0.59 with the tips deep in the paper. 0.15 while a lifting step cut short at the last split
  // (ImplicitEuler::clear_path) cut the free vertices' motion from x0, the fixed ones going all
  // the way: the root edges stretched. 0.035 since.
  CHECK(result.max_edge_strain < 0.05);
  CHECK(result.unconverged_steps > 0);  // or this brush no longer exercises the last resort
}

TEST_CASE("brush benchmark: a tilted 12 x 12 brush's touchdown keeps its tips near the paper's surface") {
  // The handle's carry takes the tips into the paper each step (up to 3.5 radii), and the
  // step's Newton iterations lift them back, each cut by CCD where bristle pairs would touch.
  // Vertices held by the paper's constraints made the descent test of the per-group cut fail
  // in every iteration, so one pair pressed at a tiny gap cut the whole brush to its fraction:
  // 1.33 radii deep by t = 0.45 s. Each group of bristles tied by pairs now goes its own
  // fraction (ImplicitEuler::limit_step_by_ccd): 0.18 radii, in 272 Newton iterations against
  // 269. About 3 s in Release.
  const BrushBenchmarkSettings settings = tilted_brush(12, 12, 0.45);
  const BrushBenchmarkResult result = run_whole_stroke(settings);
  MESSAGE("deepest in the paper: " << result.max_depth_fraction << " of the radius, " << result.newton_iterations
                                   << " Newton iterations");
  CHECK(result.collider_contacts_max > 0);
  CHECK(result.max_depth_fraction < 0.3);
}

TEST_CASE("brush benchmark: where CG on the per-rod factors is slow, the bristles contact ties are factored together") {
  // A tilted 8 x 8 brush to just after touchdown (27 steps, about 2 s in Release), where CCD
  // cuts most Newton steps to a fraction of their length. A coupled solve that CG does not
  // finish in 50 iterations on the per-rod factors switches its step attempt to the bristles
  // the barrier ties factored together (ImplicitEuler::solve_with_cg), which CG then solves in
  // about one iteration: 6555 CG iterations for 277 Newton iterations. With the per-rod factors
  // alone the same steps took 15232 for 280 (17878 before CG started from the untaken part of
  // the last Newton step); factored together at every solve, 883 for 281. Counts, not times:
  // the same on every run of a build.
  const BrushBenchmarkSettings settings = tilted_brush(8, 8, 0.45);
  const BrushBenchmarkResult result = run_whole_stroke(settings);
  MESSAGE(result.cg_iterations << " CG iterations, " << result.newton_iterations << " Newton iterations");
  CHECK(result.rod_contact_pairs_max > 0);
  CHECK(result.cg_iterations < 8000);
}

TEST_CASE("brush benchmark: a vertical 5 x 5 brush pressed end-on, its coupled bristles factored together, runs") {
  // Pressed end-on, the bristles buckle against each other and CG on the per-rod factors is
  // slow, so the coupled bristles are factored together (ImplicitEuler::solve_with_cg). With
  // them factored at every solve, a pair at 0.009 g^ whose Newton step opened its gap 125-fold
  // had its force estimate raised 600 times by the linearised update, its kappa with it, and so
  // on: kappa 0.37 -> 2.9e15 within one step, CG diverging at step 13 (t = 0.2 s). An opening
  // step now leaves the estimate where it was (RodContact::update_forces; its own test is in
  // test_rod_contact.cpp; docs/contact.md, "The coupled rods factored together").
  BrushBenchmarkSettings settings;
  settings.rows = 5;
  settings.columns = 5;
  settings.segments = 10;
  settings.duration = 0.35;
  const BrushBenchmarkResult result = run_whole_stroke(settings);
  MESSAGE(result.cg_iterations << " CG iterations, " << result.newton_iterations << " Newton iterations, "
                               << result.unconverged_steps << " unconverged steps");
  CHECK(result.max_edge_strain < 0.05);
}

TEST_CASE("brush benchmark: a tilted 5 x 20 brush with rod contact runs its whole stroke") {
  // At a painter's angle (--tilt 0.9), 20 segments a bristle. A step cut short at the last
  // split (ImplicitEuler::clear_path) ended where a pair kept only 1e-3 of its gap; over a few
  // cut substeps as the brush lifted (t = 0.97 s) pairs came to 1e-9 of g^ (smallest gap 5e-10
  // of the radius with the cut keeping half a gap), the system was no longer positive definite
  // in doubles and CG failed: the run stopped at step 59. Such a step now ends at its latest
  // Newton iterate whose straight motion is clear: smallest gap 7.8e-4 of the radius.
  const BrushBenchmarkSettings settings = tilted_brush(5, 20);
  const BrushBenchmarkResult result = run_whole_stroke(settings);
  CHECK(result.min_gap_fraction > 1e-5);
  CHECK(result.max_edge_strain < 0.01);
}

TEST_CASE("brush benchmark: the iteration log has one record per Newton iteration and changes no result") {
  // A tilted 3 x 3 brush over its press (to 0.45 s): steps that converge in one iteration after
  // the first solve, pressed ones with iterations over the bristles still moving, and steps
  // given up and split (their attempts report with half of dt).
  BrushBenchmarkSettings settings = tilted_brush(3, 3, 0.45);
  const BrushBenchmarkResult plain = run_brush_benchmark(settings);
  REQUIRE(plain.ok);
  std::vector<IterationRecord> records;
  settings.iteration_log = [&records](const IterationRecord& record) { records.push_back(record); };
  const BrushBenchmarkResult logged = run_brush_benchmark(settings);
  REQUIRE(logged.ok);
  // Logging measures; it moves nothing.
  CHECK(logged.positions_crc == plain.positions_crc);
  CHECK(logged.newton_iterations == plain.newton_iterations);
  // One record per Newton iteration (each attempt's first solve is one), as the report counts.
  CHECK(static_cast<long long>(records.size()) == logged.newton_iterations);
  const auto first_solves = std::count_if(records.begin(), records.end(), [](const IterationRecord& r) { return r.iteration == 0; });
  CHECK(first_solves == logged.stages.first_solves);
  const auto partial = std::count_if(records.begin(), records.end(), [](const IterationRecord& r) { return r.partial; });
  CHECK(partial == logged.partial_iterations);
  REQUIRE(partial > 0);  // else the test of rods_solved below says nothing
  double previous_time = 0.0;
  int previous_iteration = -1;
  for (const IterationRecord& r : records) {
    // Iterations count up within an attempt, from its first solve.
    if (r.iteration == 0) {
      CHECK(r.time > previous_time - settings.dt);  // a split step's halves end before the whole would
      previous_time = r.time;
    } else {
      CHECK(r.iteration == previous_iteration + 1);
    }
    previous_iteration = r.iteration;
    CHECK(r.h > 0.0);
    CHECK(r.h <= settings.dt);
    CHECK(r.tolerance > 0.0);
    CHECK(r.correction >= 0.0);
    CHECK(r.step_length >= 0.0);
    CHECK(r.step_length <= 1.0);
    CHECK(r.deepest_in_collider >= 0.0);
    CHECK(r.seconds > 0.0);  // a steady clock in nanoseconds: an iteration takes microseconds
    if (r.partial) {
      CHECK(r.rods_solved > 0);
      CHECK(r.rods_solved < 9);
    } else {
      CHECK(r.rods_solved == 9);
    }
  }
  // The pressed steps: some iteration's correction above the tolerance, and the last record's
  // attempt ends at the run's end.
  CHECK(std::any_of(records.begin(), records.end(), [](const IterationRecord& r) { return r.correction > r.tolerance; }));
  CHECK(records.back().time == doctest::Approx(0.45));
  CHECK(std::any_of(records.begin(), records.end(), [&](const IterationRecord& r) { return r.h < settings.dt; }));
  // Each record's time is the one its stage counts: together they are the three stages' sums
  // (added in another order, so to rounding).
  double logged_seconds = 0.0;
  for (const IterationRecord& r : records) logged_seconds += r.seconds;
  const double stage_seconds =
      logged.stages.first_solve_seconds + logged.stages.full_iteration_seconds + logged.stages.partial_iteration_seconds;
  CHECK(logged_seconds == doctest::Approx(stage_seconds).epsilon(1e-9));
  CHECK(logged_seconds < logged.seconds);
  const nlohmann::json line = iteration_record_json(records.front());
  for (const char* key : {"t", "h", "iteration", "partial", "rods_solved", "correction", "tolerance", "ccd_limited", "step",
                          "forces_consistent", "deepest_in_collider", "seconds"})
    CHECK_MESSAGE(line.contains(key), key);
}

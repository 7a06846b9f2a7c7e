// The targets of the validation suite (issue 4) as CI tests, on the real scenes of
// scenes/validation/. Resolutions are the targets' own (80 segments for the cantilevers, 100
// for the frequencies); the convergence study stops at 40 segments and Greenhill's threshold
// is found to 1e-4, to keep the module fast. The full sweep is `bristle verify`.

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <sstream>

#include <doctest/doctest.h>

#include "bristle/analysis/validation.hpp"
#include "bristle/analysis/validation_cases.hpp"
#include "bristle/analysis/validation_clamped_rod.hpp"
#include "bristle/analysis/validation_plot.hpp"
#include "bristle/analysis/validation_report.hpp"
#include "bristle/cli/command.hpp"
#include "bristle/scene/load_scene.hpp"
#include "io/temp_folder.hpp"
#include "test_paths.hpp"

using namespace bristle;

namespace {

std::string scene_path(const std::string& file) {
  return std::string(bristle::test::kScenesDir) + "/validation/" + file;
}

Model scene_model(const std::string& file) { return load_scene(scene_path(file)).model; }

}  // namespace

TEST_CASE("validation: the scenes are what their names say, clamped at the first edge's midpoint") {
  struct Expected {
    const char* file;
    double gamma, alpha;
    int segments;
  };
  const Expected scenes[] = {
      {"self_weight_gamma_0.1.json", 0.1, 0.0, 80}, {"self_weight_gamma_1.json", 1.0, 0.0, 80},
      {"self_weight_gamma_10.json", 10.0, 0.0, 80}, {"self_weight_gamma_100.json", 100.0, 0.0, 80},
      {"tip_load_alpha_0.1.json", 0.0, 0.1, 80},    {"tip_load_alpha_1.json", 0.0, 1.0, 80},
      {"tip_load_alpha_10.json", 0.0, 10.0, 80},    {"greenhill_column.json", 7.0, 0.0, 80},
      {"modes_clamped_free_2d.json", 0.0, 0.0, 100}, {"modes_clamped_free_3d.json", 0.0, 0.0, 100},
  };
  for (const Expected& e : scenes) {
    CAPTURE(e.file);
    const ClampedRod rod = describe_clamped_rod(scene_model(e.file));
    CHECK(rod.segments == e.segments);
    CHECK(rod.clamp.norm() < 1e-15);  // the effective clamp is at the origin
    CHECK(rod.length == doctest::Approx((e.segments - 0.5) * rod.h).epsilon(1e-12));
    CHECK(rod.gamma == doctest::Approx(e.gamma).epsilon(1e-9));
    CHECK(rod.alpha == doctest::Approx(e.alpha).epsilon(1e-9));
  }
}

TEST_CASE("validation case 1: self-weight cantilever tip within 0.5% of L at 80 segments") {
  for (const char* file : {"self_weight_gamma_0.1.json", "self_weight_gamma_1.json", "self_weight_gamma_10.json",
                           "self_weight_gamma_100.json"}) {
    CAPTURE(file);
    const CantileverComparison c = compare_cantilever(scene_model(file));
    INFO(c.message);
    REQUIRE(c.ok);
    MESSAGE(std::string(file) << ": tip (" << std::setprecision(6) << c.bristle_tip.x() << ", " << c.bristle_tip.y()
                 << ") L, elastica (" << c.reference_tip.x() << ", " << c.reference_tip.y() << ") L, error "
                 << 100.0 * c.tip_error << "% of L, " << c.equilibrium.iterations << " Newton iterations");
    CHECK(c.tip_error < 0.005);
    CHECK(c.equilibrium.residual <= c.equilibrium.tolerance);
    CHECK(std::abs(c.bristle_tip.z()) < 1e-12);  // planar
    REQUIRE(c.centreline.size() == 81u);
    CHECK(c.centreline.back().x() == doctest::Approx(c.bristle_tip.x()));
  }
}

TEST_CASE("validation case 2: tip-loaded cantilever within 0.5% of L, and Bisshopp and Drucker's 0.30172") {
  for (const char* file : {"tip_load_alpha_0.1.json", "tip_load_alpha_1.json", "tip_load_alpha_10.json"}) {
    CAPTURE(file);
    const CantileverComparison c = compare_cantilever(scene_model(file));
    INFO(c.message);
    REQUIRE(c.ok);
    MESSAGE(std::string(file) << ": tip (" << std::setprecision(6) << c.bristle_tip.x() << ", " << c.bristle_tip.y()
                 << ") L, error " << 100.0 * c.tip_error << "% of L");
    CHECK(c.tip_error < 0.005);
    if (c.rod.alpha == doctest::Approx(1.0)) CHECK(std::abs(-c.bristle_tip.y() - 0.30172) < 0.005);
  }
}

TEST_CASE("validation case 5: the tip error converges with order at least 1 (clamp at the mid-edge)") {
  const std::vector<int> segments = {10, 20, 40};
  for (const char* file : {"self_weight_gamma_10.json", "tip_load_alpha_1.json"}) {
    CAPTURE(file);
    const ConvergenceStudy s = cantilever_convergence(scene_model(file), segments);
    INFO(s.message);
    REQUIRE(s.ok);
    std::ostringstream line;
    for (std::size_t i = 0; i < s.errors.size(); ++i) line << " N = " << s.segments[i] << ": " << s.errors[i];
    MESSAGE(std::string(file) << ":" << line.str() << "; observed order " << s.order);
    CHECK(s.order >= 1.0);
    for (std::size_t i = 1; i < s.errors.size(); ++i) CHECK(s.errors[i] < s.errors[i - 1]);
  }
}

TEST_CASE("validation: measuring L from vertex 0 instead of the mid-edge clamp leaves a much larger error") {
  // The negative control of "place the clamp correctly": the same 10-segment rod compared with
  // the elastica of length N h from vertex 0 (Gamma scaled by (N h / L)^3).
  const Model scene = scene_model("self_weight_gamma_10.json");
  const ClampedRod base = describe_clamped_rod(scene);
  const Model model = resample_clamped_rod(scene, base, 10);
  const CantileverComparison mid = compare_cantilever(model);
  REQUIRE(mid.ok);
  const ClampedRod& rod = mid.rod;
  const double l0 = rod.segments * rod.h;
  const ElasticaSolution naive = solve_cantilever_elastica(rod.gamma * std::pow(l0 / rod.length, 3), 0.0);
  REQUIRE(naive.ok);
  State state = initial_state(model);
  REQUIRE(solve_static(model, state).ok);
  const Vec3 vertex0 = vertex_position(model, state.positions, 0, 0);
  const Vec3 tip = (vertex_position(model, state.positions, 0, rod.tip) - vertex0) / l0;
  const double naive_error = std::hypot(tip.x() - naive.tip_x, tip.y() - naive.tip_y);
  MESSAGE("10 segments: tip error " << 100.0 * mid.tip_error << "% of L from the mid-edge clamp, "
                                    << 100.0 * naive_error << "% from vertex 0");
  CHECK(naive_error > 5.0 * mid.tip_error);
  CHECK(naive_error > 0.01);
}

TEST_CASE("validation case 3: first three bending frequencies within 0.5% at 100 segments, doubled in 3D") {
  for (const char* file : {"modes_clamped_free_2d.json", "modes_clamped_free_3d.json"}) {
    CAPTURE(file);
    const Model model = scene_model(file);
    const ModesComparison m = compare_modes(model, 3);
    INFO(m.message);
    REQUIRE(m.ok);
    REQUIRE(m.bristle_hz.size() == (model.dimension == 3 ? 6u : 3u));
    for (std::size_t k = 0; k < m.bristle_hz.size(); ++k) {
      MESSAGE(std::string(file) << " mode " << k + 1 << ": " << std::setprecision(8) << m.bristle_hz[k] << " Hz, beam "
                   << m.reference_hz[k] << " Hz, error " << 100.0 * m.relative_errors[k] << "%");
      CHECK(std::abs(m.relative_errors[k]) < 0.005);
    }
    if (model.dimension == 3)
      for (std::size_t k = 0; k < 6; k += 2) CHECK(m.bristle_hz[k + 1] == doctest::Approx(m.bristle_hz[k]).epsilon(1e-8));
  }
}

TEST_CASE("validation case 4: Greenhill's threshold within 2% of 7.8373") {
  const GreenhillResult g = find_greenhill_threshold(scene_model("greenhill_column.json"), 2.0, 20.0, 1e-4);
  INFO(g.message);
  REQUIRE(g.ok);
  MESSAGE("Gamma_c = " << std::setprecision(8) << g.critical_gamma << " at " << g.rod.segments << " segments, error "
                       << 100.0 * g.relative_error << "%, " << g.evaluations << " evaluations");
  CHECK(std::abs(g.relative_error) < 0.02);
}

TEST_CASE("validation case 4: the same threshold by bisection on static solves from a bent start") {
  // Coarse bisection (1% of the bracket) to stay fast; `bristle verify` narrows it to 0.1%.
  const GreenhillResult g = find_greenhill_by_imperfection(scene_model("greenhill_column.json"), 2.0, 20.0, 1e-2);
  INFO(g.message);
  REQUIRE(g.ok);
  MESSAGE("bisection: Gamma_c = " << std::setprecision(6) << g.critical_gamma << ", error " << 100.0 * g.relative_error
                                  << "%, " << g.evaluations << " static solves");
  CHECK(std::abs(g.relative_error) < 0.02);
}

TEST_CASE("validation: observed order is the least-squares slope") {
  const std::vector<int> n = {10, 20, 40, 80};
  std::vector<double> e;
  for (int k : n) e.push_back(3.0 / (k * k));
  CHECK(observed_order(n, e) == doctest::Approx(2.0).epsilon(1e-12));
  e = {1e-2, 5e-3, 2.5e-3, 1.25e-3};
  CHECK(observed_order(n, e) == doctest::Approx(1.0).epsilon(1e-12));
  CHECK(std::isnan(observed_order({10}, {1e-3})));
}

TEST_CASE("validation: scenes that are not the case they stand for are refused with a reason") {
  const Model cantilever = scene_model("self_weight_gamma_10.json");
  // One fixed vertex is a pin, not a clamp.
  Model pinned = cantilever;
  pinned.rods.front().fixed = {0};
  pinned.finalize();
  CHECK_THROWS_AS(describe_clamped_rod(pinned), ValidationError);
  // A bent rod.
  Model bent = cantilever;
  bent.rods.front().initial_positions.back().y() += 1e-3;
  CHECK_THROWS_AS(describe_clamped_rod(bent), ValidationError);
  // Gravity along the rod is not a cantilever; gravity in the modes case is prestress.
  Model along = cantilever;
  along.gravity = Vec3(-9.81, 0.0, 0.0);
  CHECK_THROWS_AS(compare_cantilever(along), ValidationError);
  CHECK_THROWS_AS(compare_modes(cantilever), ValidationError);
  // A hanging column is not Greenhill's.
  Model hanging = cantilever;
  hanging.gravity = Vec3(9.81, 0.0, 0.0);
  CHECK_THROWS_AS(find_greenhill_threshold(hanging), ValidationError);
}

TEST_CASE("validation: resampling keeps the clamp, length, material and tip load") {
  const Model scene = scene_model("tip_load_alpha_1.json");
  const ClampedRod base = describe_clamped_rod(scene);
  const Model coarse = resample_clamped_rod(scene, base, 12);
  const ClampedRod rod = describe_clamped_rod(coarse);
  CHECK(rod.segments == 12);
  REQUIRE(coarse.loads.size() == 1u);
  CHECK(coarse.loads.front().vertex == 12);
  CHECK((rod.clamp - base.clamp).norm() < 1e-15);
  CHECK((rod.axis - base.axis).norm() < 1e-15);
  CHECK(rod.length == doctest::Approx(base.length).epsilon(1e-14));
  CHECK(rod.alpha == doctest::Approx(base.alpha).epsilon(1e-12));
  CHECK(coarse.rods.front().material.radius == scene.rods.front().material.radius);
}

TEST_CASE("validation report: table, Markdown, JSON and small PNG plots") {
  ValidationReport report;
  ValidationCheck pass;
  pass.case_name = "1 self-weight cantilever";
  pass.parameters = "Gamma = 10, N = 80";
  pass.reference = "tip (0.1, -0.7) L";
  pass.bristle = "tip (0.1, -0.7) L";
  pass.error = "0.010% of L";
  pass.target = "< 0.500% of L";
  pass.pass = true;
  ValidationCheck fail = pass;
  fail.case_name = "4 Greenhill column";
  fail.pass = false;
  report.checks = {pass, pass};
  CHECK(report.passed());
  ConvergencePlotData study;
  study.label = "self weight, Gamma = 10";
  study.study.segments = {10, 20, 40};
  study.study.errors = {4e-3, 1e-3, 2.5e-4};
  study.study.order = 2.0;
  study.study.ok = true;
  report.convergence.push_back(study);
  CentrelinePlotData curve;
  curve.label = "Gamma = 10";
  for (int i = 0; i <= 20; ++i) {
    const double s = i / 20.0;
    curve.reference.push_back(Vec2(s, -0.7 * s * s));
    curve.bristle.push_back(Vec2(s, -0.7 * s * s + 1e-3));
  }
  report.centrelines.push_back(curve);

  const std::string table = validation_table_text(report);
  CHECK(table.find("Gamma = 10, N = 80") != std::string::npos);
  CHECK(table.find("all 2 checks pass") != std::string::npos);
  CHECK(table.find("order 2.00") != std::string::npos);  // the pairwise orders, 2 exactly here

  report.checks.push_back(fail);
  CHECK_FALSE(report.passed());
  CHECK(report.failures() == 1);
  CHECK(validation_table_text(report).find("1 of 3 checks FAIL") != std::string::npos);
  CHECK(validation_json(report).find("\"passed\": false") != std::string::npos);
  const std::string md = validation_markdown(report, "images/");
  CHECK(md.find("](images/validation_convergence.png)") != std::string::npos);
  CHECK(md.find("| 4 Greenhill column |") != std::string::npos);
  CHECK(md.find("first edge's midpoint") != std::string::npos);

  for (const std::string& png : {plot_centrelines_png(report.centrelines), plot_convergence_png(report.convergence)}) {
    REQUIRE(png.size() > 8);
    CHECK(png.compare(0, 8, "\x89PNG\r\n\x1a\n") == 0);
    CHECK(png.size() < 200u * 1024u);
  }

  const bristle::test::TempFolder folder("validation-docs");
  const std::vector<std::string> written = write_validation_docs(report, folder / "docs/validation.md");
  REQUIRE(written.size() == 3u);
  for (const std::string& path : written) {
    std::ifstream in(path, std::ios::binary);
    CHECK(in.good());
  }
  CHECK(std::filesystem::exists(folder / "docs/images/validation_centrelines.png"));
}

TEST_CASE("validation command: bad usage and a missing scene folder are exit code 2") {
  std::ostringstream out, err;
  cli::CommandContext context{out, err, false};
  CHECK(cli::run_cli({"verify", "--bogus"}, context) == cli::kExitUsage);
  CHECK(cli::run_cli({"verify", "--scenes", "/nonexistent/bristle-validation"}, context) == cli::kExitUsage);
  CHECK(err.str().find("no validation scenes") != std::string::npos);
  const bristle::test::TempFolder empty("validation-empty");
  CHECK(cli::run_cli({"verify", "--scenes", empty.path().string()}, context) == cli::kExitUsage);
}

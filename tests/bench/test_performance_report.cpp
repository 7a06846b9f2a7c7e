// The performance report (include/bristle/bench/performance_report.hpp) on a tiny sweep: the
// page has every row and target, the plot is a PNG. Speed itself is never asserted here.

#include <string>

#include <doctest/doctest.h>

#include "bristle/bench/performance_report.hpp"

using namespace bristle;

TEST_CASE("bench report: a tiny sweep gives the table, the targets and a PNG plot") {
  PerformanceSweepSettings settings;
  settings.strands = {3, 2};
  settings.threads = {1, 2};
  settings.large_steps = {1.0 / 60.0};
  settings.large_step_strands = 2;
  settings.large_step_duration = 0.1;
  settings.accuracy_strands = 2;
  settings.base.duration = 0.02;
  settings.base.solver.newton_iterations = 2;
  settings.base.solver.linearization = Linearization::Predicted;
  const PerformanceReport report = run_performance_sweep(settings);
  REQUIRE(report.sizes.size() == 4);
  CHECK(report.sizes[0].strands == 2);  // ascending sizes
  CHECK(report.sizes[1].result.threads == 2);
  REQUIRE(report.large_steps.size() == 1);
  CHECK(report.large_steps[0].result.steps == 6);
  CHECK(report.large_steps[0].result.newton_iterations_mean >= 1.0);
  for (const PerformanceRow& row : report.sizes) {
    CHECK(row.result.ok);
    CHECK(row.result.vertices == 50 * row.strands);
  }
  // Only the accuracy size at one thread runs the reference.
  CHECK(report.sizes[0].result.tip_error_relative >= 0.0);
  CHECK(report.sizes[1].result.tip_error_relative < 0.0);

  const std::string page = performance_markdown(report, "images/plot.png");
  CHECK(page.find("| 2 | 100 | 1 |") != std::string::npos);
  CHECK(page.find("| 3 | 150 | 2 |") != std::string::npos);
  CHECK(page.find("![Time per step against vertex count](images/plot.png)") != std::string::npos);
  CHECK(page.find("| 1/60 s | 6 | yes | ") != std::string::npos);
  CHECK(page.find("## Targets (the performance and solver issues), with the scene defaults") != std::string::npos);
  CHECK(page.find("dismech-rods") != std::string::npos);

  const std::string png = performance_plot_png(report);
  REQUIRE(png.size() > 8);
  CHECK(png.substr(1, 3) == "PNG");
}

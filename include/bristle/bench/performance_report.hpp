#pragma once
/// The performance report: the strand benchmark swept over sizes, thread counts and large
/// steps, written as docs/performance.md with a log-log plot of the time per step.
///
/// Figures are measured, never asserted: `bristle bench --sweep --docs docs/performance.md`
/// regenerates the page on the machine it runs on, and the page says which machine that was.

#include <functional>
#include <string>
#include <vector>

#include "bristle/bench/strand_benchmark.hpp"

namespace bristle {

struct PerformanceSweepSettings {
  /// 50 to 1,000,000 vertices; linearity is judged from 5,000 vertices up.
  std::vector<int> strands = {1, 10, 100, 1000, 4000, 20000};
  std::vector<int> threads = {1, 2};
  std::vector<double> large_steps = {1.0 / 60.0, 1.0 / 24.0};  ///< [s], at `large_step_strands`
  int large_step_strands = 1000;
  double large_step_duration = 1.0;  ///< [s]
  int accuracy_strands = 1000;       ///< the one size whose tip error is measured
  StrandBenchmarkSettings base;      ///< everything else (dt, solver, strand parameters)
};

struct PerformanceRow {
  int strands = 0;
  StrandBenchmarkResult result;
};

struct PerformanceReport {
  std::vector<PerformanceRow> sizes;        ///< every size at every thread count
  std::vector<PerformanceRow> large_steps;  ///< dt from PerformanceSweepSettings::large_steps
  /// The cheaper solvers beside the default, at `large_step_strands` and every dt: name, row.
  std::vector<std::pair<std::string, PerformanceRow>> variants;
  StrandBenchmarkSettings base;
  std::string machine;                      ///< CPU model and core count, from /proc/cpuinfo
  std::string date;                         ///< UTC, YYYY-MM-DD
};

/// Runs the sweep; `progress` (may be empty) is told what runs next.
PerformanceReport run_performance_sweep(const PerformanceSweepSettings& settings,
                                        const std::function<void(const std::string&)>& progress = {});

/// docs/performance.md; `plot_file` is the plot's path relative to the page.
std::string performance_markdown(const PerformanceReport& report, const std::string& plot_file);

/// Time per step against vertex count, log-log, one line per thread count (PNG bytes).
std::string performance_plot_png(const PerformanceReport& report);

/// "<model name>, <n> cores" from /proc/cpuinfo, or "unknown machine".
std::string machine_description();

}  // namespace bristle

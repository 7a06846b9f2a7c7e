#pragma once
/// Progress of a run on stderr. On a terminal: one line redrawn in place (at most 10 times a
/// second) with a bar, frame k of N, simulated time, steps per second, ETA and CG iterations
/// per step. Otherwise (a log file, a pipe): a plain line at every 10% of the steps and at
/// least every 5 s of wall time.

#include <iosfwd>

#include "bristle/runner/run_simulation.hpp"

namespace bristle::cli {

class ProgressPrinter {
 public:
  ProgressPrinter(std::ostream& err, bool terminal) : err_(err), terminal_(terminal) {}

  /// The run loop's progress callback.
  void update(const RunProgress& progress);
  /// Ends the bar's line (terminal) after the run.
  void finish();

 private:
  std::string line(const RunProgress& progress) const;

  std::ostream& err_;
  bool terminal_;
  bool drawn_ = false;
  double last_print_seconds_ = -1.0;
  int next_percent_ = 10;
  long long cg_since_print_ = 0;
  long long steps_since_print_ = 0;
  double cg_per_step_ = 0.0;
};

/// "1:05", "12 s": a duration for people.
std::string format_duration(double seconds);

}  // namespace bristle::cli

#include "bristle/cli/progress.hpp"

#include <cmath>
#include <cstdio>
#include <ostream>
#include <string>

namespace bristle::cli {

std::string format_duration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "?";
  char buffer[32];
  if (seconds < 60) {
    std::snprintf(buffer, sizeof(buffer), "%.0f s", seconds);
  } else {
    const long long s = static_cast<long long>(std::round(seconds));
    if (s < 3600)
      std::snprintf(buffer, sizeof(buffer), "%lld:%02lld", s / 60, s % 60);
    else
      std::snprintf(buffer, sizeof(buffer), "%lld:%02lld:%02lld", s / 3600, (s / 60) % 60, s % 60);
  }
  return buffer;
}

std::string ProgressPrinter::line(const RunProgress& p) const {
  const double fraction = p.step_count > 0 ? static_cast<double>(p.step) / static_cast<double>(p.step_count)
                                           : static_cast<double>(p.frame + 1) / std::max(1, p.frame_count);
  const double rate = p.elapsed_seconds > 0 ? static_cast<double>(p.step) / p.elapsed_seconds : 0.0;
  const double eta = rate > 0 ? static_cast<double>(p.step_count - p.step) / rate : NAN;
  char text[256];
  std::snprintf(text, sizeof(text), "frame %d/%d  t = %.4g/%.4g s  %.0f steps/s  ETA %s  CG %.1f/step",
                p.frame, std::max(0, p.frame_count - 1), p.time, p.duration, rate,
                p.step >= p.step_count ? "0 s" : format_duration(eta).c_str(), cg_per_step_);
  if (!terminal_) {
    char percent[16];
    std::snprintf(percent, sizeof(percent), "%3.0f%%  ", 100.0 * fraction);
    return percent + std::string(text);
  }
  constexpr int kWidth = 24;
  const int filled = static_cast<int>(std::floor(fraction * kWidth));
  std::string bar = "[" + std::string(filled, '#') + std::string(kWidth - filled, '-') + "] ";
  return bar + text;
}

void ProgressPrinter::update(const RunProgress& p) {
  if (!p.frame_written) {
    cg_since_print_ += p.cg_iterations;
    ++steps_since_print_;
  }
  const bool last = p.frame_written && p.frame + 1 >= p.frame_count;
  const int percent = p.step_count > 0 ? static_cast<int>(100 * p.step / p.step_count) : 100;
  bool print;
  if (terminal_)
    print = last || last_print_seconds_ < 0 || p.elapsed_seconds - last_print_seconds_ >= 0.1;
  else
    print = last || last_print_seconds_ < 0 || (p.frame_written && percent >= next_percent_) ||
            p.elapsed_seconds - last_print_seconds_ >= 5.0;
  if (!print) return;
  if (steps_since_print_ > 0) cg_per_step_ = static_cast<double>(cg_since_print_) / steps_since_print_;
  cg_since_print_ = steps_since_print_ = 0;
  last_print_seconds_ = p.elapsed_seconds;
  while (next_percent_ <= percent) next_percent_ += 10;
  if (terminal_) {
    err_ << "\r" << line(p) << "\033[K" << std::flush;
    drawn_ = true;
  } else {
    err_ << line(p) << "\n" << std::flush;
  }
}

void ProgressPrinter::finish() {
  if (terminal_ && drawn_) err_ << "\n" << std::flush;
  drawn_ = false;
}

}  // namespace bristle::cli

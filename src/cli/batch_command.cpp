/// bristle batch SCENE... -o ROOT [-j N] [--render] [--force] [--frames json|binary|compressed] [--quiet] [--json]
///
/// Design note. Each scene runs in its own worker process: this same executable
/// (/proc/self/exe) started with posix_spawn as `bristle run SCENE -o ROOT/<stem>` (then
/// `bristle render ROOT/<stem> -o ROOT/<stem>/images` with --render), its stdout and stderr
/// appended to ROOT/<stem>.log. Processes rather than threads: a scene that crashes or runs
/// out of memory takes only its own worker down, the workers share nothing (each scene is
/// deterministic on its own), and the exit codes of `bristle run` already say what happened
/// (0 complete, 1 the simulation failed, 2 invalid scene). At most N workers run at once; the
/// parent polls them and starts the next scene as one finishes.
///
/// Ctrl-C (SIGINT) or SIGTERM: each worker runs in its own process group, so a Ctrl-C at the
/// terminal reaches the parent alone, and the parent passes the signal on to each running
/// worker exactly once (a second one would end a `bristle run` at once, cli/interrupt.hpp).
/// Every worker then stops within its step, with a manifest saying "interrupted"; no new
/// worker starts; the summary lists those scenes as interrupted and the others as not run,
/// and the exit code is 128 + the signal (130 for Ctrl-C).
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <ostream>
#include <thread>

#include <nlohmann/json.hpp>

#include "bristle/cli/args.hpp"
#include "bristle/scene/limits.hpp"
#include "bristle/cli/command.hpp"
#include "bristle/cli/frames_option.hpp"
#include "bristle/cli/interrupt.hpp"
#include "bristle/cli/progress.hpp"
#include "bristle/io/frame_writer.hpp"
#include "bristle/io/output_reader.hpp"

extern char** environ;

namespace bristle::cli {

namespace {

const char* const kUsage =
    "usage: bristle batch SCENE... -o ROOT [-j N] [--render] [--force] [--frames json|binary|compressed]\n"
    "                     [--quiet] [--json]\n"
    "\n"
    "Runs many scenes, each in its own worker process (`bristle run SCENE -o ROOT/<stem>`,\n"
    "<stem> the scene's file name without .json), at most N at a time, and prints a summary\n"
    "table: scene, status, frames, wall time. Each worker's output goes to ROOT/<stem>.log.\n"
    "Status: complete; failed (the simulation failed; its frames so far are kept); invalid\n"
    "(the scene was refused; the log names the JSON pointer); render failed (--render only);\n"
    "crashed (the worker was killed by a signal); interrupted, not run (Ctrl-C, below).\n"
    "A complete scene whose run printed warnings (about the scene as loaded, or about the run's\n"
    "accuracy: steps above the solver's tolerance, vertices deep in a collider, overlapping or\n"
    "crossing segments; see `bristle run --help`) has them listed under the table, the last 16\n"
    "at most (in --json, each scene's \"warnings\"), and counted in its line on stderr.\n"
    "For batches larger than one machine, see docs/batch.md (GNU parallel and Slurm recipes).\n"
    "\n"
    "Ctrl-C (SIGINT) or SIGTERM stops every running scene within its step (its manifest says\n"
    "\"interrupted\"), starts no more, and prints the summary.\n"
    "\n"
    "options:\n"
    "  -o, --output ROOT  the folder holding one output folder per scene; created if missing\n"
    "  -j, --jobs N       scenes run at once, 1 to 1024 (default: the number of processors)\n"
    "  --render           also render each completed scene into ROOT/<stem>/images/\n"
    "                     (`bristle render`, one job per scene)\n"
    "  --force            reuse non-empty ROOT/<stem> folders (as `bristle run --force`)\n"
    "  --frames F         json (default), binary or compressed: how each run stores its\n"
    "                     frames (as `bristle run --frames`)\n"
    "  --quiet            no line per finished scene on stderr\n"
    "  --json             print the summary as one JSON object instead of a table\n"
    "  -h, --help         show this help\n"
    "\n"
    "exit codes: 0 every scene completed, 1 any scene failed, was invalid or crashed,\n"
    "2 bad usage (no scene, two scenes with the same stem, a non-empty ROOT/<stem> without\n"
    "--force), 130 interrupted by Ctrl-C (143 by SIGTERM)\n";

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

enum class Stage { Waiting, Running, Rendering, Done };

struct Job {
  std::string scene;  // as given
  std::string stem;
  std::string out_dir, log_path;
  Stage stage = Stage::Waiting;
  pid_t pid = -1;
  Clock::time_point start;
  double seconds = 0.0;
  std::string status;  // complete, failed, invalid, render failed, crashed, error, interrupted, not run
  int frames = -1;     // -1: no output folder
  std::vector<std::string> warnings;  // the run's "warning: " lines (complete runs)
};

std::string self_executable() {
  std::error_code error;
  const fs::path self = fs::read_symlink("/proc/self/exe", error);
  if (error) throw std::runtime_error("cannot find the bristle executable (/proc/self/exe): " + error.message());
  return self.string();
}

// Starts `argv` with stdin from /dev/null and stdout and stderr appended to `log_path`.
pid_t spawn_worker(const std::vector<std::string>& argv, const std::string& log_path) {
  const int log = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log < 0) throw std::runtime_error("cannot open " + log_path + ": " + std::strerror(errno));
  std::vector<std::string> args = argv;
  std::vector<char*> raw;
  for (std::string& a : args) raw.push_back(a.data());
  raw.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, log, STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, log, STDERR_FILENO);
  // Its own process group: a Ctrl-C at the terminal reaches the parent only, which passes it
  // on once (see the design note).
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attributes, 0);
  pid_t pid = -1;
  const int rc = ::posix_spawn(&pid, raw[0], &actions, &attributes, raw.data(), environ);
  posix_spawnattr_destroy(&attributes);
  posix_spawn_file_actions_destroy(&actions);
  ::close(log);
  if (rc != 0) throw std::runtime_error("cannot start " + argv[0] + ": " + std::strerror(rc));
  return pid;
}

// The lines of a worker's log that start with `prefix`, without it (at most `limit`).
std::vector<std::string> lines_after(const std::string& log_path, const std::string& prefix, std::size_t limit) {
  std::vector<std::string> found;
  std::ifstream in(log_path);
  std::string line;
  while (found.size() < limit && std::getline(in, line)) {
    if (line.rfind(prefix, 0) != 0) continue;
    found.push_back(line.substr(prefix.size()));
  }
  return found;
}

// The first such line, shortened for the summary's one line per scene.
std::string first_line_after(const std::string& log_path, const std::string& prefix) {
  const std::vector<std::string> lines = lines_after(log_path, prefix, 1);
  if (lines.empty()) return "";
  const std::string& line = lines.front();
  return line.size() > 160 ? line.substr(0, 157) + "..." : line;
}

// The warnings a completed `bristle run` printed: about the scene as loaded, and at its end
// about its own accuracy (unconverged steps, vertices deep in a collider, overlapping or
// crossing segments; docs/cli.md, "bristle run"), so that a batch does not report such a scene
// as plainly complete. The accuracy warnings come last: of many, the last kShownWarnings are
// kept, after a line saying how many earlier ones the log holds.
constexpr std::size_t kShownWarnings = 16;
std::vector<std::string> run_warnings(const Job& job) {
  std::vector<std::string> all = lines_after(job.log_path, "warning: ", std::numeric_limits<std::size_t>::max());
  if (all.size() <= kShownWarnings) return all;
  const std::size_t earlier = all.size() - kShownWarnings + 1;
  std::vector<std::string> shown{std::to_string(earlier) + " earlier warnings are in " + job.log_path};
  shown.insert(shown.end(), all.end() - static_cast<std::ptrdiff_t>(kShownWarnings - 1), all.end());
  return shown;
}

// Why a scene did not complete: its worker's first "error: ..." line, or for an interrupted
// run the line saying where it stopped.
std::string first_error(const Job& job) {
  if (job.status == "interrupted") {
    const std::string where = first_line_after(job.log_path, "interrupted ");
    return where.empty() ? where : "interrupted " + where;
  }
  return first_line_after(job.log_path, "error: ");
}

int frames_written(const std::string& out_dir) {
  try {
    return OutputFolder(out_dir).frame_count();
  } catch (const std::exception&) {
    return -1;
  }
}

std::string pad(const std::string& text, std::size_t width, bool right = false) {
  if (text.size() >= width) return text;
  const std::string fill(width - text.size(), ' ');
  return right ? fill + text : text + fill;
}

std::string seconds_text(double s) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.1f s", s);
  return buffer;
}

class Batch {
 public:
  Batch(std::vector<Job> jobs, int parallel, bool render, bool force, FramesChoice frames, std::string exe,
        const volatile std::sig_atomic_t* stop)
      : jobs_(std::move(jobs)),
        parallel_(parallel),
        render_(render),
        force_(force),
        frames_(frames),
        exe_(std::move(exe)),
        stop_(stop) {}

  // Runs every job; `finished(job)` after each. Returns the signal that interrupted the batch
  // (0: none); the jobs it left unstarted have the status "not run".
  template <class OnFinished>
  int run(OnFinished&& finished) {
    std::size_t next = 0, running = 0;
    while ((next < jobs_.size() && signal_ == 0) || running > 0) {
      if (signal_ == 0 && *stop_ != 0) {
        signal_ = static_cast<int>(*stop_);
        for (const Job& job : jobs_)
          if (job.stage == Stage::Running || job.stage == Stage::Rendering) ::kill(job.pid, signal_);
      }
      while (signal_ == 0 && running < static_cast<std::size_t>(parallel_) && next < jobs_.size()) {
        Job& job = jobs_[next++];
        if (start_run(job))
          ++running;
        else
          finished(job);
      }
      bool any = false;
      for (Job& job : jobs_) {
        if (job.stage != Stage::Running && job.stage != Stage::Rendering) continue;
        int status = 0;
        const pid_t got = ::waitpid(job.pid, &status, WNOHANG);
        if (got == 0) continue;
        if (got < 0 && errno == EINTR) continue;
        any = true;
        if (advance(job, got < 0 ? -1 : status)) {
          --running;
          finished(job);
        }
      }
      if (!any) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    for (Job& job : jobs_) {
      if (job.stage != Stage::Waiting) continue;
      job.stage = Stage::Done;
      job.status = "not run";
    }
    return signal_;
  }

  const std::vector<Job>& jobs() const { return jobs_; }

 private:
  // Starts the job's `bristle run`; false (the job done, status "error") when it cannot start.
  bool start_run(Job& job) {
    job.start = Clock::now();
    // A fresh log per scene; the workers append to it.
    std::ofstream(job.log_path, std::ios::trunc).close();
    std::vector<std::string> argv = {exe_, "run", job.scene, "-o", job.out_dir};
    if (force_) argv.push_back("--force");
    if (frames_.layout != FrameLayout::Json) argv.insert(argv.end(), {"--frames", frames_option_value(frames_)});
    try {
      job.pid = spawn_worker(argv, job.log_path);
      job.stage = Stage::Running;
      return true;
    } catch (const std::exception& e) {
      std::ofstream(job.log_path, std::ios::app) << "error: " << e.what() << "\n";
      job.stage = Stage::Done;
      job.status = "error";
      return false;
    }
  }

  // The worker `job.pid` ended with wait status `status` (-1: could not be waited for).
  // Returns true when the job is done.
  bool advance(Job& job, int status) {
    const bool exited = status >= 0 && WIFEXITED(status);
    const int code = exited ? WEXITSTATUS(status) : -1;
    const bool signalled = status >= 0 && WIFSIGNALED(status);
    // A `bristle run` stopped by Ctrl-C exits with 128 + the signal once its manifest says so.
    // Once the batch is stopped, a worker the signal killed (a render, or a run still loading
    // its scene) and a run that completed but will not be rendered count as interrupted too.
    const bool stopped =
        (exited && (code == interrupted_exit_code(SIGINT) || code == interrupted_exit_code(SIGTERM))) ||
        (signal_ != 0 && (signalled || (job.stage == Stage::Running && exited && code == 0 && render_)));
    if (stopped) {
      job.status = "interrupted";
    } else if (job.stage == Stage::Running) {
      if (exited && code == 0 && render_) {
        std::vector<std::string> argv = {exe_, "render", job.out_dir, "-o", job.out_dir + "/images", "-j", "1"};
        if (force_) argv.push_back("--force");
        try {
          job.pid = spawn_worker(argv, job.log_path);
          job.stage = Stage::Rendering;
          return false;
        } catch (const std::exception& e) {
          std::ofstream(job.log_path, std::ios::app) << "error: " << e.what() << "\n";
          job.status = "render failed";
        }
      } else if (exited) {
        job.status = code == 0 ? "complete" : code == 1 ? "failed" : code == 2 ? "invalid" : "error";
      } else {
        job.status = signalled ? "crashed" : "error";
      }
    } else {
      job.status = exited && code == 0 ? "complete" : signalled ? "crashed" : "render failed";
    }
    job.stage = Stage::Done;
    job.seconds = std::chrono::duration<double>(Clock::now() - job.start).count();
    job.frames = frames_written(job.out_dir);
    if (job.status == "complete") job.warnings = run_warnings(job);
    return true;
  }

  std::vector<Job> jobs_;
  int parallel_;
  bool render_, force_;
  FramesChoice frames_;
  std::string exe_;
  const volatile std::sig_atomic_t* stop_;
  int signal_ = 0;  // the signal that interrupted the batch, once seen
};

int default_jobs() {
  const unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(std::min(n, 64u));
}

int batch(const std::vector<std::string>& args, CommandContext& context) {
  const ParsedArgs parsed =
      parse_args(args, {{"--output", "-o", true}, {"--jobs", "-j", true}, {"--render", "", false},
                        {"--force", "", false}, {"--quiet", "", false}, {"--json", "", false},
                        {"--frames", "", true}});
  if (parsed.positionals.empty()) throw UsageError("missing SCENE (one or more scene files)");
  const auto root = parsed.value("--output");
  if (!root) throw UsageError("missing -o ROOT (the folder for the output folders)");
  if (root->empty()) throw UsageError("-o needs a folder name");
  const int parallel = parsed.integer("--jobs", default_jobs());
  if (parallel < 1 || parallel > kMaxJobs) throw UsageError("-j expects an integer in [1, " + std::to_string(kMaxJobs) + "]");
  const bool force = parsed.has("--force");

  std::vector<Job> jobs;
  std::map<std::string, std::string> stems;
  for (const std::string& scene : parsed.positionals) {
    Job job;
    job.scene = scene;
    job.stem = fs::path(scene).stem().string();
    if (job.stem.empty() || job.stem == "." || job.stem == "..")
      throw UsageError("'" + scene + "' has no file name to name its output folder after");
    const auto [it, fresh] = stems.emplace(job.stem, scene);
    if (!fresh)
      throw UsageError("'" + it->second + "' and '" + scene + "' would share the output folder " +
                       (fs::path(*root) / job.stem).string() + "; rename one of them");
    job.out_dir = (fs::path(*root) / job.stem).string();
    job.log_path = (fs::path(*root) / (job.stem + ".log")).string();
    jobs.push_back(std::move(job));
  }
  std::error_code error;
  if (fs::exists(*root, error) && !fs::is_directory(*root, error)) {
    context.err << "error: " << *root << ": exists and is not a folder\n";
    return kExitUsage;
  }
  // Refuse before anything runs, as `bristle run` would refuse each scene.
  for (const Job& job : jobs) {
    if (!output_folder_is_empty(job.out_dir) && !force) {
      context.err << "error: " << job.out_dir << ": the output folder is not empty; pass --force to replace "
                  << "its frames\n";
      return kExitUsage;
    }
  }
  fs::create_directories(*root, error);
  if (error) {
    context.err << "error: " << *root << ": cannot create the folder: " << error.message() << "\n";
    return kExitFailure;
  }

  Batch runner(std::move(jobs), parallel, parsed.has("--render"), force, frames_option(parsed), self_executable(),
               install_interrupt_handlers());
  const Clock::time_point start = Clock::now();
  std::size_t finished = 0;
  const std::size_t total = runner.jobs().size();
  const int signal = runner.run([&](const Job& job) {
    ++finished;
    if (parsed.has("--quiet")) return;
    context.err << "[" << finished << "/" << total << "] " << job.stem << ": " << job.status;
    if (job.frames >= 0) context.err << ", " << job.frames << " frames";
    if (!job.warnings.empty())
      context.err << ", " << job.warnings.size() << (job.warnings.size() == 1 ? " warning" : " warnings");
    context.err << ", " << seconds_text(job.seconds) << "\n" << std::flush;
  });
  const double wall = std::chrono::duration<double>(Clock::now() - start).count();

  bool all_complete = true;
  std::map<std::string, int> counts;
  for (const Job& job : runner.jobs()) {
    all_complete = all_complete && job.status == "complete";
    ++counts[job.status];
  }
  if (parsed.has("--json")) {
    nlohmann::json out = {{"root", *root}, {"wall_seconds", wall}, {"all_complete", all_complete}};
    out["scenes"] = nlohmann::json::array();
    for (const Job& job : runner.jobs()) {
      nlohmann::json entry = {{"scene", job.scene},        {"stem", job.stem},
                              {"status", job.status},      {"output", job.out_dir},
                              {"log", job.log_path},       {"wall_seconds", job.seconds}};
      entry["frames"] = job.frames >= 0 ? nlohmann::json(job.frames) : nlohmann::json(nullptr);
      if (job.status != "complete") entry["error"] = first_error(job);
      entry["warnings"] = job.warnings;
      out["scenes"].push_back(entry);
    }
    context.out << out.dump(2) << "\n";
  } else {
    std::size_t width = 5;
    for (const Job& job : runner.jobs()) width = std::max(width, job.stem.size());
    context.out << pad("scene", width) << "  " << pad("status", 13) << "  " << pad("frames", 6, true) << "  "
                << pad("wall time", 10, true) << "\n";
    for (const Job& job : runner.jobs()) {
      context.out << pad(job.stem, width) << "  " << pad(job.status, 13) << "  "
                  << pad(job.frames >= 0 ? std::to_string(job.frames) : "-", 6, true) << "  "
                  << pad(seconds_text(job.seconds), 10, true) << "\n";
    }
    context.out << "\n" << total << " scene" << (total == 1 ? "" : "s") << " in " << seconds_text(wall) << ":";
    const char* separator = " ";
    for (const auto& [status, count] : counts) {
      context.out << separator << count << " " << status;
      separator = ", ";
    }
    context.out << "; output and logs in " << *root << "\n";
    for (const Job& job : runner.jobs()) {
      if (job.status == "complete") {
        for (const std::string& warning : job.warnings) context.out << "  " << job.stem << ": warning: " << warning << "\n";
        continue;
      }
      if (job.status == "not run") {
        context.out << "  " << job.stem << ": not started (the batch was interrupted)\n";
        continue;
      }
      const std::string why = first_error(job);
      context.out << "  " << job.stem << ": " << (why.empty() ? "see " + job.log_path : why) << "\n";
    }
  }
  if (signal != 0) {
    context.err << "interrupted (" << signal_name(signal) << "): " << counts["interrupted"] << " running scene"
                << (counts["interrupted"] == 1 ? "" : "s") << " stopped (manifest \"interrupted\"), " << counts["not run"]
                << " not run\n";
    return interrupted_exit_code(signal);
  }
  return all_complete ? kExitSuccess : kExitFailure;
}

}  // namespace

Command make_batch_command() {
  return {"batch", "run many scenes in parallel worker processes and summarise them", kUsage, batch};
}

}  // namespace bristle::cli

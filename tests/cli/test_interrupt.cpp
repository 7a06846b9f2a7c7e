// Ctrl-C (SIGINT) and SIGTERM during `bristle run` and `bristle batch` (cli/interrupt.hpp): the
// real executable is started, signalled once a few frames are out, and must stop with 128 +
// the signal, one line on stderr, and an output folder whose manifest says "interrupted" and
// lists every frame on disk, each whole, readable by compare, export and render.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "bristle/io/atomic_file.hpp"
#include "bristle/io/output_reader.hpp"
#include "io/temp_folder.hpp"
#include "test_paths.hpp"

namespace fs = std::filesystem;
using namespace bristle;

namespace {

std::string bristle_path() { return std::string(test::kBinaryDir) + "/bristle"; }

std::string file_text(const fs::path& path) {
  std::ifstream stream(path, std::ios::binary);
  std::ostringstream text;
  text << stream.rdbuf();
  return text.str();
}

int count_frame_files(const fs::path& frames) {
  int count = 0;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(frames, error))
    if (!is_temporary_file_name(entry.path().filename().string())) ++count;
  return count;
}

// Starts `bristle ARGS...` with stdout and stderr in files, SIGINT and SIGTERM at their default
// action (whatever the test runner left them at), as from an interactive shell.
pid_t start(const std::vector<std::string>& args, const std::string& out_file, const std::string& err_file) {
  // Everything the child needs is built before fork: between fork and exec only
  // async-signal-safe calls (the test process may have OpenMP threads).
  std::vector<std::string> argv = {bristle_path()};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> raw;
  for (std::string& a : argv) raw.push_back(a.data());
  raw.push_back(nullptr);
  const pid_t child = fork();
  if (child != 0) return child;
  signal(SIGINT, SIG_DFL);
  signal(SIGTERM, SIG_DFL);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  const int out = open(out_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  const int err = open(err_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (out < 0 || err < 0) _exit(126);
  dup2(out, STDOUT_FILENO);
  dup2(err, STDERR_FILENO);
  execv(raw[0], raw.data());
  _exit(127);
}

// Waits until `frames` holds at least `count` frame files (or 60 s pass).
void wait_for_frames(const fs::path& frames, int count) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (count_frame_files(frames) < count && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
}

// The wait status of `child`; a child still running after 60 s is killed (and fails the test).
int wait_for(pid_t child) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  int status = 0;
  while (waitpid(child, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      kill(child, SIGKILL);
      waitpid(child, &status, 0);
      FAIL("bristle did not stop within 60 s of the signal");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return status;
}

int exit_code(int status) { return WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status); }

// `bristle ARGS` run to its end, output discarded; its exit code.
int run_to_end(const std::string& args) {
  const int status = std::system((bristle_path() + " " + args + " > /dev/null 2>&1").c_str());
  return exit_code(status);
}

// The interrupted folder `out`: its manifest says so and lists exactly the whole frames on disk.
void check_interrupted_folder(const std::string& out) {
  const OutputFolder read(out);
  CHECK(read.manifest().status == "interrupted");
  CHECK(read.manifest().frame_count == read.frame_count());
  CHECK(read.frame_count() == count_frame_files(fs::path(out) / "frames"));
  CHECK(read.frame_count() >= 3);
  for (int k = 0; k < read.frame_count(); ++k) {
    CAPTURE(k);
    CHECK_NOTHROW(nlohmann::json::parse(file_text(read.frame_path(k))));
    CHECK_NOTHROW(read.frame(k));
  }
  // No temporary file is left: the frame under way when the signal came was finished.
  for (const auto& entry : fs::recursive_directory_iterator(out))
    CHECK_FALSE(is_temporary_file_name(entry.path().filename().string()));
}

}  // namespace

TEST_CASE("cli Ctrl-C stops bristle run: exit 130, one line, manifest \"interrupted\"") {
  REQUIRE_MESSAGE(fs::exists(bristle_path()), "build the bristle executable first: " << bristle_path());
  const std::string scene = std::string(test::kScenesDir) + "/demo.json";
  test::TempFolder folder("cli-sigint");
  const std::string out = folder / "out";

  for (const int signal : {SIGINT, SIGTERM}) {
    CAPTURE(signal);
    fs::remove_all(out);
    const pid_t child = start({"run", scene, "-o", out, "--quiet"}, folder / "stdout.txt", folder / "stderr.txt");
    REQUIRE(child > 0);
    wait_for_frames(fs::path(out) / "frames", 3);
    kill(child, signal);
    const int status = wait_for(child);
    CHECK(exit_code(status) == (signal == SIGINT ? 130 : 143));

    const std::string err = file_text(folder / "stderr.txt");
    CAPTURE(err);
    const OutputFolder read(out);
    const std::string line = std::string("interrupted \\(") + (signal == SIGINT ? "SIGINT" : "SIGTERM") +
                             "\\) at t = [0-9.e-]+ s \\(step [0-9]+ of 750\\): " + std::to_string(read.frame_count()) +
                             " frames written to " + out + ", its manifest says \"interrupted\"\n";
    CHECK(std::regex_match(err, std::regex(line)));
    CHECK(file_text(folder / "stdout.txt").empty());
    check_interrupted_folder(out);
  }

  // The readers take the interrupted folder as they take a complete one (with a note).
  CHECK(run_to_end("compare " + out + " " + out) == 0);
  CHECK(run_to_end("export " + out + " --format vtk -o " + (folder / "vtk")) == 0);
  CHECK(run_to_end("render " + out + " -o " + (folder / "png") + " --frames 0:1 --width 64 --height 36") == 0);
  CHECK(fs::exists(fs::path(folder / "png") / "000001.png"));
}

TEST_CASE("cli Ctrl-C stops bristle batch: its workers stop, the rest are not run, exit 130") {
  REQUIRE_MESSAGE(fs::exists(bristle_path()), "build the bristle executable first: " << bristle_path());
  test::TempFolder folder("cli-batch-sigint");
  const std::string root = folder / "root";
  const std::string demo = std::string(test::kScenesDir) + "/demo.json";
  const std::string other = std::string(test::kScenesDir) + "/curl_2d.json";
  const pid_t child =
      start({"batch", demo, other, "-o", root, "-j", "1"}, folder / "stdout.txt", folder / "stderr.txt");
  REQUIRE(child > 0);
  wait_for_frames(fs::path(root) / "demo" / "frames", 3);
  // The batch parent alone is signalled, as by `kill -INT`: it must pass the signal on.
  kill(child, SIGINT);
  const int status = wait_for(child);
  CHECK(exit_code(status) == 130);

  const std::string out = file_text(folder / "stdout.txt");
  const std::string err = file_text(folder / "stderr.txt");
  CAPTURE(out);
  CAPTURE(err);
  CHECK(std::regex_search(out, std::regex("\ndemo +interrupted +[0-9]+ ")));
  CHECK(std::regex_search(out, std::regex("\ncurl_2d +not run +- ")));
  CHECK(out.find("curl_2d: not started (the batch was interrupted)") != std::string::npos);
  CHECK(out.find("  demo: interrupted (SIGINT) at t = ") != std::string::npos);
  CHECK(err.find("interrupted (SIGINT): 1 running scene stopped (manifest \"interrupted\"), 1 not run\n") !=
        std::string::npos);
  check_interrupted_folder(fs::path(root) / "demo");
  CHECK_FALSE(fs::exists(fs::path(root) / "curl_2d"));
  // The worker, passed the same signal, said where it stopped, in its log.
  CHECK(file_text(fs::path(root) / "demo.log").find("interrupted (SIGINT) at t = ") != std::string::npos);
}

// A run killed with SIGKILL part-way leaves only whole frame files: every frames/NNNNNN.json
// parses, the manifest parses (status "running"), and the reader sees only whole frames.
#include <doctest/doctest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "bristle/io/atomic_file.hpp"
#include "bristle/io/output_reader.hpp"
#include "io/temp_folder.hpp"
#include "test_paths.hpp"

namespace fs = std::filesystem;
using namespace bristle;

namespace {

int count_frame_files(const fs::path& frames) {
  int count = 0;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(frames, error))
    if (!is_temporary_file_name(entry.path().filename().string())) ++count;
  return count;
}

}  // namespace

TEST_CASE("cli a killed run leaves only whole frame files") {
  const std::string bristle = std::string(test::kBinaryDir) + "/bristle";
  REQUIRE_MESSAGE(fs::exists(bristle), "build the bristle executable first: " << bristle);
  const std::string scene = std::string(test::kScenesDir) + "/demo.json";
  test::TempFolder folder("cli-killed");
  const std::string out = folder / "out";

  for (int attempt = 0; attempt < 3; ++attempt) {
    fs::remove_all(out);
    const pid_t child = fork();
    REQUIRE(child >= 0);
    if (child == 0) {
      execl(bristle.c_str(), bristle.c_str(), "run", scene.c_str(), "-o", out.c_str(), "--quiet",
            static_cast<char*>(nullptr));
      _exit(127);
    }
    // Kill it once a few frames are out (different moments on each attempt).
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (count_frame_files(fs::path(out) / "frames") < 3 + 4 * attempt &&
           std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::microseconds(200 + 700 * attempt));
    kill(child, SIGKILL);
    int status = 0;
    waitpid(child, &status, 0);
    REQUIRE(WIFSIGNALED(status));

    // Every file that looks like a frame is whole.
    int frames = 0;
    for (const auto& entry : fs::directory_iterator(fs::path(out) / "frames")) {
      const std::string name = entry.path().filename().string();
      if (is_temporary_file_name(name)) continue;
      CAPTURE(name);
      std::ifstream stream(entry.path());
      CHECK_NOTHROW(nlohmann::json::parse(stream));
      ++frames;
    }
    const OutputFolder read(out);
    CHECK(read.manifest().status == "running");
    CHECK(read.frame_count() == frames);
    CHECK(frames >= 3);
    for (int k = 0; k < read.frame_count(); ++k) CHECK_NOTHROW(read.frame(k));
  }
}

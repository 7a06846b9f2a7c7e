#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "bristle/render/render_error.hpp"
#include "bristle/render/render_frame.hpp"
#include "bristle/render/render_sequence.hpp"
#include "bristle/render/video.hpp"
#include "render/render_test_support.hpp"

using namespace bristle;

namespace {

// Sets PATH for the lifetime of the object.
struct ScopedPath {
  std::string saved;
  bool had = false;
  explicit ScopedPath(const std::string& value) {
    if (const char* p = std::getenv("PATH")) {
      saved = p;
      had = true;
    }
    ::setenv("PATH", value.c_str(), 1);
  }
  ~ScopedPath() {
    if (had) {
      ::setenv("PATH", saved.c_str(), 1);
    } else {
      ::unsetenv("PATH");
    }
  }
};

}  // namespace

TEST_CASE("render video: programs are looked up on PATH") {
  CHECK_FALSE(find_on_path("sh").empty());
  CHECK(find_on_path("no-such-program-bristle").empty());
  CHECK(find_on_path("/bin/sh") == "/bin/sh");
}

TEST_CASE("render video: a clear error when ffmpeg is missing") {
  const std::string dir = test::render_scratch_dir("video_missing");
  std::string message;
  {
    ScopedPath path(dir);  // an empty directory: nothing to run
    CHECK_FALSE(ffmpeg_available());
    try {
      assemble_video(dir + "/%06d.png", 30.0, dir + "/out.mp4");
    } catch (const RenderError& e) {
      message = e.what();
    }
  }
  CHECK(message.find("ffmpeg was not found on PATH") != std::string::npos);
  CHECK_THROWS_AS(assemble_video(dir + "/%06d.png", 0.0, dir + "/out.mp4"), RenderError);
}

TEST_CASE("render video: rendered frames become a video") {
  if (!ffmpeg_available()) {
    MESSAGE("ffmpeg not on PATH: video assembly not exercised");
    return;
  }
  const std::string dir = test::render_scratch_dir("video");
  Manifest m = test::empty_manifest(2);
  m.frame_count = 3;
  std::vector<Frame> frames(3);
  for (int k = 0; k < 3; ++k) {
    Manifest mk = test::empty_manifest(2);
    frames[static_cast<std::size_t>(k)].index = k;
    frames[static_cast<std::size_t>(k)].time = 0.01 * k;
    test::add_straight_rod(mk, frames[static_cast<std::size_t>(k)], "a", Vec3(0, 0, 0),
                           Vec3(0.01, 0.002 * k, 0), 5, 0.0003);
    if (k == 0) m.rods = mk.rods;
  }
  const FrameLoader load = [&](int k) { return frames[static_cast<std::size_t>(k)]; };
  RenderSetup setup;
  setup.options.width = 161;  // odd: the encoder pads to even sizes
  setup.options.height = 100;
  setup.camera = fit_camera(sequence_bounds(m, 3, load), 2, 1.61);
  int seen = 0;
  render_sequence(m, 0, 3, load, setup, dir, [&](int) { ++seen; });
  CHECK(seen == 3);
  CHECK(std::filesystem::exists(dir + "/" + frame_image_name(2)));
  CHECK(frame_image_name(12) == "000012.png");

  assemble_video(dir + "/%06d.png", 10.0, dir + "/clip.mp4");
  CHECK(std::filesystem::file_size(dir + "/clip.mp4") > 0);
  // A pattern that matches nothing: ffmpeg fails and says why.
  CHECK_THROWS_AS(assemble_video(dir + "/nothing_%06d.png", 10.0, dir + "/bad.mp4"), RenderError);
}

#include "bristle/render/video.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <vector>

#include "bristle/render/render_error.hpp"

extern char** environ;

namespace bristle {

namespace {

bool is_executable_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

std::string lower_extension(const std::string& file) {
  const std::size_t slash = file.find_last_of('/');
  const std::size_t dot = file.find_last_of('.');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return "";
  std::string ext = file.substr(dot);
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return ext;
}

std::string format_fps(double fps) {
  std::ostringstream s;
  s.precision(17);
  s << fps;
  return s.str();
}

// The last `lines` lines of a text.
std::string tail(const std::string& text, int lines) {
  std::size_t pos = text.size();
  while (pos > 0 && (text[pos - 1] == '\n' || text[pos - 1] == '\r')) --pos;
  const std::size_t end = pos;
  int seen = 0;
  while (pos > 0) {
    if (text[pos - 1] == '\n' && ++seen == lines) break;
    --pos;
  }
  return text.substr(pos, end - pos);
}

}  // namespace

std::string find_on_path(const std::string& program) {
  if (program.empty()) return "";
  if (program.find('/') != std::string::npos) {
    return is_executable_file(program) ? program : "";
  }
  const char* path_env = std::getenv("PATH");
  const std::string path = path_env ? path_env : "/usr/local/bin:/usr/bin:/bin";
  std::size_t start = 0;
  while (start <= path.size()) {
    std::size_t end = path.find(':', start);
    if (end == std::string::npos) end = path.size();
    std::string dir = path.substr(start, end - start);
    if (dir.empty()) dir = ".";
    const std::string candidate = dir + "/" + program;
    if (is_executable_file(candidate)) return candidate;
    start = end + 1;
  }
  return "";
}

bool ffmpeg_available() { return !find_on_path("ffmpeg").empty(); }

void assemble_video(const std::string& frames_pattern, double fps, const std::string& out_file,
                    int start_number) {
  if (!(fps > 0.0) || !std::isfinite(fps)) {
    throw RenderError("video frame rate must be a positive number, got " + format_fps(fps));
  }
  const std::string ffmpeg = find_on_path("ffmpeg");
  if (ffmpeg.empty()) {
    throw RenderError(
        "cannot make a video: ffmpeg was not found on PATH (install it, e.g. `apt-get install "
        "ffmpeg`, or assemble the PNG frames with another tool)");
  }

  std::vector<std::string> args = {ffmpeg, "-hide_banner", "-loglevel", "error", "-nostdin", "-y",
                                   "-framerate", format_fps(fps), "-start_number",
                                   std::to_string(start_number), "-i", frames_pattern};
  const std::string ext = lower_extension(out_file);
  if (ext == ".mp4" || ext == ".mov" || ext == ".mkv" || ext == ".m4v") {
    // H.264 in yuv420p plays in every player and browser; it needs even frame sizes.
    for (const char* a : {"-c:v", "libx264", "-preset", "medium", "-crf", "18", "-pix_fmt",
                          "yuv420p", "-vf", "pad=ceil(iw/2)*2:ceil(ih/2)*2"}) {
      args.emplace_back(a);
    }
    if (ext != ".mkv") {
      args.emplace_back("-movflags");
      args.emplace_back("+faststart");
    }
  } else if (ext == ".webm") {
    for (const char* a : {"-c:v", "libvpx-vp9", "-b:v", "0", "-crf", "32", "-pix_fmt", "yuv420p"}) {
      args.emplace_back(a);
    }
  } else if (ext == ".gif") {
    // One palette for the whole clip, built from what changes between frames; ordered
    // (Bayer) dithering and re-encoding only the changed rectangle of each frame keep a GIF
    // of thin fibres on a flat background a fraction of the size of ffmpeg's default
    // error-diffusion dither, whose noise differs in every frame.
    args.emplace_back("-vf");
    args.emplace_back(
        "split[a][b];[a]palettegen=stats_mode=diff[p];"
        "[b][p]paletteuse=dither=bayer:bayer_scale=5:diff_mode=rectangle");
  }
  // "--" is not understood by ffmpeg; a name starting with '-' is made a path instead.
  args.push_back(!out_file.empty() && out_file[0] == '-' ? "./" + out_file : out_file);

  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  int err_pipe[2];
  if (::pipe(err_pipe) != 0) {
    throw RenderError(std::string("cannot run ffmpeg: pipe: ") + std::strerror(errno));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, err_pipe[1], STDERR_FILENO);
  posix_spawn_file_actions_addclose(&actions, err_pipe[0]);
  posix_spawn_file_actions_addclose(&actions, err_pipe[1]);
  pid_t pid = 0;
  const int rc = ::posix_spawn(&pid, ffmpeg.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(err_pipe[1]);
  if (rc != 0) {
    ::close(err_pipe[0]);
    throw RenderError("cannot run " + ffmpeg + ": " + std::strerror(rc));
  }

  std::string errors;
  char buffer[4096];
  for (;;) {
    const ssize_t got = ::read(err_pipe[0], buffer, sizeof buffer);
    if (got > 0) {
      errors.append(buffer, static_cast<std::size_t>(got));
    } else if (got == 0 || errno != EINTR) {
      break;
    }
  }
  ::close(err_pipe[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::ostringstream msg;
    msg << "ffmpeg failed to make '" << out_file << "' from '" << frames_pattern << "' ("
        << (WIFEXITED(status) ? "exit status " + std::to_string(WEXITSTATUS(status))
                              : "killed by signal " + std::to_string(WTERMSIG(status)))
        << ")";
    const std::string last = tail(errors, 5);
    if (!last.empty()) msg << ":\n" << last;
    throw RenderError(msg.str());
  }
}

}  // namespace bristle

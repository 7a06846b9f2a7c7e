/// bristle render OUT -o DIR [--width W] [--height H] [camera options] [--video FILE] [-j N]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <ostream>
#include <sstream>
#include <thread>
#include <tuple>
#include <utility>

#include "bristle/cli/args.hpp"
#include "bristle/scene/limits.hpp"
#include "bristle/cli/command.hpp"
#include "bristle/cli/progress.hpp"
#include "bristle/io/atomic_file.hpp"
#include "bristle/io/output_error.hpp"
#include "bristle/io/output_reader.hpp"
#include "bristle/render/render_error.hpp"
#include "bristle/render/render_frame.hpp"
#include "bristle/render/render_sequence.hpp"
#include "bristle/render/scene_render.hpp"
#include "bristle/render/video.hpp"

namespace bristle::cli {

namespace {

const char* const kUsage =
    "usage: bristle render OUT -o DIR [--width W] [--height H] [--video FILE] [-j N] [options]\n"
    "\n"
    "Draws every frame of the output folder OUT as DIR/NNNNNN.png (six digits, from 000000),\n"
    "ray traced (Embree): rods as round tubes of their true radius, one colour per rod, with\n"
    "hair-like (Kajiya-Kay) lighting; colliders (moved by their handles) and the brush of each\n"
    "handle that carries rods; shadows from one key light, contact shadows on colliders;\n"
    "rods antialiased by their exact pixel coverage, 4 samples at other edges; the time in a\n"
    "band along the top.\n"
    "The camera comes from the scene's \"render\" block (recorded in OUT/manifest.json) or\n"
    "is fitted to the bounds of all frames; 2D scenes are drawn in their plane. The options\n"
    "below override the render block.\n"
    "See docs/rendering.md. Progress goes to stderr.\n"
    "\n"
    "options:\n"
    "  -o, --output DIR       the image folder; created if missing; must be empty unless --force\n"
    "  --width W, --height H  image size [px] (default 960x540; one alone keeps the aspect)\n"
    "  --camera TYPE          perspective, orthographic, or auto (ignore the render block's\n"
    "                         camera and fit one to the frames)\n"
    "  --position X,Y,Z       the eye [m] (3D only)\n"
    "  --target X,Y,Z         the point at the image centre [m] (2D: X,Y)\n"
    "  --up X,Y,Z             the world direction drawn upwards (default: against gravity)\n"
    "  --fov DEG              vertical field of view of a perspective camera (default 30);\n"
    "                         the eye stays where it is, so a smaller fov zooms in\n"
    "  --view-height M        visible height of an orthographic camera [m]\n"
    "  --min-line-width PX    widen rods thinner than PX pixels to PX (default: none, every\n"
    "                         rod as thick as it is)\n"
    "  --background COLOR     \"#rrggbb\" (default #f5f3ef)\n"
    "  --no-time-stamp        no time stamp band: the picture fills the image\n"
    "  --video FILE           also assemble the frames into FILE with ffmpeg (.mp4, .webm,\n"
    "                         .gif, ...); ffmpeg must be installed\n"
    "  --fps F                video frame rate (default: the render block's \"fps\", else real\n"
    "                         time 1/frame_dt when that is between 5 and 60, else 30)\n"
    "  --frames K|FIRST:LAST  draw only these frames (inclusive; FIRST: or :LAST leave one end\n"
    "                         open); the camera is still fitted to every frame\n"
    "  -j, --jobs N           frames drawn in parallel, 1 to 1024 (default: the number of\n"
    "                         processors); the images are the same whatever N\n"
    "  --force                reuse a non-empty DIR: its NNNNNN.png files are removed first\n"
    "                         (other files are left alone)\n"
    "  --quiet                no progress and no summary line\n"
    "  -h, --help             show this help\n"
    "\n"
    "exit codes: 0 rendered, 1 drawing, writing or video assembly failed, 2 bad usage, an\n"
    "unreadable OUT, a bad render block, a non-empty DIR without --force, or --video without\n"
    "ffmpeg\n";

namespace fs = std::filesystem;

// "x,y,z" or "x,y" as a vector (z = 0).
Vec3 parse_vector(const std::string& flag, const std::string& text) {
  std::vector<double> values;
  std::stringstream stream(text);
  std::string item;
  while (std::getline(stream, item, ',')) {
    try {
      std::size_t used = 0;
      const double x = std::stod(item, &used);
      if (used != item.size() || !std::isfinite(x)) throw std::invalid_argument(item);
      values.push_back(x);
    } catch (const std::exception&) {
      throw UsageError(flag + " expects numbers separated by commas (X,Y,Z), got '" + text + "'");
    }
  }
  if (values.size() != 2 && values.size() != 3)
    throw UsageError(flag + " expects 2 or 3 numbers separated by commas (X,Y,Z), got '" + text + "'");
  return Vec3(values[0], values[1], values.size() == 3 ? values[2] : 0.0);
}

double positive_number(const ParsedArgs& parsed, const std::string& flag) {
  const double x = parsed.number(flag, 0.0);
  if (!(x > 0.0)) throw UsageError(flag + " must be a positive number");
  return x;
}

bool is_frame_image(const std::string& name) {
  // NNNNNN.png, or the temporary .NNNNNN.png.tmp an interrupted render left.
  std::string core = name;
  if (is_temporary_file_name(core)) core = core.substr(1, core.size() - 5);
  if (core.size() < 10 || core.compare(core.size() - 4, 4, ".png") != 0) return false;
  return std::all_of(core.begin(), core.end() - 4, [](char c) { return c >= '0' && c <= '9'; });
}

bool folder_is_empty(const fs::path& dir) {
  std::error_code error;
  return !fs::exists(dir, error) || fs::is_empty(dir, error);
}

// The frame images a previous render left in `dir` (so a video made from the folder never
// picks up stale frames beyond the new count).
void remove_frame_images(const fs::path& dir) {
  std::error_code error;
  if (!fs::is_directory(dir, error)) return;
  std::vector<fs::path> doomed;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, error))
    if (entry.is_regular_file(error) && is_frame_image(entry.path().filename().string())) doomed.push_back(entry.path());
  for (const fs::path& path : doomed) fs::remove(path, error);
}

// ffmpeg's image2 pattern for the frames: '%' in the folder name must be doubled.
std::string frames_pattern(const std::string& dir) {
  std::string escaped;
  for (char c : dir) escaped += c == '%' ? std::string("%%") : std::string(1, c);
  return escaped + "/%06d.png";
}

// --frames K or FIRST:LAST (inclusive, either end may be left out) -> [first, end).
std::pair<int, int> frame_range(const std::string& text, int count) {
  const auto bad = [&]() {
    return UsageError("--frames expects K or FIRST:LAST with frame indices in 0.." + std::to_string(count - 1) +
                      ", got '" + text + "'");
  };
  const auto index = [&](const std::string& part, int fallback) {
    if (part.empty()) return fallback;
    if (part.find_first_not_of("0123456789") != std::string::npos || part.size() > 9) throw bad();
    return std::stoi(part);
  };
  const std::size_t colon = text.find(':');
  const int first = index(text.substr(0, colon), 0);
  const int last = colon == std::string::npos ? first : index(text.substr(colon + 1), count - 1);
  if (text.empty() || first > last || last >= count) throw bad();
  return {first, last + 1};
}

// Pixels of one image (about 12 bytes each while traced, one image per job in memory): 1.2 GB.
constexpr double kMaxImagePixels = 1e8;
// Frames kept in memory between the camera fit and the drawing: at most this many vertices in
// all (24 bytes each: 48 MB).
constexpr std::size_t kKeptVertices = 2000000;

// The camera frames the sequence with squared distances: beyond this coordinate they would
// overflow a double and the projection would divide by infinity (docs/limits.md). Scenes that
// start beyond it are refused (scene/limits.hpp); a run can still move a rod there.
constexpr double kMaxDrawableCoordinate = kMaxCoordinate;

/// `frame` unchanged, or an OutputError naming `path` and the pointer of the first position
/// too far out to draw.
Frame drawable(Frame frame, const std::string& path) {
  for (std::size_t r = 0; r < frame.rods.size(); ++r)
    for (std::size_t i = 0; i < frame.rods[r].positions.size(); ++i)
      for (int k = 0; k < 3; ++k) {
        const double x = frame.rods[r].positions[i][k];
        if (!(std::abs(x) <= kMaxDrawableCoordinate)) {
          char value[32];
          std::snprintf(value, sizeof value, "%.6g", x);
          throw OutputError(path, "/rods/" + std::to_string(r) + "/positions/" + std::to_string(i) + "/" +
                                      std::to_string(k) + ": a coordinate of " + value +
                                      " m is too far out to draw (at most 1e100 m, docs/limits.md)");
        }
      }
  return frame;
}

bool camera_is_finite(const Camera& camera) {
  return camera.position.allFinite() && camera.target.allFinite() && camera.up.allFinite() &&
         std::isfinite(camera.ortho_height) && std::isfinite(camera.fov_deg);
}

int default_jobs() {
  const unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(std::min(n, 64u));
}

/// Frames drawn so far on stderr: a bar redrawn in place on a terminal, a line every 10%
/// otherwise.
class FrameProgress {
 public:
  FrameProgress(std::ostream& err, bool terminal, int total)
      : err_(err), terminal_(terminal), total_(total), start_(std::chrono::steady_clock::now()) {}

  void update(int done) {
    const double elapsed = seconds();
    const int percent = total_ > 0 ? 100 * done / total_ : 100;
    const bool last = done >= total_;
    if (terminal_) {
      if (!last && elapsed - last_print_ < 0.1) return;
    } else if (!last && percent < next_percent_) {
      return;
    }
    while (next_percent_ <= percent) next_percent_ += 10;
    last_print_ = elapsed;
    const double rate = elapsed > 0 ? done / elapsed : 0.0;
    const double eta = rate > 0 ? (total_ - done) / rate : NAN;
    char text[160];
    std::snprintf(text, sizeof text, "frame %d/%d  %.1f frames/s  ETA %s", done, total_, rate,
                  last ? "0 s" : format_duration(eta).c_str());
    if (terminal_) {
      constexpr int kWidth = 24;
      const int filled = total_ > 0 ? kWidth * done / total_ : kWidth;
      err_ << "\r[" << std::string(filled, '#') << std::string(kWidth - filled, '-') << "] " << text << "\033[K"
           << std::flush;
      drawn_ = true;
    } else {
      char line[16];
      std::snprintf(line, sizeof line, "%3d%%  ", percent);
      err_ << line << text << "\n" << std::flush;
    }
  }
  /// Counts time from now (after the pass that fits the camera).
  void restart() { start_ = std::chrono::steady_clock::now(); }
  void finish() {
    if (drawn_) err_ << "\n" << std::flush;
    drawn_ = false;
  }
  double seconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }

 private:
  std::ostream& err_;
  bool terminal_;
  int total_;
  std::chrono::steady_clock::time_point start_;
  double last_print_ = -1.0;
  int next_percent_ = 10;
  bool drawn_ = false;
};

// The command-line options laid over the scene's render block.
void apply_overrides(const ParsedArgs& parsed, int dimension, RenderBlock& block) {
  const bool flat = dimension == 2;
  if (const auto type = parsed.value("--camera")) {
    if (*type == "auto") {
      block.camera_type.reset();
      block.position.reset();
      block.target.reset();
      block.up.reset();
      block.fov_deg.reset();
      block.ortho_height.reset();
    } else if (*type == "perspective" || *type == "orthographic") {
      if (flat && *type == "perspective")
        throw UsageError("a 2D scene is drawn in its plane with an orthographic camera; --camera perspective "
                         "needs a 3D scene");
      block.camera_type = *type == "perspective" ? ProjectionType::Perspective : ProjectionType::Orthographic;
    } else {
      throw UsageError("--camera expects perspective, orthographic or auto, got '" + *type + "'");
    }
  }
  if (flat && (parsed.has("--position") || parsed.has("--fov")))
    throw UsageError("a 2D scene is drawn in its plane, seen from +z; use --target, --up and --view-height");
  if (const auto v = parsed.value("--position")) block.position = parse_vector("--position", *v);
  if (const auto v = parsed.value("--target")) block.target = parse_vector("--target", *v);
  if (const auto v = parsed.value("--up")) {
    block.up = parse_vector("--up", *v);
    if (block.up->norm() == 0.0) throw UsageError("--up must not be the zero vector");
  }
  if (parsed.has("--fov")) {
    const double fov = positive_number(parsed, "--fov");
    if (!(fov < 180.0)) throw UsageError("--fov must be in (0, 180) degrees");
    block.fov_deg = fov;
  }
  if (parsed.has("--view-height")) block.ortho_height = positive_number(parsed, "--view-height");
  if (block.position && block.target && *block.position == *block.target)
    throw UsageError("the camera's position and target coincide");
  if (parsed.has("--min-line-width")) block.min_line_width = positive_number(parsed, "--min-line-width");
  if (const auto v = parsed.value("--background")) {
    try {
      block.background = parse_color_hex(*v);
    } catch (const RenderError&) {
      throw UsageError("--background expects a colour \"#rrggbb\", got '" + *v + "'");
    }
  }
  if (parsed.has("--no-time-stamp")) block.time_stamp = false;
  // Size: both given, or one with the other following the aspect of the block (or default).
  const bool w = parsed.has("--width"), h = parsed.has("--height");
  if (w || h) {
    const RenderOptions defaults;
    const double base_w = block.width.value_or(defaults.width), base_h = block.height.value_or(defaults.height);
    const int width = parsed.integer("--width", 0), height = parsed.integer("--height", 0);
    if ((w && (width < 1 || width > 32767)) || (h && (height < 1 || height > 32767)))
      throw UsageError("--width and --height must be between 1 and 32767 pixels");
    block.width = w ? width : std::max(1, static_cast<int>(std::lround(height * base_w / base_h)));
    block.height = h ? height : std::max(1, static_cast<int>(std::lround(width * base_h / base_w)));
  }
}

double video_fps(const ParsedArgs& parsed, const RenderBlock& block, double frame_dt) {
  if (parsed.has("--fps")) return positive_number(parsed, "--fps");
  if (block.fps) return *block.fps;
  const double real_time = frame_dt > 0.0 ? 1.0 / frame_dt : 0.0;
  return real_time >= 5.0 && real_time <= 60.0 ? real_time : 30.0;
}

int render(const std::vector<std::string>& args, CommandContext& context) {
  const ParsedArgs parsed = parse_args(
      args, {{"--output", "-o", true},       {"--width", "", true},       {"--height", "", true},
             {"--camera", "", true},         {"--position", "", true},    {"--target", "", true},
             {"--up", "", true},             {"--fov", "", true},         {"--view-height", "", true},
             {"--min-line-width", "", true}, {"--background", "", true},  {"--no-time-stamp", "", false},
             {"--video", "", true},          {"--fps", "", true},         {"--jobs", "-j", true},
             {"--frames", "", true},
             {"--force", "", false},         {"--quiet", "", false}});
  expect_positionals(parsed, {"OUT"});
  const auto dir = parsed.value("--output");
  if (!dir) throw UsageError("missing -o DIR (the folder for the images)");
  if (dir->empty()) throw UsageError("-o needs a folder name");
  const int jobs = parsed.integer("--jobs", default_jobs());
  if (jobs < 1 || jobs > kMaxJobs) throw UsageError("-j expects an integer in [1, " + std::to_string(kMaxJobs) + "]");
  const auto video = parsed.value("--video");
  if (video && video->empty()) throw UsageError("--video needs a file name");
  const bool quiet = parsed.has("--quiet"), force = parsed.has("--force");

  // Everything that can be refused is checked before a single image is drawn.
  const OutputFolder folder(parsed.positionals[0]);
  const Manifest& manifest = folder.manifest();
  const int frames = folder.frame_count();
  if (frames == 0) {
    context.err << "error: " << folder.dir() << ": the output folder holds no frames; nothing to render\n";
    return kExitUsage;
  }
  int first = 0, end = frames;
  if (const auto range = parsed.value("--frames")) std::tie(first, end) = frame_range(*range, frames);
  RenderSetup setup;
  RenderBlock block;
  try {
    setup.colliders = colliders_from_scene(manifest.scene);
    setup.handles = handles_from_scene(manifest.scene, manifest);
    block = parse_render_block(manifest.scene);
  } catch (const RenderError& error) {
    context.err << "error: " << folder.dir() << "/manifest.json: " << error.what() << "\n";
    return kExitUsage;
  }
  apply_overrides(parsed, manifest.dimension, block);
  const double fps = video_fps(parsed, block, manifest.frame_dt);
  if (video && !ffmpeg_available()) {
    context.err << "error: --video needs ffmpeg, which was not found on PATH; install it (Debian: "
                   "apt-get install ffmpeg, or bash tools/install-deps.sh) or leave out --video. "
                   "Nothing was rendered.\n";
    return kExitUsage;
  }
  std::error_code error;
  if (fs::exists(*dir, error) && !fs::is_directory(*dir, error)) {
    context.err << "error: " << *dir << ": exists and is not a folder\n";
    return kExitUsage;
  }
  if (!folder_is_empty(*dir) && !force) {
    context.err << "error: " << *dir << ": the image folder is not empty; pass --force to replace its "
                << "NNNNNN.png frames (other files are kept)\n";
    return kExitUsage;
  }
  if (manifest.status != "complete")
    context.err << "note: " << folder.dir() << " is not a complete run (status \"" << manifest.status
                << "\"); rendering the " << frames << " frames it holds\n";

  try {
    const FrameLoader read = [&folder](int k) { return drawable(folder.frame(k), folder.frame_path(k)); };
    // The frames read to fit the camera are kept for drawing when they are few enough (at most
    // kKeptVertices vertices in all, positions only), so they are not parsed twice: parsing
    // was about a tenth of the demo's drawing time. Longer runs are read again, one at a time.
    std::size_t vertices = 0;
    for (const RodInfo& rod : manifest.rods) vertices += static_cast<std::size_t>(std::max(0, rod.vertex_count));
    std::vector<std::optional<Frame>> kept(vertices * static_cast<std::size_t>(frames) <= kKeptVertices
                                               ? static_cast<std::size_t>(frames)
                                               : 0);
    const FrameLoader fit_load = [&](int k) {
      Frame frame = read(k);
      if (!kept.empty()) {
        Frame copy = frame;
        for (RodFrame& rod : copy.rods) rod.velocities.clear();
        copy.stats = nlohmann::json::object();
        kept[static_cast<std::size_t>(k)] = std::move(copy);  // each k by one thread only
      }
      return frame;
    };
    // Each frame is drawn once: its kept copy is moved out.
    const FrameLoader load = [&](int k) {
      if (kept.empty() || !kept[static_cast<std::size_t>(k)]) return read(k);
      Frame frame = std::move(*kept[static_cast<std::size_t>(k)]);
      kept[static_cast<std::size_t>(k)].reset();
      return frame;
    };
    FrameProgress progress(context.err, context.err_is_terminal, end - first);
    // The camera sees every frame: fitted to the box of the whole sequence, it stays still.
    // Reading them all also refuses a damaged frame before any image is written.
    std::vector<PaddedPoint> points;
    const Bounds bounds = sequence_bounds(manifest, frames, fit_load, jobs, &points);
    apply_render_block(block, setup.options);
    // Each side may be up to 32767 pixels, but a 32767 x 32767 image would take 4 GB per job.
    if (static_cast<double>(setup.options.width) * setup.options.height > kMaxImagePixels) {
      context.err << "error: " << setup.options.width << " x " << setup.options.height << " pixels: at most "
                  << static_cast<long long>(kMaxImagePixels) << " pixels per image (docs/limits.md)\n";
      return kExitUsage;
    }
    const double aspect = view_aspect(setup.options);
    setup.camera = resolve_camera(block, bounds, manifest.dimension, aspect, scene_up(manifest.scene), points);
    if (!camera_is_finite(setup.camera)) {
      context.err << "error: " << folder.dir() << "/manifest.json: /scene/render/camera: the camera cannot be placed "
                  << "(its position or view overflows a double)\n";
      return kExitUsage;
    }
    if (force) remove_frame_images(*dir);
    fs::create_directories(*dir, error);
    if (error) {
      context.err << "error: " << *dir << ": cannot create the folder: " << error.message() << "\n";
      return kExitFailure;
    }
    const double fit_seconds = progress.seconds();
    progress.restart();
    std::function<void(int)> report;
    if (!quiet) report = [&progress](int done) { progress.update(done); };
    render_sequence(manifest, first, end, load, setup, *dir, report, jobs);
    progress.finish();
    const double seconds = progress.seconds();
    if (!quiet) {
      char line[256];
      const int drawn = end - first;
      std::snprintf(line, sizeof line,
                    "%d frame%s of %dx%d px in %.3g s, %.3g frames/s with %d job%s; %.3g s reading %d frames "
                    "to fit the camera",
                    drawn, drawn == 1 ? "" : "s", setup.options.width, setup.options.height, seconds,
                    seconds > 0 ? drawn / seconds : 0.0, jobs, jobs == 1 ? "" : "s", fit_seconds, frames);
      context.out << "rendered: " << *dir << " (" << line << ")\n";
    }
    if (video) {
      assemble_video(frames_pattern(*dir), fps, *video, first);
      if (!quiet) {
        char line[120];
        std::snprintf(line, sizeof line, "%d frames at %.4g fps", end - first, fps);
        context.out << "video: " << *video << " (" << line << ")\n";
      }
    }
  } catch (const RenderError& failure) {
    context.err << "error: " << failure.what() << "\n";
    return kExitFailure;
  }
  return kExitSuccess;
}

}  // namespace

Command make_render_command() {
  return {"render", "draw every frame of an output folder as a PNG image (and a video)", kUsage, render};
}

}  // namespace bristle::cli

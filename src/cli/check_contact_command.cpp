/// bristle check-contact OUT [--overlap-tolerance F] [--threads N]
///
/// Reads an output folder frame by frame and checks it with contact/contact_check.hpp:
/// overlaps at each frame, crossings between consecutive frames (docs/contact.md, "Checking
/// a run").
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bristle/cli/args.hpp"
#include "bristle/cli/command.hpp"
#include "bristle/contact/contact_check.hpp"
#include "bristle/io/output_error.hpp"
#include "bristle/io/output_reader.hpp"
#include "bristle/runner/thread_count.hpp"
#include "bristle/scene/limits.hpp"
#include "bristle/scene/load_scene.hpp"
#include "bristle/scene/scene_error.hpp"

namespace bristle::cli {

namespace {

const char* const kUsage =
    "usage: bristle check-contact OUT [--overlap-tolerance F] [--threads N]\n"
    "\n"
    "Checks the frames of the output folder OUT for rods inside or through each other\n"
    "(docs/contact.md, \"Checking a run\"). The pairs checked are those rod-rod contact acts\n"
    "on: segments of different rods, and with rod_contact.self (the default) segments of one\n"
    "rod that share no vertex and have more than pi r of rest length between them. Radii\n"
    "come from OUT/manifest.json, rest lengths and self from the scene it records; a run\n"
    "without rod_contact is checked the same way. Two failures are looked for:\n"
    "\n"
    "  overlap   at a frame, two segments whose centre lines are closer than\n"
    "            r_a + r_b - F min(r_a, r_b): capsules inside each other by more than F of\n"
    "            the smaller radius\n"
    "  crossing  between two consecutive frames, two segments whose centre lines meet while\n"
    "            every vertex moves on the straight line from its position at one frame to\n"
    "            its position at the next. That is backward Euler's motion over a step: with\n"
    "            frame_dt = dt it is the solver's own path, which rod contact keeps clear; with\n"
    "            frame_dt > dt it stands in for the steps between (a rod that went around\n"
    "            another in those steps can appear to pass through it)\n"
    "\n"
    "Prints the frames checked, the deepest overlap (a fraction of the smaller radius, with\n"
    "its frame, rods and segments) and how many overlaps and crossings there were, listing\n"
    "the first few. A run with rod contact also counts crossings itself, over each step's own\n"
    "straight motion (the frames' rod_contact.crossings): that count is printed beside, and\n"
    "where frame_dt > dt or steps were split it tells real crossings from the frame-to-frame\n"
    "line's. The exit code goes by the frames alone.\n"
    "\n"
    "options:\n"
    "  --overlap-tolerance F  the overlap allowed, a fraction of the smaller radius, >= 0\n"
    "                         (default 0.01)\n"
    "  --threads N            threads for the pair tests, 1 to 1024 (default 1; at most the\n"
    "                         hardware threads); the result is the same for every N\n"
    "  -h, --help             show this help\n"
    "\n"
    "exit codes: 0 no overlap beyond F and no crossing, 1 overlaps or crossings found,\n"
    "2 bad usage or an unreadable output folder\n";

constexpr int kListed = 5;  // violations listed of each kind

std::string number(double x) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g", x);
  return text;
}

std::string pair_text(const Manifest& manifest, int rod_a, int segment_a, int rod_b, int segment_b) {
  return "rod '" + manifest.rods[rod_a].name + "' segment " + std::to_string(segment_a) + " and rod '" +
         manifest.rods[rod_b].name + "' segment " + std::to_string(segment_b);
}

CentreLines centre_lines(const Frame& frame) {
  CentreLines x;
  x.reserve(frame.rods.size());
  for (const RodFrame& rod : frame.rods) x.push_back(rod.positions);
  return x;
}

struct OverlapSeen {
  int frame = 0;
  SegmentPairOverlap overlap;
};
struct CrossingSeen {
  int frame = 0;  // from this frame to the next
  SegmentPairCrossing crossing;
};

int check_contact(const std::vector<std::string>& args, CommandContext& context) {
  const ParsedArgs parsed = parse_args(args, {{"--overlap-tolerance", "", true}, {"--threads", "", true}});
  expect_positionals(parsed, {"OUT"});
  const double tolerance = parsed.number("--overlap-tolerance", 0.01);
  if (!(tolerance >= 0.0)) throw UsageError("--overlap-tolerance must be >= 0");
  int threads = parsed.integer("--threads", 1);
  if (threads < 1 || threads > kMaxThreads)
    throw UsageError("--threads expects an integer in [1, " + std::to_string(kMaxThreads) + "]");
  const int hardware = hardware_threads();
  if (hardware > 0 && threads > hardware) {
    context.err << "note: --threads " << threads << " is more than the " << hardware
                << " hardware threads: using " << hardware << "\n";
    threads = hardware;
  }

  const OutputFolder folder(parsed.positionals[0]);
  const Manifest& manifest = folder.manifest();
  const int frames = folder.frame_count();
  if (frames == 0) {
    context.err << "error: " << folder.dir() << ": the output folder holds no frames; nothing to check\n";
    return kExitUsage;
  }
  if (manifest.status != "complete")
    context.err << "note: " << folder.dir() << " is not a complete run (status \"" << manifest.status
                << "\"); checking the " << frames << " frames it holds\n";

  // The recorded scene gives what the manifest does not hold: rest lengths and rod_contact.self
  // (the loader is the one place that knows their defaults and generators).
  const std::string manifest_path = folder.dir() + "/manifest.json";
  Scene scene;
  try {
    scene = load_scene_from_string(manifest.scene.dump(), manifest_path);
  } catch (const SceneError& error) {
    throw OutputError(manifest_path, "/scene" + error.pointer() + ": the recorded scene does not load: " +
                                         error.message());
  }
  const std::vector<Rod>& rods = scene.model.rods;
  if (rods.size() != manifest.rods.size())
    throw OutputError(manifest_path, "/scene: the recorded scene has " + std::to_string(rods.size()) +
                                         " rods, the manifest lists " + std::to_string(manifest.rods.size()));
  std::vector<ContactCheckRod> check_rods;
  for (std::size_t r = 0; r < rods.size(); ++r) {
    if (rods[r].vertex_count() != manifest.rods[r].vertex_count)
      throw OutputError(manifest_path, "/rods/" + std::to_string(r) + ": rod '" + manifest.rods[r].name + "' has " +
                                           std::to_string(manifest.rods[r].vertex_count) +
                                           " vertices, the recorded scene " + std::to_string(rods[r].vertex_count()));
    check_rods.push_back({manifest.rods[r].radius, rods[r].rest_lengths});
  }
  const bool self = scene.model.rod_contact.self;
  const ContactChecker checker(std::move(check_rods), self, threads);

  long long overlap_count = 0;
  int overlap_frames = 0;
  std::vector<OverlapSeen> first_overlaps;
  OverlapSeen deepest;
  bool has_deepest = false;
  long long crossing_count = 0, undecided = 0;
  std::vector<CrossingSeen> first_crossings;
  auto check_frame = [&](int k, const CentreLines& x) {
    const FrameOverlaps result = checker.overlaps(x, tolerance);
    if (result.has_deepest && (!has_deepest || result.deepest.depth > deepest.overlap.depth)) {
      deepest = {k, result.deepest};
      has_deepest = true;
    }
    if (!result.beyond.empty()) ++overlap_frames;
    overlap_count += static_cast<long long>(result.beyond.size());
    for (const SegmentPairOverlap& o : result.beyond)
      if (static_cast<int>(first_overlaps.size()) < kListed) first_overlaps.push_back({k, o});
  };

  // The run's own count of crossings, step by step (frames' stats rod_contact.crossings, since
  // 2026-12; absent in older folders and without rod contact), and its substeps.
  long long run_crossings = 0, steps_taken = 0, substeps_taken = 0;
  bool run_counted = frames > 1;
  CentreLines previous = centre_lines(folder.frame(0));
  check_frame(0, previous);
  for (int k = 1; k < frames; ++k) {
    const Frame frame = folder.frame(k);
    const nlohmann::json& stats = frame.stats;
    const auto counted = stats.find("rod_contact");
    if (counted != stats.end() && counted->contains("crossings") && (*counted)["crossings"].is_number_integer())
      run_crossings += (*counted)["crossings"].get<long long>();
    else
      run_counted = false;
    if (stats.contains("steps") && stats["steps"].is_number_integer()) steps_taken += stats["steps"].get<long long>();
    if (stats.contains("substeps") && stats["substeps"].is_number_integer())
      substeps_taken += stats["substeps"].get<long long>();
    CentreLines current = centre_lines(frame);
    for (const SegmentPairCrossing& c : checker.crossings(previous, current)) {
      ++crossing_count;
      if (c.undecided) ++undecided;
      if (static_cast<int>(first_crossings.size()) < kListed) first_crossings.push_back({k - 1, c});
    }
    check_frame(k, current);
    previous = std::move(current);
  }

  std::ostream& out = context.out;
  out << "checked " << frames << " frame" << (frames == 1 ? "" : "s") << " of " << folder.dir() << " (\""
      << manifest.name << "\"): " << manifest.rods.size() << " rods, " << checker.segment_count() << " segments, "
      << (scene.model.rod_contact.enabled ? "rod contact on" : "rod contact off") << ", self contact "
      << (self ? "checked" : "not checked") << "\n";
  if (frames > 1) {
    const double steps = manifest.dt > 0.0 ? manifest.frame_dt / manifest.dt : 1.0;
    if (std::abs(steps - 1.0) < 1e-9)
      out << "between frames: one step each (frame_dt = dt): the straight path checked is the solver's own\n";
    else
      out << "between frames: " << number(steps) << " steps each (frame_dt = " << number(steps)
          << " dt): the straight path checked stands in for them\n";
  }
  if (!has_deepest) {
    out << "deepest overlap: none (no two segments came within reach of each other)\n";
  } else if (deepest.overlap.depth <= 0.0) {
    out << "deepest overlap: none; closest surfaces " << number(-deepest.overlap.depth)
        << " of the smaller radius apart, at frame " << deepest.frame << ": "
        << pair_text(manifest, deepest.overlap.rod_a, deepest.overlap.segment_a, deepest.overlap.rod_b,
                     deepest.overlap.segment_b)
        << "\n";
  } else {
    out << "deepest overlap: " << number(deepest.overlap.depth) << " of the smaller radius at frame " << deepest.frame
        << ": "
        << pair_text(manifest, deepest.overlap.rod_a, deepest.overlap.segment_a, deepest.overlap.rod_b,
                     deepest.overlap.segment_b)
        << "\n";
  }
  out << "overlaps beyond " << number(tolerance) << " of the smaller radius: " << overlap_count;
  if (overlap_count > 0) {
    out << " (segment pairs, summed over " << overlap_frames << " frame" << (overlap_frames == 1 ? "" : "s")
        << "); the first:\n";
    for (const OverlapSeen& o : first_overlaps)
      out << "  frame " << o.frame << ": "
          << pair_text(manifest, o.overlap.rod_a, o.overlap.segment_a, o.overlap.rod_b, o.overlap.segment_b) << ", "
          << number(o.overlap.depth) << " of the smaller radius\n";
  } else {
    out << "\n";
  }
  out << "crossings between frames: " << crossing_count;
  if (undecided > 0) out << " (" << undecided << " within a hair of meeting, counted)";
  if (crossing_count > 0) {
    out << "; the first:\n";
    for (const CrossingSeen& c : first_crossings)
      out << "  frames " << c.frame << "-" << c.frame + 1 << " (at " << number(c.crossing.t) << " of the way): "
          << pair_text(manifest, c.crossing.rod_a, c.crossing.segment_a, c.crossing.rod_b, c.crossing.segment_b)
          << "\n";
  } else {
    out << "\n";
  }
  if (run_counted) {
    out << "crossings in the run's own steps: " << run_crossings
        << " (the frames' rod_contact.crossings, each step's straight motion";
    if (substeps_taken > steps_taken) out << "; " << substeps_taken - steps_taken << " more substeps from split steps";
    out << ")\n";
    if (run_crossings == 0 && crossing_count > 0)
      out << "  the run's steps made none: the crossings between frames are the straight line from frame to "
             "frame, which is not the path of the steps between\n";
  }
  if (overlap_count == 0 && crossing_count == 0) {
    out << "contact ok\n";
    return kExitSuccess;
  }
  out << "contact violated: " << overlap_count << " overlap" << (overlap_count == 1 ? "" : "s") << ", "
      << crossing_count << " crossing" << (crossing_count == 1 ? "" : "s") << "\n";
  return kExitFailure;
}

}  // namespace

Command make_check_contact_command() {
  return {"check-contact", "check a run's frames for rods inside or through each other", kUsage, check_contact};
}

}  // namespace bristle::cli

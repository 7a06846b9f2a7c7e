#include "bristle/cli/overlap_report.hpp"

#include <algorithm>
#include <cstdio>

namespace bristle::cli {

namespace {

std::string number(double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%.3g", value);
  return buffer;
}

double smaller_radius(const Scene& scene, const SegmentOverlap& o) {
  return std::min(scene.model.rods[o.rod_a].material.radius, scene.model.rods[o.rod_b].material.radius);
}

// The deepest overlap relative to the smaller radius (the first such in order).
const SegmentOverlap* deepest(const Scene& scene, const OverlapReport& report) {
  const SegmentOverlap* best = nullptr;
  for (const SegmentOverlap& o : report.overlaps)
    if (!best || o.depth / smaller_radius(scene, o) > best->depth / smaller_radius(scene, *best)) best = &o;
  return best;
}

std::string depth_text(const Scene& scene, const SegmentOverlap& o) {
  return number(o.depth) + " m deep, " + number(o.depth / smaller_radius(scene, o)) + " of the smaller radius";
}

std::string pair_text(const Scene& scene, const SegmentOverlap& o) {
  return "\"" + scene.model.rods[o.rod_a].name + "\" segment " + std::to_string(o.segment_a) + " and \"" +
         scene.model.rods[o.rod_b].name + "\" segment " + std::to_string(o.segment_b);
}

nlohmann::json pair_json(const Scene& scene, const SegmentOverlap& o) {
  return {{"rod_a", scene.model.rods[o.rod_a].name}, {"segment_a", o.segment_a},
          {"rod_b", scene.model.rods[o.rod_b].name}, {"segment_b", o.segment_b},
          {"distance", o.distance}, {"depth", o.depth}, {"depth_fraction", o.depth / smaller_radius(scene, o)}};
}

}  // namespace

std::vector<std::string> describe_overlaps(const Scene& scene, const OverlapReport& report, int shown) {
  std::vector<std::string> lines;
  if (report.overlaps.empty()) return lines;
  const std::size_t pairs = report.overlaps.size();
  std::string head = scene.source_path.empty() ? "" : scene.source_path + ": ";
  head += (report.complete ? "" : "at least ") + std::to_string(pairs) + " overlapping segment pair" +
          (pairs == 1 ? "" : "s") + " between " + std::to_string(report.rod_pairs) + " pair" +
          (report.rod_pairs == 1 ? "" : "s") +
          " of rods at the initial positions: the rods start inside each other, and " +
          (scene.model.rod_contact.enabled
               ? (scene.model.rod_contact.method == RodContactMethod::Constraints
                      ? "rod contact as constraints leaves pairs whose centre lines are closer than half the sum "
                        "of their radii free until they are not"
                      : "rod contact leaves pairs that start inside each other unconstrained until they separate")
               : "rod contact is off in this scene, so nothing keeps rods apart (\"rod_contact\": {\"enabled\": true} turns it on)");
  if (!report.complete) head += " (the check stopped there)";
  lines.push_back(head);
  const std::size_t listed = std::min(pairs, static_cast<std::size_t>(std::max(shown, 0)));
  for (std::size_t k = 0; k < listed; ++k)
    lines.push_back("  " + pair_text(scene, report.overlaps[k]) + ": " + depth_text(scene, report.overlaps[k]));
  if (pairs > listed) {
    const SegmentOverlap& worst = *deepest(scene, report);
    lines.push_back("  ... and " + std::to_string(pairs - listed) + " more; the deepest: " + pair_text(scene, worst) +
                    ": " + depth_text(scene, worst));
  }
  return lines;
}

nlohmann::json overlaps_json(const Scene& scene, const OverlapReport& report, int shown) {
  nlohmann::json first = nlohmann::json::array();
  const std::size_t listed = std::min(report.overlaps.size(), static_cast<std::size_t>(std::max(shown, 0)));
  for (std::size_t k = 0; k < listed; ++k) first.push_back(pair_json(scene, report.overlaps[k]));
  const SegmentOverlap* worst = deepest(scene, report);
  return {{"segment_pairs", report.overlaps.size()},
          {"rod_pairs", report.rod_pairs},
          {"complete", report.complete},
          {"deepest", worst ? pair_json(scene, *worst) : nlohmann::json(nullptr)},
          {"first", first}};
}

}  // namespace bristle::cli

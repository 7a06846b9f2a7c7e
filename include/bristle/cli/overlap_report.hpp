#pragma once
/// What `bristle validate` says about rods that start inside each other
/// (contact/rod_overlaps.hpp): a warning, since such a scene still runs (without `rod_contact`
/// nothing pushes the rods apart; with it, pairs that start inside each other are left
/// unconstrained until they separate, and the warning says which of the two applies).

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bristle/contact/rod_overlaps.hpp"
#include "bristle/scene/scene.hpp"

namespace bristle::cli {

/// Overlapping pairs listed one by one after the summary line.
inline constexpr int kOverlapsShown = 5;

/// The warning's lines, none when nothing overlaps: a summary line (segment pairs, rod pairs,
/// the deepest overlap), then the first `shown` pairs in order with rod names, segment
/// indices and the depth in metres and as a fraction of the smaller radius, then how many
/// more. Each line is printed after "warning: ".
std::vector<std::string> describe_overlaps(const Scene& scene, const OverlapReport& report,
                                           int shown = kOverlapsShown);

/// The same as JSON for `bristle validate --json`: {"segment_pairs", "rod_pairs", "complete",
/// "deepest", "first": [{"rod_a", "segment_a", "rod_b", "segment_b", "distance", "depth",
/// "depth_fraction"}, ...]}, "deepest" and each entry of "first" in that form (null when none).
nlohmann::json overlaps_json(const Scene& scene, const OverlapReport& report, int shown = kOverlapsShown);

}  // namespace bristle::cli

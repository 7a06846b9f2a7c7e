// Reader of `rods[i].generator`: validates a generator's keys and runs it
// (scene/generators.hpp holds the geometry).

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "bristle/contact/rod_overlaps.hpp"
#include "bristle/scene/generators.hpp"
#include "bristle/scene/scene_blocks.hpp"

namespace bristle {
namespace {

constexpr double kHalfPi = 1.57079632679489661923;

std::vector<Vec3> read_straight(const JsonValue& value, int dimension) {
  const ObjectReader reader = value.object({"type", "from", "to", "segments"});
  const Vec3 from = reader.require("from").vector(dimension);
  const JsonValue to_value = reader.require("to");
  const Vec3 to = to_value.vector(dimension);
  const int segments = reader.require("segments").int_in(1, kMaxGeneratedSegments);
  if (from == to) to_value.fail("\"to\" equals \"from\": the rod would have zero length");
  return straight_rod(from, to, segments);
}

// A coiled rod (3D): curly hair, helical springs. Keys in docs/scene-format.md.
std::vector<Vec3> read_helix(const JsonValue& value, int dimension) {
  const ObjectReader reader =
      value.object({"type", "centre", "axis", "radius", "pitch", "turns", "handedness", "segments"});
  if (dimension != 3) reader.fail_at("type", "a helix is a 3D generator (\"dimension\": 3)");
  HelixSpec spec;
  spec.centre = reader.require("centre").vector(3);
  spec.axis = reader.require("axis").direction(3).normalized();
  spec.radius = reader.require("radius").positive_number();
  spec.pitch = reader.require("pitch").non_negative_number();
  spec.turns = reader.require("turns").positive_number();
  if (const auto h = reader.find("handedness")) spec.right_handed = h->choice({"right", "left"}) == "right";
  spec.segments = reader.require("segments").int_in(1, kMaxGeneratedSegments);
  return helix_rod(spec);
}

// x to 3 significant digits, rounded up (or down).
std::string rounded(double x, bool up) {
  if (!(x > 0.0) || !std::isfinite(x)) return number_text(x);
  const double unit = std::pow(10.0, std::floor(std::log10(x)) - 2.0);
  const double r = (up ? std::ceil(x / unit) : std::floor(x / unit)) * unit;
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.3g", r);
  return buffer;
}

// Neighbouring roots closer than a bristle diameter would put bristles inside each other.
// A spacing of exactly the diameter is allowed despite rounding, within half the slack of the
// overlap check (the clearance the planting of tilted bristles asks for, plant_brush).
// Curly bristles need their axes twice the largest coil radius further apart: the check
// sees each as its axis inflated by that radius (conservative: helices with random phases
// could often sit closer, but not always).
void check_spacing(const JsonValue& spacing, const BrushSpec& spec, double bristle_radius) {
  const double diameter = 2.0 * bristle_radius;
  const double coil = spec.curl.max_radius();
  if (spec.spacing >= 2.0 * coil + diameter * (1.0 - 0.5 * kOverlapSlack)) return;
  // A lone bristle has no neighbour to overlap (counting is cheap unless the brush is huge,
  // and a huge brush has neighbours).
  const bool several = brush_bristle_estimate(spec) > kMaxBrushBristles || brush_root_offsets(spec).size() > 1;
  if (several && coil > 0.0)
    spacing.fail("expected a spacing of at least " + rounded(2.0 * coil + diameter, true) +
                 " for curly bristles: twice the material's radius plus twice the largest coil radius " +
                 rounded(coil, false) + " (curl.radius * (1 + curl.jitter)), found " + number_text(spec.spacing) +
                 ": neighbouring bristles could overlap");
  if (several)
    // A radius near the largest double has a diameter that overflows (number_text would say null).
    spacing.fail("expected a spacing of at least the bristle diameter " +
                 (std::isfinite(diameter) ? number_text(diameter) : "2 x " + number_text(bristle_radius)) +
                 " (twice the material's radius), found " + number_text(spec.spacing) +
                 ": neighbouring bristles would overlap");
}

// `layout`: {"type": "grid", rows, columns, spacing} or {"type": "disk", radius, spacing}.
// Returns the spacing's value, for check_spacing once the curl is known.
JsonValue read_layout(const JsonValue& value, BrushSpec& spec) {
  const std::string type = value.type_of({"grid", "disk"});
  const ObjectReader reader = type == "grid" ? value.object({"type", "rows", "columns", "spacing"})
                                             : value.object({"type", "radius", "spacing"});
  if (type == "grid") {
    spec.layout = BrushLayout::Grid;
    if (spec.dimension == 3) {
      spec.rows = reader.require("rows").int_in(1, kMaxBrushBristles);
    } else if (const auto rows = reader.find("rows")) {
      // A 2D brush is one row of bristles along the base line.
      spec.rows = rows->int_in(1, 1);
    }
    spec.columns = reader.require("columns").int_in(1, kMaxBrushBristles);
  } else {
    spec.layout = BrushLayout::Disk;
    spec.disk_radius = reader.require("radius").positive_number();
  }
  const JsonValue spacing = reader.require("spacing");
  spec.spacing = spacing.positive_number();
  return spacing;
}

BrushJitter read_jitter(const JsonValue& value) {
  const ObjectReader reader = value.object({"length", "direction", "seed"});
  BrushJitter jitter;
  // A relative length jitter of 1 could make a bristle of zero length.
  if (const auto length = reader.find("length")) jitter.length = length->number_in_half_open(0.0, 1.0);
  // Tilting by pi/2 would lay a bristle flat on its own base plane.
  if (const auto direction = reader.find("direction"))
    jitter.direction = direction->number_in_half_open(0.0, kHalfPi);
  if (const auto seed = reader.find("seed")) jitter.seed = static_cast<std::uint64_t>(seed->integer(0));
  return jitter;
}

// `curl`: {"radius", "pitch", "handedness", "jitter"}; curly bristles are helices, so 3D only.
BrushCurl read_curl(const JsonValue& value, int dimension) {
  if (dimension != 3)
    value.fail("curly bristles coil about their axes, a 3D shape: a curl needs \"dimension\": 3");
  const ObjectReader reader = value.object({"radius", "pitch", "handedness", "jitter"});
  BrushCurl curl;
  curl.enabled = true;
  curl.radius = reader.require("radius").positive_number();
  curl.pitch = reader.require("pitch").positive_number();
  if (const auto h = reader.find("handedness")) {
    const std::string hand = h->choice({"right", "left", "random"});
    curl.handedness = hand == "right"  ? CurlHandedness::Right
                      : hand == "left" ? CurlHandedness::Left
                                       : CurlHandedness::Random;
  }
  // A relative jitter of 1 could make a coil of zero radius or pitch.
  if (const auto jitter = reader.find("jitter")) curl.jitter = jitter->number_in_half_open(0.0, 1.0);
  return curl;
}

// Refuses brushes too big to generate (before generating them).
void check_brush_size(const ObjectReader& reader, const BrushSpec& spec) {
  const double bristles = brush_bristle_estimate(spec);
  if (bristles > kMaxBrushBristles)
    reader.fail_at("layout", "this layout holds about " + count_text(bristles) +
                                 " bristles; at most " + std::to_string(kMaxBrushBristles) +
                                 " are allowed in one brush");
  const double vertices = bristles * (spec.segments + 1);
  if (vertices > static_cast<double>(kMaxSceneVertices))
    reader.fail_at("segments", "the brush would have about " + count_text(vertices) +
                                   " vertices; at most " + std::to_string(kMaxSceneVertices) +
                                   " are allowed in a scene");
}

// Why the tilted bristles do not fit, and what would make them: the spacing or the tilt at
// which no two bristles can touch whatever the draws (their lateral reach, see plant_brush),
// or a thinner bristle.
std::string too_dense(const BrushSpec& spec, const BrushConflict& conflict) {
  // A curly bristle is checked as its axis inflated by the largest coil radius.
  const double r = spec.bristle_radius + spec.curl.max_radius();
  const double longest = spec.length * (1.0 + spec.jitter.length);
  const double safe_spacing = 2.0 * longest * std::sin(spec.jitter.direction) + 2.0 * r;
  const double safe_tilt = std::asin(std::min(1.0, std::max(0.0, spec.spacing - 2.0 * r) / (2.0 * longest)));
  if (conflict.out_of_work)
    return "the bristles cannot be checked for overlaps in bounded time: at bristle " +
           std::to_string(conflict.bristle) + " the check had done " + std::to_string(kMaxBrushOverlapWork) +
           " tests, its limit (docs/limits.md); bristles up to " + rounded(longest, true) +
           " m long and tilted up to " + number_text(spec.jitter.direction) + " rad reach too many others " +
           number_text(spec.spacing) + " m apart: reduce jitter.direction (at or below " +
           rounded(safe_tilt, false) + " rad no two bristles can touch), the bristle " +
           "count or their length";
  return "the bristles do not fit: none of " + std::to_string(conflict.draws) +
         " draws of its direction jitter keeps bristle " + std::to_string(conflict.bristle) +
         " clear of the earlier bristles (the last overlaps bristle " + std::to_string(conflict.neighbour) +
         "); the layout is too dense for bristles of radius " + number_text(r) + " m" +
         (spec.curl.enabled ? " (with their coils)" : "") + ", up to " +
         rounded(longest, true) + " m long and tilted up to " + number_text(spec.jitter.direction) +
         " rad: increase layout.spacing (from " + rounded(safe_spacing, true) +
         " m no two bristles can touch), reduce jitter.direction (at or below " + rounded(safe_tilt, false) +
         " rad none can) or the material's radius";
}

std::vector<std::vector<Vec3>> read_brush(const JsonValue& value, int dimension, double bristle_radius) {
  const ObjectReader reader =
      value.object({"type", "layout", "root", "direction", "length", "segments", "jitter", "curl"});
  BrushSpec spec;
  spec.dimension = dimension;
  const JsonValue spacing = read_layout(reader.require("layout"), spec);
  if (const auto curl = reader.find("curl")) spec.curl = read_curl(*curl, dimension);
  check_spacing(spacing, spec, bristle_radius);
  spec.root = reader.require("root").vector(dimension);
  spec.direction = reader.require("direction").direction(dimension);
  spec.length = reader.require("length").positive_number();
  spec.segments = reader.require("segments").int_in(1, kMaxGeneratedSegments);
  spec.jitter = read_jitter(reader.find_or_empty_object("jitter"));
  spec.bristle_radius = bristle_radius;
  check_brush_size(reader, spec);
  BrushPlanting planting = plant_brush(spec);
  if (planting.failed) value.fail(too_dense(spec, planting.conflict));
  return std::move(planting.bristles);
}

}  // namespace

GeneratorOutput read_generator(const JsonValue& value, int dimension, double bristle_radius) {
  const std::string type = value.type_of({"straight", "helix", "brush"});
  if (type == "straight") return {{read_straight(value, dimension)}, false};
  if (type == "helix") return {{read_helix(value, dimension)}, false};
  return {read_brush(value, dimension, bristle_radius), true};
}

}  // namespace bristle

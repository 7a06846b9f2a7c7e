// `handles` in a scene file (src/scene/read_handles.cpp) and their driving by the runner:
// keys read with their defaults, a brush entry's name selecting all its bristles, malformed
// handles refused at their JSON pointer, and a run whose frames show the fixed vertices on the
// keyed pose and the contact stats (contact count, normal force = weight at rest).

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <functional>
#include <string>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "bristle/bench/brush_benchmark.hpp"
#include "bristle/contact/contact_check.hpp"
#include "bristle/integrator/implicit_euler.hpp"
#include "bristle/io/output_reader.hpp"
#include "bristle/runner/run_simulation.hpp"
#include "bristle/scene/load_scene.hpp"
#include "io/temp_folder.hpp"
#include "test_paths.hpp"

using namespace bristle;
using nlohmann::json;

namespace {

/// Loads the scene file at `path`, changed by `edit`, and runs it into `out`.
Scene run_edited_scene(const std::string& path, const std::function<void(json&)>& edit, const std::string& out) {
  std::ifstream file(path);
  json scene = json::parse(file);
  edit(scene);
  const Scene loaded = load_scene_from_string(scene.dump(), path);
  const RunResult result = run_simulation(loaded, out);
  REQUIRE_MESSAGE(result.ok(), result.message);
  return loaded;
}

/// A 3D scene: a 4-bristle brush pointing down and one loose rod, a floor and a sphere, and a
/// handle pressing the brush down and dragging it, carrying the sphere along.
json handle_scene() {
  return json::parse(R"({
    "format": "bristle-scene/1", "dimension": 3,
    "time": { "dt": 0.01, "frame_dt": 0.05, "duration": 0.2 },
    "gravity": [0, -9.81, 0],
    "materials": { "nylon": { "density": 1140, "radius": 0.0005, "youngs_modulus": 3e9 } },
    "rods": [
      { "name": "tuft", "material": "nylon",
        "generator": { "type": "brush", "layout": { "type": "grid", "rows": 2, "columns": 2, "spacing": 0.002 },
                       "root": [0, 0.022, 0], "direction": [0, -1, 0], "length": 0.02, "segments": 5 } },
      { "name": "loose", "material": "nylon", "vertices": [[0.05, 0.0005, 0], [0.06, 0.0005, 0], [0.07, 0.0005, 0]] }
    ],
    "colliders": [
      { "type": "plane", "point": [0, 0, 0], "normal": [0, 1, 0], "friction": 0.4 },
      { "type": "sphere", "center": [0, 0.1, 0], "radius": 0.01 }
    ],
    "handles": [
      { "name": "press", "rods": ["tuft"], "colliders": [1], "pivot": [0, 0.022, 0], "interpolation": "smooth",
        "keys": [ { "time": 0 },
                  { "time": 0.1, "translation": [0, -0.005, 0] },
                  { "time": 0.2, "translation": [0.01, -0.005, 0], "rotation": { "axis": [0, 0, 1], "angle": 0.1 } } ] }
    ]
  })");
}

SceneError load_error(const json& scene) {
  try {
    load_scene_from_string(scene.dump(), "scene.json");
  } catch (const SceneError& e) {
    return e;
  }
  FAIL("the scene loaded, but it should have been refused");
  return SceneError("", "", 0, "");
}

struct Malformed {
  const char* what;
  std::function<void(json&)> edit;
  const char* pointer;
  const char* mentions;
};

json::json_pointer at(const char* pointer) { return json::json_pointer(pointer); }

std::function<void(json&)> set(const char* pointer, json value) {
  return [pointer, value](json& scene) { scene[at(pointer)] = value; };
}

}  // namespace

TEST_CASE("scene handles: read with defaults; a brush name selects all its bristles") {
  const Scene scene = load_scene_from_string(handle_scene().dump(), "scene.json");
  REQUIRE(scene.handles.size() == 1);
  const Handle& h = scene.handles[0];
  CHECK(h.name == "press");
  CHECK(h.rods == std::vector<std::string>{"tuft_0", "tuft_1", "tuft_2", "tuft_3"});
  CHECK(h.interpolation == HandleInterpolation::Smooth);
  CHECK(h.pivot.isApprox(Vec3(0, 0.022, 0)));
  REQUIRE(h.keys.size() == 3);
  CHECK(h.keys[0].translation.norm() == 0.0);
  CHECK(h.keys[0].rotation_angle == 0.0);
  CHECK(h.keys[2].rotation_angle == 0.1);
  CHECK(scene.model.colliders[1].handle == "press");
  CHECK(scene.model.colliders[0].handle.empty());
  // Expanded: every default written out; loading the expansion gives the same handles.
  const json& e = scene.expanded["handles"][0];
  CHECK(e["interpolation"] == "smooth");
  CHECK(e["keys"][0]["translation"] == json::array({0.0, 0.0, 0.0}));
  CHECK(e["keys"][0]["rotation"]["angle"] == 0.0);
  const Scene again = load_scene_from_string(scene.expanded.dump(), "expanded.json");
  CHECK(again.handles[0].rods == h.rods);
  CHECK(again.expanded == scene.expanded);
  // Without handles the block is an empty array.
  json plain = handle_scene();
  plain.erase("handles");
  CHECK(load_scene_from_string(plain.dump(), "plain.json").expanded["handles"] == json::array());
}

TEST_CASE("scene handles: 2D keys rotate about z only") {
  const json scene = json::parse(R"({
    "format": "bristle-scene/1", "dimension": 2, "time": { "dt": 0.01, "duration": 0.02 },
    "materials": { "m": { "density": 1000, "radius": 0.001, "youngs_modulus": 1e9 } },
    "rods": [ { "name": "r", "material": "m", "vertices": [[0, 0], [0.01, 0], [0.02, 0]], "fixed": [0, 1] } ],
    "handles": [ { "name": "h", "rods": ["r"],
                   "keys": [ { "time": 0, "rotation": { "angle": 0.2 } }, { "time": 1, "translation": [1, 0] } ] } ]
  })");
  const Scene loaded = load_scene_from_string(scene.dump(), "s.json");
  CHECK(loaded.handles[0].keys[0].rotation_vector().isApprox(Vec3(0, 0, 0.2)));
  json with_axis = scene;
  with_axis["handles"][0]["keys"][0]["rotation"]["axis"] = {1, 0, 0};
  const SceneError e = load_error(with_axis);
  CHECK(std::string(e.what()).find("/handles/0/keys/0/rotation/axis") != std::string::npos);
}

TEST_CASE("scene handles: malformed handles are refused at their JSON pointer") {
  const Malformed cases[] = {
      {"unknown key", set("/handles/0/speed", 1), "/handles/0/speed", "speed"},
      {"unknown key in a key", set("/handles/0/keys/1/angle", 1), "/handles/0/keys/1/angle", "angle"},
      {"missing name", [](json& s) { s["handles"][0].erase("name"); }, "/handles/0/name", "name"},
      {"duplicate name", [](json& s) { s["handles"].push_back(s["handles"][0]); s["handles"][1]["rods"] = json::array(); s["handles"][1]["colliders"] = json::array(); },
       "/handles/1/name", "duplicate"},
      {"unknown rod", set("/handles/0/rods/0", "tufts"), "/handles/0/rods/0", "tuft"},
      {"rod claimed twice", set("/handles/0/rods", json::array({"tuft", "tuft_2"})), "/handles/0/rods/1", "already"},
      {"rod without fixed vertices", set("/handles/0/rods", json::array({"loose"})), "/handles/0/rods/0", "fixed"},
      {"collider out of range", set("/handles/0/colliders/0", 2), "/handles/0/colliders/0", "[0, 1]"},
      {"collider not an integer", set("/handles/0/colliders/0", 0.5), "/handles/0/colliders/0", "integer"},
      {"collider claimed twice", set("/handles/0/colliders", json::array({1, 1})), "/handles/0/colliders/1", "already"},
      {"no keys", set("/handles/0/keys", json::array()), "/handles/0/keys", "non-empty"},
      {"keys not increasing", set("/handles/0/keys/2/time", 0.1), "/handles/0/keys/2/time", "increase"},
      {"time missing", [](json& s) { s["handles"][0]["keys"][1].erase("time"); }, "/handles/0/keys/1/time", "time"},
      {"time not a number", set("/handles/0/keys/1/time", "soon"), "/handles/0/keys/1/time", "number"},
      {"translation with two components", set("/handles/0/keys/1/translation", json::array({0, 1})),
       "/handles/0/keys/1/translation", "3"},
      {"zero rotation axis", set("/handles/0/keys/2/rotation/axis", json::array({0, 0, 0})),
       "/handles/0/keys/2/rotation/axis", "zero"},
      {"rotation without angle", [](json& s) { s["handles"][0]["keys"][2]["rotation"].erase("angle"); },
       "/handles/0/keys/2/rotation/angle", "angle"},
      {"unknown interpolation", set("/handles/0/interpolation", "smoth"), "/handles/0/interpolation", "smooth"},
      {"pivot not a vector", set("/handles/0/pivot", 3), "/handles/0/pivot", "3"},
      {"handles not an array", set("/handles", json::object()), "/handles", "array"},
  };
  for (const Malformed& c : cases) {
    CAPTURE(c.what);
    json scene = handle_scene();
    c.edit(scene);
    const SceneError e = load_error(scene);
    const std::string message = e.what();
    CAPTURE(message);
    CHECK(message.find(std::string(c.pointer) + ":") != std::string::npos);
    CHECK(message.find(c.mentions) != std::string::npos);
  }
}

TEST_CASE("scene handles: the runner drives them; frames carry contact stats") {
  const Scene scene = load_scene_from_string(handle_scene().dump(), "handles.json");
  test::TempFolder folder("scene-handles");
  const std::string out = folder / "out";
  const RunResult result = run_simulation(scene, out);
  INFO(result.message);
  REQUIRE(result.ok());
  const OutputFolder read(out);
  const Handle& h = scene.handles[0];
  const long long rods = static_cast<long long>(scene.model.rods.size());
  long long solves = 0, rod_solves = 0;
  for (int k = 0; k < read.manifest().frame_count; ++k) {
    const Frame frame = read.frame(k);
    const RigidTransform pose = h.pose(frame.time);
    // Every bristle's fixed root vertices are exactly on the keyed pose.
    for (int b = 0; b < 4; ++b)
      for (int i : {0, 1}) {
        const Vec3 expected = pose.apply(scene.model.rods[b].initial_positions[i]);
        CHECK((frame.rods[b].positions[i] - expected).norm() < 1e-15);
      }
    if (k == 0) continue;
    const json& contact = frame.stats["contact"];
    REQUIRE(contact.is_object());
    REQUIRE(contact["colliders"].size() == 2);
    CHECK(contact["max_penetration_fraction"].get<double>() < 0.1);
    CHECK(contact["count"].get<int>() == contact["colliders"][0]["contacts"].get<int>() +
                                                contact["colliders"][1]["contacts"].get<int>());
    // The loose rod lies on the floor all along: its weight is part of the floor's normal force.
    const double loose_weight = 1140 * std::acos(-1.0) * 0.0005 * 0.0005 * 0.02 * 9.81;
    CHECK(contact["colliders"][0]["contacts"].get<int>() >= 3);
    CHECK(contact["colliders"][0]["normal_force"].get<double>() >= 0.99 * loose_weight);
    CHECK(contact["colliders"][0]["normal_force_mean"].get<double>() >= 0.99 * loose_weight);
    CHECK(contact["colliders"][0]["force"].size() == 3);
    CHECK(contact["colliders"][1]["contacts"] == 0);  // the sphere stays clear above the brush
    // Each pass solves one rod at least, every rod at most (rods apart: the changed ones).
    const long long frame_solves = contact["solves"].get<long long>();
    const long long frame_rod_solves = contact["rod_solves"].get<long long>();
    CHECK(frame_rod_solves >= frame_solves);
    CHECK(frame_rod_solves <= frame_solves * rods);
    // Friction within the cone, to the bound's tolerance: 1e-3 of a vertex's mu N, so below
    // 1e-3 of mu times the floor's whole normal force (a few newtons to 2 kN here; measured:
    // 0 to 3.7e-4 N).
    const double excess = contact["max_friction_excess"].get<double>();
    CHECK(excess >= 0.0);
    CHECK(excess <= 1e-3 * 0.4 * contact["colliders"][0]["normal_force"].get<double>());
    solves += frame_solves;
    rod_solves += frame_rod_solves;
  }
  // Nothing couples the rods (no rod-rod contact): passes after the first solve only the rods
  // whose contacts changed, so fewer than every rod in every pass.
  CHECK(solves > 0);
  CHECK(rod_solves < solves * rods);
  CHECK(rod_solves > solves);  // a first pass solves every rod
  // Pressed down 5 mm, the bristles touch the floor by the end.
  CHECK(read.frame(4).stats["contact"]["colliders"][0]["contacts"].get<int>() > 3);
}

TEST_CASE("frame stats: a rod at rest on the floor pushes with its weight") {
  const json scene = json::parse(R"({
    "format": "bristle-scene/1", "dimension": 2, "time": { "dt": 0.01, "frame_dt": 0.1, "duration": 0.3 },
    "gravity": [0, -9.81],
    "materials": { "m": { "density": 1000, "radius": 0.001, "youngs_modulus": 1e9 } },
    "rods": [ { "name": "r", "material": "m", "vertices": [[0, 0.001], [0.05, 0.001], [0.1, 0.001]] } ],
    "colliders": [ { "type": "plane", "point": [0, 0], "normal": [0, 1], "friction": 0.5 } ]
  })");
  const Scene loaded = load_scene_from_string(scene.dump(), "rest.json");
  test::TempFolder folder("contact-stats");
  const std::string out = folder / "out";
  REQUIRE(run_simulation(loaded, out).ok());
  const OutputFolder read(out);
  const double weight = 1000 * std::acos(-1.0) * 1e-6 * 0.1 * 9.81;
  const Frame last = read.frame(3);
  const json& contact = last.stats["contact"];
  CHECK(contact["count"] == 3);
  CHECK(contact["colliders"][0]["sticking"] == 3);
  CHECK(contact["colliders"][0]["normal_force"].get<double>() == doctest::Approx(weight).epsilon(1e-6));
  CHECK(contact["colliders"][0]["normal_force_mean"].get<double>() == doctest::Approx(weight).epsilon(1e-6));
  CHECK(contact["colliders"][0]["friction_force"].get<double>() < 1e-9 * weight);
  CHECK(contact["colliders"][0]["force"][1].get<double>() == doctest::Approx(weight).epsilon(1e-6));
  CHECK(contact["max_penetration"].get<double>() < 1e-9);
  CHECK(contact["unconverged"] == 0);
  // No colliders, no contact block.
  json bare = scene;
  bare.erase("colliders");
  const std::string out2 = folder / "bare";
  REQUIRE(run_simulation(load_scene_from_string(bare.dump(), "bare.json"), out2).ok());
  CHECK_FALSE(OutputFolder(out2).frame(1).stats.contains("contact"));
}

TEST_CASE("bundled contact scenes load; the seed 003 scene runs within its bounds") {
  const std::string dir = test::kScenesDir;
  const Scene brush = load_scene(dir + "/brush_stroke.json");
  CHECK(brush.model.rods.size() >= 200);
  REQUIRE(brush.handles.size() == 1);
  CHECK(brush.handles[0].rods.size() == brush.model.rods.size());
  CHECK(brush.model.colliders.size() == 1);
  const Scene hair = load_scene(dir + "/hair_on_sphere.json");
  CHECK(hair.model.colliders[0].type == ColliderType::Sphere);

  // l_drop_2d: the seed 003 case as users run it; every frame within the test's bounds.
  const Scene drop = load_scene(dir + "/l_drop_2d.json");
  CHECK(drop.time.dt == doctest::Approx(1.0 / 60.0));
  test::TempFolder folder("l-drop");
  const std::string out = folder / "out";
  REQUIRE(run_simulation(drop, out).ok());
  const OutputFolder read(out);
  const double impact = std::sqrt(2.0 * 9.81 * 2.0);
  for (int k = 1; k < read.manifest().frame_count; ++k) {
    const Frame frame = read.frame(k);
    CHECK(frame.stats["contact"]["max_penetration_fraction"].get<double>() < 0.1);
    for (const Vec3& v : frame.rods[0].velocities) CHECK(v.norm() <= 1.05 * impact);
  }
  const Frame last = read.frame(read.manifest().frame_count - 1);
  for (const Vec3& v : last.rods[0].velocities) CHECK(v.norm() < 1e-3);
}

TEST_CASE("rod-rod contact under a handle: a small brush pressed onto paper and dragged stays clear of itself") {
  // The vertical brush's tuft (tests/contact/scenes/vertical_brush.json: brush_stroke.json as it
  // was until 2026-12-02, held vertical and pressed end-on) cut to 4 x 4 bristles, over its
  // pressing phase and the start of the drag (0.6 s, 36 steps). Newton's first iterate must carry
  // the free vertices with the handle: with the roots moved alone, the descending roots ran into
  // the bristles bent beside them (1208 overlaps and 48 crossings in a 5 x 5 tuft).
  test::TempFolder folder("small-brush");
  const std::string out = folder / "out";
  const Scene loaded = run_edited_scene(std::string(test::kTestsDir) + "/contact/scenes/vertical_brush.json",
                                        [](json& scene) {
                                          scene["rod_contact"] = {{"enabled", true}};
                                          scene["time"]["duration"] = 0.6;
                                          scene["rods"][0]["generator"]["layout"]["rows"] = 4;
                                          scene["rods"][0]["generator"]["layout"]["columns"] = 4;
                                        },
                                        out);
  const OutputFolder read(out);
  std::vector<ContactCheckRod> rods;
  for (const Rod& rod : loaded.model.rods) rods.push_back({rod.material.radius, rod.rest_lengths});
  const ContactChecker checker(std::move(rods), true);
  auto centre_lines = [](const Frame& frame) {
    CentreLines x;
    for (const RodFrame& rod : frame.rods) x.push_back(rod.positions);
    return x;
  };
  CentreLines previous = centre_lines(read.frame(0));
  int overlaps = 0, crossings = 0, touching = 0;
  double deepest = 0.0;
  for (int k = 1; k < read.manifest().frame_count; ++k) {
    const Frame frame = read.frame(k);
    const CentreLines current = centre_lines(frame);
    overlaps += static_cast<int>(checker.overlaps(current, 0.01).beyond.size());
    crossings += static_cast<int>(checker.crossings(previous, current).size());
    touching = std::max(touching, frame.stats["rod_contact"]["pairs"].get<int>());
    deepest = std::max(deepest, frame.stats["contact"]["max_penetration_fraction"].get<double>());
    previous = current;
  }
  CHECK(overlaps == 0);
  CHECK(crossings == 0);
  CHECK(touching > 0);  // the bristles do press on each other
  // The handle's carry takes the tips into the paper each step, and CCD cuts each Newton
  // iteration's lift short: stopped after 8 iterations the tips were 11 radii deep at 0.18 s.
  // A step goes on while a vertex is deeper than 0.1 of its radius (docs/contact.md, "A brush
  // held at a painter's angle"), up to 25 iterations. Pressed end-on, a buckling bristle's pair
  // can jam at a tiny gap and hold its group's iterations to a fraction of a percent: 5.9 radii
  // since such a pair cuts only its own group (0.099 when it cut the whole tuft, 2026-12-04; the
  // painter's brush is checked in test_brush_benchmark.cpp); 10.0 on the path that Newton
  // iterations on the bristles still moving took (43 without going on while a tip is deep).
  MESSAGE("deepest in the paper after a step: " << deepest << " of the radius");
  CHECK(deepest < 12.0);
  long long counted = 0;  // the run's own count (StepReport::rod_crossings)
  for (int k = 1; k < read.manifest().frame_count; ++k) counted += read.frame(k).stats["rod_contact"]["crossings"].get<long long>();
  CHECK(counted == 0);
}

TEST_CASE("rod contact: each step counts the segments that passed through each other, as check-contact does") {
  // The vertical brush's tuft (tests/contact/scenes/vertical_brush.json: brush_stroke.json as it
  // was until 2026-12-02, held vertical and pressed end-on) cut to 5 x 5 bristles, rod contact as
  // constraints taken in one linearised solve a step (newton_iterations 1): where the tips buckle
  // on the paper, the bristles swing through neighbours whose pairs the rows never saw
  // (docs/contact.md, "Why a pressed bristle moves millimetres in one step"). One step a frame, so
  // the straight motion check-contact searches between two frames is the step's: the counts must be
  // equal.
  test::TempFolder folder("crossings-counted");
  const std::string out = folder / "out";
  const Scene loaded = run_edited_scene(std::string(test::kTestsDir) + "/contact/scenes/vertical_brush.json",
                                        [](json& scene) {
                                          scene["rod_contact"] = {{"enabled", true}, {"method", "constraints"}, {"friction", 0.3}};
                                          scene["solver"]["newton_iterations"] = 1;
                                          scene["time"]["duration"] = 0.3;
                                          scene["rods"][0]["generator"]["layout"]["rows"] = 5;
                                          scene["rods"][0]["generator"]["layout"]["columns"] = 5;
                                        },
                                        out);
  REQUIRE(loaded.time.frame_dt == loaded.time.dt);
  const OutputFolder read(out);
  std::vector<ContactCheckRod> rods;
  for (const Rod& rod : loaded.model.rods) rods.push_back({rod.material.radius, rod.rest_lengths});
  const ContactChecker checker(std::move(rods), loaded.model.rod_contact.self);
  auto centre_lines = [](const Frame& frame) {
    CentreLines x;
    for (const RodFrame& rod : frame.rods) x.push_back(rod.positions);
    return x;
  };
  CentreLines previous = centre_lines(read.frame(0));
  for (int k = 1; k < read.manifest().frame_count; ++k) {
    const CentreLines current = centre_lines(read.frame(k));
    const long long found = static_cast<long long>(checker.crossings(previous, current).size());
    CAPTURE(k);
    CHECK(read.frame(k).stats["rod_contact"]["crossings"].get<long long>() == found);
    previous = current;
  }
  long long counted = 0;
  for (int k = 1; k < read.manifest().frame_count; ++k) counted += read.frame(k).stats["rod_contact"]["crossings"].get<long long>();
  CHECK(counted > 0);  // or the scene no longer makes crossings: find one that does
}

TEST_CASE("colliders under a handle: the default solver's stalled steps keep a pressed, dragged brush unstretched") {
  // The vertical brush's tuft (tests/contact/scenes/vertical_brush.json: brush_stroke.json as it
  // was until 2026-12-02, held vertical and pressed end-on) cut to 4 x 4 bristles, with the default
  // (converged) solver, over its pressing phase and the start of the drag (0.6 s, 36 steps). Where
  // the tips stick and slip on the paper, Newton stalls and the step ends on one of its iterates:
  // the first solve, linearised about the step's start, came out of the pressed steps with bristle
  // edges stretched by 40% to 190% (1.5 J); the best iterate by Phi kept them at 0.010, and with
  // Newton's steps limited by strain (limit_contact_step_by_strain) 0.004. Nylon under the brush's
  // forces (below 0.1 N) strains by less than 1e-3.
  test::TempFolder folder("small-brush-default-solver");
  const std::string out = folder / "out";
  const Scene loaded = run_edited_scene(std::string(test::kTestsDir) + "/contact/scenes/vertical_brush.json",
                                        [](json& scene) {
                                          scene["solver"].erase("newton_iterations");
                                          scene["time"]["duration"] = 0.6;
                                          scene["rods"][0]["generator"]["layout"]["rows"] = 4;
                                          scene["rods"][0]["generator"]["layout"]["columns"] = 4;
                                        },
                                        out);
  const OutputFolder read(out);
  double largest_strain = 0.0;
  int unconverged = 0;
  long long unconverged_rod_steps = 0;
  for (int k = 1; k < read.manifest().frame_count; ++k) {
    const Frame frame = read.frame(k);
    const int frame_unconverged = frame.stats["unconverged_steps"].get<int>();
    unconverged += frame_unconverged;
    // Each unconverged step names the bristles it left above the tolerance: at least one, at
    // most the 16, per step taken; a converged frame names none.
    const long long rods = frame.stats["unconverged_rod_steps"].get<long long>();
    unconverged_rod_steps += rods;
    CHECK((frame_unconverged == 0) == (rods == 0));
    CHECK(rods >= frame_unconverged);
    CHECK(rods <= 16 * frame.stats["substeps"].get<long long>());
    for (std::size_t r = 0; r < frame.rods.size(); ++r) {
      const std::vector<Vec3>& x = frame.rods[r].positions;
      const std::vector<double>& rest = loaded.model.rods[r].rest_lengths;
      for (std::size_t j = 0; j + 1 < x.size(); ++j)
        largest_strain = std::max(largest_strain, std::abs((x[j + 1] - x[j]).norm() / rest[j] - 1.0));
    }
  }
  MESSAGE("largest edge strain " << largest_strain << ", unconverged steps " << unconverged << " ("
                                   << unconverged_rod_steps << " bristle-steps)");
  CHECK(largest_strain < 0.02);
  // The run must stall somewhere, or it does not test the choice (if the solver one day
  // converges these steps, find another stalled case).
  CHECK(unconverged > 0);
}

TEST_CASE("colliders under a handle: the default solver keeps a dragged brush of 20-segment bristles unstretched") {
  // The brush benchmark's brush (bristle bench --brush) cut to 5 x 5 bristles of 20 segments,
  // rod contact off, pressed and dragged for 0.7 s. While it drags, the tips' stick-slip states
  // switch from one Newton iteration to the next and the steps, taken whole in contact, swung
  // between nearly unstretched iterates and ones with edges stretched many times over: the
  // committed steps had edges strained by 7.6% (0.21 with 8 x 8 bristles, 1.9 with the
  // benchmark's 1000). Each step is now halved until no edge strains by more than 1% or 1.1
  // times the previous iterate's largest strain (ImplicitEuler::limit_contact_step_by_strain):
  // 0.005.
  BrushBenchmarkSettings settings;
  settings.rows = 5;
  settings.columns = 5;
  settings.segments = 20;
  settings.duration = 0.7;
  settings.rod_contact = false;
  const BrushBenchmarkResult result = run_brush_benchmark(settings);
  REQUIRE(result.ok);
  MESSAGE("largest edge strain " << result.max_edge_strain << ", unconverged steps " << result.unconverged_steps);
  CHECK(result.max_edge_strain < 0.015);
  CHECK(result.collider_contacts_max >= 25);  // every tip on the paper
  CHECK(result.max_depth_fraction < 0.01);
}

TEST_CASE("rod-rod contact with colliders: a strand far from a pile falls freely while the pile settles") {
  // Eight wavy hair strands dropped onto a plane with rod contact, and a ninth, `faller`, 20 cm
  // from all of them, released 2 cm up (tests/contact/scenes/pile_and_faller.json, 6 steps of
  // 1/60 s). Steps whose collider contacts keep Newton from converging end on Newton's last
  // iterate, which is feasible: falling back to the first solve, cut by CCD for a tight pair
  // in the pile, slowed every rod of the scene (faller still 8.4 mm up after 0.1 s).
  const Scene scene = load_scene(std::string(test::kTestsDir) + "/contact/scenes/pile_and_faller.json");
  test::TempFolder folder("pile-and-faller");
  const std::string out = folder / "out";
  REQUIRE(run_simulation(scene, out).ok());
  const OutputFolder read(out);
  const int faller = scene.model.rod_index("faller");
  REQUIRE(faller >= 0);
  const Frame last = read.frame(read.manifest().frame_count - 1);
  const std::vector<Vec3>& line = last.rods[faller].positions;
  // Free fall reaches the plane (y = radius = 5e-5 m) at step 4 of 6.
  CHECK(line[line.size() / 2].y() < 1e-4);
}

TEST_CASE("rod-rod contact: a pair pressed in a pile slows its own rods, not a strand falling far away") {
  // pile_and_faller.json with three Newton iterations a step (the fixed-count solver, as
  // brush_stroke.json ran until 2026-11-28): CCD cuts every Newton step of the pile, whose strands
  // press on each other. The pile's rods and the faller are not coupled, so each group of coupled
  // rods takes the fraction its own pairs allow (ImplicitEuler::limit_step_by_ccd) and the faller
  // falls freely. With one fraction for the whole scene it was still 6.0 mm up after 0.1 s.
  test::TempFolder folder("pile-and-faller-fixed");
  const std::string out = folder / "out";
  const Scene loaded = run_edited_scene(std::string(test::kTestsDir) + "/contact/scenes/pile_and_faller.json",
                                        [](json& scene) { scene["solver"]["newton_iterations"] = 3; }, out);
  const OutputFolder read(out);
  const int faller = loaded.model.rod_index("faller");
  REQUIRE(faller >= 0);
  int cut = 0;
  for (int k = 1; k < read.manifest().frame_count; ++k)
    cut += read.frame(k).stats["rod_contact"]["ccd_limited"].get<int>();
  CHECK(cut > 0);  // the pile's steps are cut
  // Free fall from 2 cm reaches the plane (y = radius = 5e-5 m) at step 4 of 6.
  const Frame landing = read.frame(4);
  const std::vector<Vec3>& line = landing.rods[faller].positions;
  CHECK(line[line.size() / 2].y() < 1e-4);
}

TEST_CASE("rod-rod contact: a linear solve that CG cannot finish on pressed rods is solved with those rods factored together") {
  // rod_pile.json with CG capped at 2 iterations and the fixed-count solver (no split to fall
  // back on): the rods resting on each other couple the system beyond what the per-rod
  // preconditioner solves in 2. Each group of rods tied by contact is factored together
  // (ImplicitEuler::solve_with_cg; until 2026-12-03 only after CG had failed, as the last
  // resort); with the per-rod factors alone the run stopped at the first pressed step with
  // "conjugate gradient did not converge".
  test::TempFolder folder("rod-pile-capped");
  run_edited_scene(std::string(test::kScenesDir) + "/rod_pile.json",
                   [](json& scene) {
                     scene["solver"]["cg_max_iterations"] = 2;
                     scene["solver"]["newton_iterations"] = 3;
                   },
                   folder / "out");
  const OutputFolder read(folder / "out");
  int most_pressed = 0;
  for (int k = 1; k < read.manifest().frame_count; ++k) {
    const Frame frame = read.frame(k);
    CHECK(frame.stats["rod_contact"]["overlapping"].get<int>() == 0);
    most_pressed = std::max(most_pressed, frame.stats["rod_contact"]["pairs"].get<int>());
  }
  CHECK(most_pressed > 10);  // the layers did rest on each other
}

TEST_CASE("rod-rod contact: a linear solve CG stalls on short of its tolerance is taken inexactly, not split") {
  // rod_pile.json with the default (converged) solver, CG asked for a relative residual of
  // 1e-12 in one iteration. The pressed layers' rods are factored together in the
  // preconditioner (ImplicitEuler::solve_with_cg), so one iteration solves a system to about
  // 1e-16 to 1e-10: some solves stop short of 1e-12 but within its square root, and Newton takes
  // them as inexact steps. Without that, each such solve split the step: with cg_tolerance 1e-8
  // and CG capped at 20 iterations, before the rods were factored together, 1371 substeps in 90
  // steps against 94.
  test::TempFolder folder("rod-pile-inexact");
  run_edited_scene(std::string(test::kScenesDir) + "/rod_pile.json",
                   [](json& scene) {
                     scene["solver"]["cg_max_iterations"] = 1;
                     scene["solver"]["cg_tolerance"] = 1e-12;
                   },
                   folder / "out");
  const OutputFolder read(folder / "out");
  int substeps = 0;
  double largest_residual = 0.0;
  for (int k = 1; k < read.manifest().frame_count; ++k) {
    const Frame frame = read.frame(k);
    CHECK(frame.stats["rod_contact"]["overlapping"].get<int>() == 0);
    substeps += frame.stats["substeps"].get<int>();
    largest_residual = std::max(largest_residual, frame.stats["cg_residual_max"].get<double>());
  }
  CHECK(largest_residual > 1e-12);  // some solve was taken short of cg_tolerance ...
  CHECK(largest_residual <= 1e-6);  // ... but within its square root
  CHECK(substeps < 200);
}

TEST_CASE("rod-rod friction: hair strands dropped across held rods settle without failing the step") {
  // Six strands (50 um hair, 24 edges) dropped across two held rods, rod friction 0.25,
  // 1/60 s (tests/contact/scenes/hair_on_rails_friction.json, 9 steps). Steps with friction
  // between rods converge 100 times tighter than the user's tolerance; where a pressed crossing
  // keeps Newton from getting there, a step within the user's tolerance ends there. Before, step
  // 6 failed with its correction at 2.1e-5 of the strand's length, 1/50 of the tolerance.
  const Scene scene = load_scene(std::string(test::kTestsDir) + "/contact/scenes/hair_on_rails_friction.json");
  test::TempFolder folder("hair-on-rails");
  const std::string out = folder / "out";
  const RunResult result = run_simulation(scene, out);
  CHECK_MESSAGE(result.ok(), result.message);
  const OutputFolder read(out);
  CHECK(read.manifest().frame_count == 10);
  CHECK(read.frame(read.manifest().frame_count - 1).stats["rod_contact"]["overlapping"].get<int>() == 0);
}

TEST_CASE("rod-rod self-contact: the bundled overhand knot tightens past its first touch") {
  // scenes/overhand_knot.json over its first 0.6 s. Its loops first touch at t = 0.27 s, the
  // ends 83 mm apart. Before the primal-dual stiffness and the force-sized barrier
  // (docs/contact.md) the crossing jammed there, pressed to 1e-7 of the radius, and the ends
  // stayed within 84 mm; with them the strands slide over each other and the knot draws in.
  test::TempFolder folder("knot");
  const std::string out = folder / "out";
  run_edited_scene(std::string(test::kScenesDir) + "/overhand_knot.json",
                   [](json& scene) { scene["time"]["duration"] = 0.6; }, out);
  const OutputFolder read(out);
  const Frame last = read.frame(read.manifest().frame_count - 1);
  const std::vector<Vec3>& line = last.rods[0].positions;
  const double ends = (line.back() - line.front()).norm();
  MESSAGE("ends " << ends * 1e3 << " mm apart at t = " << last.time << " s");
  CHECK(ends > 0.1);
  int touching = 0;
  for (int k = 0; k < read.manifest().frame_count; ++k)
    touching = std::max(touching, read.frame(k).stats["rod_contact"]["pairs"].get<int>());
  CHECK(touching > 1);  // more than the first crossing presses now
}

TEST_CASE("rod-rod contact: the same end state bit for bit on one thread and two") {
  // Stepping the integrator itself, with the thread count set (`bristle run` keeps scenes of
  // fewer than 5000 free DOFs per thread on one): the broad phase, the pairs' CCD bounds and
  // the force estimates must not depend on it. The rod pile (12 rods in contact on a table)
  // and the overhand knot past its first touch (self-contact, force-sized barrier); the pile
  // again with its contacts as constraints (the rows, their relinearisation and the impulse
  // solve's order must not depend on it either).
  struct Case {
    std::string file;
    double duration;
    RodContactMethod method;
  };
  for (const Case& c : {Case{"rod_pile.json", 0.5, RodContactMethod::Barrier},
                        Case{"overhand_knot.json", 0.3, RodContactMethod::Barrier},
                        Case{"rod_pile.json", 0.3, RodContactMethod::Constraints}}) {
    const std::string& file = c.file;
    const double duration = c.duration;
    CAPTURE(file);
    CAPTURE(c.method == RodContactMethod::Constraints);
    REQUIRE(load_scene(std::string(test::kScenesDir) + "/" + file).handles.empty());
    Scene scene = load_scene(std::string(test::kScenesDir) + "/" + file);
    scene.model.rod_contact.method = c.method;
    std::vector<VecX> ends;
    for (const int threads : {1, 2}) {
      SolverSettings settings = scene.solver;
      settings.threads = threads;
      ImplicitEuler integrator(scene.model, settings);
      State state = initial_state(scene.model);
      const int steps = static_cast<int>(std::lround(duration / scene.time.dt));
      for (int k = 0; k < steps; ++k) {
        const StepReport report = integrator.step(state, scene.time.dt);
        REQUIRE_MESSAGE(report.ok, report.failure);
      }
      ends.push_back(state.positions);
    }
    REQUIRE(ends[0].size() == ends[1].size());
    CHECK(std::memcmp(ends[0].data(), ends[1].data(), sizeof(double) * ends[0].size()) == 0);
  }
}

TEST_CASE("rod contact as constraints: the rod pile settles converged, in few Newton iterations a step") {
  // 12 rods dropped in crossed layers on a table, 1.5 s at 1/60 s, contacts as constraints.
  // Each step's impulse solve starts from the last step's impulses, and its sweeps are
  // accelerated (nonsmooth conjugate gradients): 226 Newton iterations in the 90 steps. With
  // neither 905 (10 a step), the acceleration alone 443, the warm start alone about 440: the
  // bound fails without either. Deepest about 0.05% of a radius.
  Scene scene = load_scene(std::string(test::kScenesDir) + "/rod_pile.json");
  scene.model.rod_contact.method = RodContactMethod::Constraints;
  ImplicitEuler integrator(scene.model, scene.solver);
  State state = initial_state(scene.model);
  const int steps = static_cast<int>(std::lround(1.5 / scene.time.dt));
  int newton = 0, unconverged = 0, pressed = 0;
  double deepest_pair = 0.0, deepest_table = 0.0;
  for (int k = 0; k < steps; ++k) {
    const StepReport report = integrator.step(state, scene.time.dt);
    REQUIRE_MESSAGE(report.ok, report.failure);
    newton += report.newton_iterations;
    unconverged += report.converged ? 0 : 1;
    pressed = std::max(pressed, report.contacts_pressed);
    deepest_pair = std::max(deepest_pair, -report.rod_contact.min_gap_fraction);
    deepest_table = std::max(deepest_table, report.contact.max_penetration_fraction);
  }
  MESSAGE(newton << " Newton iterations in " << steps << " steps, up to " << pressed
                 << " contacts pressed; deepest pair " << deepest_pair << ", in the table " << deepest_table
                 << " of the radius");
  CHECK(pressed > 20);
  CHECK(unconverged == 0);
  CHECK(newton <= 4 * steps);
  CHECK(deepest_pair < 0.01);
  CHECK(deepest_table < 0.01);
}

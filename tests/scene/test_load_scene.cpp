#include <cmath>
#include <fstream>
#include <string>

#include <doctest/doctest.h>

#include "bristle/contact/rod_overlaps.hpp"
#include "bristle/scene/load_scene.hpp"
#include "bristle/scene/scene_error.hpp"
#include "support/scene_refusal.hpp"
#include "test_paths.hpp"

using namespace bristle;

namespace {

constexpr double kPi = 3.14159265358979323846;

std::string data_path(const char* name) { return std::string(bristle::test::kTestsDir) + "/scene/data/" + name; }

// Two models are the same when every rod, load and collider is (bitwise, for the numbers).
void check_same_model(const Model& a, const Model& b) {
  CHECK(a.dimension == b.dimension);
  CHECK(a.gravity == b.gravity);
  CHECK(a.damping_mass == b.damping_mass);
  CHECK(a.damping_stiffness == b.damping_stiffness);
  REQUIRE(a.rods.size() == b.rods.size());
  for (std::size_t r = 0; r < a.rods.size(); ++r) {
    CHECK(a.rods[r].name == b.rods[r].name);
    CHECK(a.rods[r].initial_positions == b.rods[r].initial_positions);
    CHECK(a.rods[r].rest_lengths == b.rods[r].rest_lengths);
    CHECK(a.rods[r].rest_angles == b.rods[r].rest_angles);
    CHECK(a.rods[r].fixed == b.rods[r].fixed);
    CHECK(a.rods[r].material.density == b.rods[r].material.density);
    CHECK(a.rods[r].material.radius == b.rods[r].material.radius);
    CHECK(a.rods[r].material.youngs_modulus == b.rods[r].material.youngs_modulus);
  }
  REQUIRE(a.loads.size() == b.loads.size());
  for (std::size_t k = 0; k < a.loads.size(); ++k) {
    CHECK(a.loads[k].rod == b.loads[k].rod);
    CHECK(a.loads[k].vertex == b.loads[k].vertex);
    CHECK(a.loads[k].force == b.loads[k].force);
    CHECK(a.loads[k].ramp == b.loads[k].ramp);
  }
  REQUIRE(a.colliders.size() == b.colliders.size());
  for (std::size_t k = 0; k < a.colliders.size(); ++k) {
    CHECK(a.colliders[k].type == b.colliders[k].type);
    CHECK(a.colliders[k].normal == b.colliders[k].normal);
    CHECK(a.colliders[k].center == b.colliders[k].center);
    CHECK(a.colliders[k].rotation.isApprox(b.colliders[k].rotation, 1e-15));
    CHECK(a.colliders[k].friction == b.colliders[k].friction);
  }
}

const char* const kBrushScene = R"({
  "format": "bristle-scene/1",
  "dimension": 3,
  "time": { "dt": 0.0005, "duration": 0.01 },
  "materials": { "nylon": { "density": 1140, "radius": 0.0001, "youngs_modulus": 3e9 } },
  "rods": [
    { "name": "tuft", "material": "nylon",
      "generator": { "type": "brush", "layout": { "type": "grid", "rows": 2, "columns": 3, "spacing": 0.0005 },
                     "root": [0, 0, 0], "direction": [0, 0, 3], "length": 0.01, "segments": 4,
                     "jitter": { "length": 0.05, "direction": 0.1, "seed": 7 } } },
    { "material": "nylon", "vertices": [[0, 0, 0.1], [0.01, 0, 0.1]] }
  ],
  "loads": [ { "rod": "tuft_5", "vertex": 4, "force": [0.001, 0, 0] } ]
})";

}  // namespace

TEST_CASE("scene: the solver keys for one solve per step: bending modes and the length correction") {
  const Scene scene = load_scene_from_string(R"({
    "format": "bristle-scene/1",
    "time": { "dt": 0.01, "duration": 1 },
    "solver": { "projection": "bending_modes", "length_correction": true, "line_search": false },
    "rods": [ { "material": { "density": 1, "radius": 0.1, "youngs_modulus": 1 },
                "vertices": [[0, 0, 0], [1, 0, 0], [1, 1, 0]] } ]
  })", "scenes/one_solve.json");
  CHECK(scene.solver.projection == HessianProjection::BendingModes);
  CHECK(scene.solver.length_correction);
  CHECK(!scene.solver.line_search);
  CHECK(scene.expanded["solver"]["projection"] == "bending_modes");
  CHECK(scene.expanded["solver"]["length_correction"] == true);
}

TEST_CASE("scene: a valid 3D scene loads with every key honoured") {
  const Scene scene = load_scene(data_path("valid_3d.json"));
  CHECK(scene.name == "scene-test");
  CHECK(scene.source_path == data_path("valid_3d.json"));
  CHECK(scene.time.dt == 0.001);
  CHECK(scene.time.frame_dt == 0.01);
  CHECK(scene.time.steps_per_frame() == 10);
  CHECK(scene.time.frame_count() == 11);
  CHECK(scene.solver.cg_tolerance == 1e-9);
  CHECK(scene.solver.cg_max_iterations == 500);
  CHECK(scene.solver.newton_iterations == 2);
  CHECK(scene.mode == SolverMode::Dynamic);

  const Model& model = scene.model;
  CHECK(model.dimension == 3);
  CHECK(model.gravity == Vec3(0, -9.81, 0));
  CHECK(model.damping_mass == 0.1);
  CHECK(model.damping_stiffness == 0.001);
  REQUIRE(model.rods.size() == 2);

  const Rod& bent = model.rods[0];
  CHECK(bent.name == "bent");
  CHECK(bent.vertex_count() == 3);
  CHECK(bent.fixed == std::vector<int>{0, 1});
  CHECK(bent.material.density == 1140);
  // Rest angle at the kink: edges along x and along (1, 1, 0), a quarter of pi.
  CHECK(bent.rest_angles[1] == doctest::Approx(kPi / 4));
  const double area = kPi * 1e-4 * 1e-4;
  CHECK(bent.vertex_mass(0) == doctest::Approx(1140 * area * 0.0005));
  CHECK(bent.vertex_mass(1) == doctest::Approx(1140 * area * 0.5 * (0.001 + std::sqrt(2e-6))));

  const Rod& line = model.rods[1];
  CHECK(line.name == "line");
  CHECK(line.vertex_count() == 31);
  CHECK(line.fixed == std::vector<int>{0});
  CHECK(line.material.radius == 0.0002);
  CHECK(line.rest_length() == doctest::Approx(0.03));
  for (double angle : line.rest_angles) CHECK(angle == 0.0);

  // `bent` rests bent in 3D without a "twist" key: it twists by default, one twist DOF per
  // edge (the first edge's clamped by its fixed vertices 0 and 1); `line` is straight.
  CHECK(bent.twist);
  CHECK_FALSE(line.twist);
  CHECK(model.layout.vertex_count() == 34);  // finalized
  CHECK(model.layout.dof_count() == 3 * 34 + 2);
  CHECK(model.layout.free_dof_count() == 3 * (34 - 3) + 1);

  REQUIRE(model.loads.size() == 1);
  CHECK(model.loads[0].rod == 1);
  CHECK(model.loads[0].vertex == 30);
  CHECK(model.loads[0].force == Vec3(0, -0.001, 0));
  CHECK(model.loads[0].ramp == 0.05);

  REQUIRE(model.colliders.size() == 4);
  CHECK(model.colliders[0].type == ColliderType::Plane);
  CHECK(model.colliders[0].normal == Vec3(0, 1, 0));  // normalised
  CHECK(model.colliders[0].friction == 0.3);
  CHECK(model.colliders[1].type == ColliderType::Sphere);
  CHECK(model.colliders[1].radius == 0.002);
  CHECK(model.colliders[1].friction == 0.0);  // default
  CHECK(model.colliders[2].type == ColliderType::Capsule);
  CHECK(model.colliders[2].b == Vec3(0.01, 0, 0.02));
  CHECK(model.colliders[3].type == ColliderType::Box);
  CHECK(model.colliders[3].half_extents == Vec3(0.01, 0.02, 0.03));
  CHECK((model.colliders[3].rotation * Vec3::UnitX() - Vec3(std::cos(0.5), std::sin(0.5), 0)).norm() < 1e-15);
}

TEST_CASE("scene: the expanded scene has defaults filled, generators expanded, and loads the same model") {
  const Scene scene = load_scene(data_path("valid_3d.json"));
  const nlohmann::json& expanded = scene.expanded;
  CHECK(expanded["format"] == "bristle-scene/1");
  CHECK(expanded["rods"][1].contains("vertices"));
  CHECK(!expanded["rods"][1].contains("generator"));
  CHECK(expanded["rods"][1]["vertices"].size() == 31);
  CHECK(expanded["rods"][1]["material"]["density"] == 1000.0);
  CHECK(expanded["rods"][0]["material"] == "nylon");
  CHECK(expanded["colliders"][1]["friction"] == 0.0);

  const Scene again = load_scene_from_string(expanded.dump(2), "expanded.json");
  check_same_model(scene.model, again.model);
  CHECK(again.expanded == expanded);
}

TEST_CASE("scene: defaults fill in what a minimal scene leaves out") {
  const Scene scene = load_scene_from_string(R"({
    "format": "bristle-scene/1",
    "time": { "dt": 0.01, "duration": 1 },
    "rods": [ { "material": { "density": 1, "radius": 0.1, "youngs_modulus": 1 },
                "vertices": [[0, 0, 0], [1, 0, 0], [1, 1, 0]] } ]
  })", "scenes/minimal.json");
  CHECK(scene.name == "minimal");  // the file stem
  CHECK(scene.source_path.empty());
  CHECK(scene.model.dimension == 3);
  CHECK(scene.time.frame_dt == 0.01);
  CHECK(scene.time.frame_count() == 101);
  CHECK(scene.model.gravity == Vec3::Zero());
  CHECK(scene.solver.cg_tolerance == 1e-8);
  CHECK(scene.solver.cg_max_iterations == 1000);
  CHECK(scene.solver.converged());  // Newton until converged: the default (docs/scene-format.md)
  CHECK(scene.solver.scheme == TimeScheme::BackwardEuler);
  CHECK(scene.expanded["solver"]["newton_iterations"] == "converged");
  CHECK(scene.expanded["solver"]["integrator"] == "backward_euler");
  CHECK(scene.mode == SolverMode::Dynamic);
  CHECK(scene.model.rods[0].name == "rod0");
  CHECK(scene.model.rods[0].fixed.empty());
  CHECK(scene.model.rods[0].rest_angles[1] == doctest::Approx(kPi / 2));  // rest "initial"
  CHECK(scene.model.loads.empty());
  CHECK(scene.model.colliders.empty());
  CHECK(scene.expanded["solver"]["mode"] == "dynamic");
  CHECK(!scene.solver.length_correction);
  CHECK(scene.solver.projection == HessianProjection::BendingModes);
  CHECK(scene.expanded["solver"]["length_correction"] == false);
  CHECK(scene.expanded["damping"]["mass"] == 0.0);
  CHECK(scene.expanded["rods"][0]["rest"] == "initial");
  CHECK(scene.expanded["rods"][0]["fixed"] == nlohmann::json::array());
}

TEST_CASE("scene: static mode and rest straight") {
  const Scene scene = load_scene_from_string(R"({
    "format": "bristle-scene/1",
    "time": { "dt": 0.01, "duration": 1 },
    "solver": { "mode": "static" },
    "rods": [ { "material": { "density": 1, "radius": 0.1, "youngs_modulus": 1 }, "rest": "straight",
                "vertices": [[0, 0, 0], [1, 0, 0], [1, 1, 0]] } ]
  })", "s.json");
  CHECK(scene.mode == SolverMode::Static);
  CHECK(scene.model.rods[0].rest_angles[1] == 0.0);
}

TEST_CASE("scene: 2D scenes take 2-component vectors and store z = 0") {
  const Scene scene = load_scene_from_string(R"({
    "format": "bristle-scene/1",
    "dimension": 2,
    "time": { "dt": 0.001, "frame_dt": 0.005, "duration": 0.1 },
    "gravity": [0, -9.81],
    "materials": { "steel": { "density": 7800, "radius": 0.001, "youngs_modulus": 2e11 } },
    "rods": [
      { "name": "hook", "material": "steel", "vertices": [[0, 0], [0.01, 0], [0.01, 0.01]], "fixed": [0] },
      { "name": "tuft", "material": "steel",
        "generator": { "type": "brush", "layout": { "type": "grid", "columns": 3, "spacing": 0.003 },
                       "root": [0, 0.1], "direction": [0, 1], "length": 0.02, "segments": 2 } },
      { "name": "s", "material": "steel", "generator": { "type": "straight", "from": [0, 1], "to": [1, 1], "segments": 2 } }
    ],
    "loads": [ { "rod": "hook", "vertex": 2, "force": [1, 0] } ],
    "colliders": [ { "type": "plane", "point": [0, -1], "normal": [0, 3] },
                   { "type": "box", "center": [0, 2], "half_extents": [1, 1], "rotation": { "angle": 0.1 } } ]
  })", "flat.json");
  const Model& model = scene.model;
  CHECK(model.dimension == 2);
  CHECK(model.gravity == Vec3(0, -9.81, 0));
  REQUIRE(model.rods.size() == 5);
  CHECK(model.rods[0].initial_positions[2] == Vec3(0.01, 0.01, 0));
  // Signed rest angle in 2D: a left turn is positive.
  CHECK(model.rods[0].rest_angles[1] == doctest::Approx(kPi / 2));
  CHECK(model.rods[1].name == "tuft_0");
  CHECK(model.rods[3].name == "tuft_2");
  CHECK(model.rods[1].fixed == std::vector<int>{0, 1});
  for (int k = 1; k <= 3; ++k) {
    CHECK(model.rods[k].initial_positions.front().y() == 0.1);
    CHECK(model.rods[k].initial_positions.back().y() == doctest::Approx(0.12));
  }
  CHECK(model.rods[4].vertex_count() == 3);
  CHECK(model.loads[0].force == Vec3(1, 0, 0));
  CHECK(model.colliders[0].normal == Vec3(0, 1, 0));
  CHECK(model.colliders[1].half_extents == Vec3(1, 1, 0));
  CHECK(model.layout.dof_count() == 2 * model.layout.vertex_count());
  // The expanded scene keeps 2-component vectors.
  CHECK(scene.expanded["rods"][1]["vertices"][0].size() == 2);
  CHECK(scene.expanded["gravity"].size() == 2);
  const Scene again = load_scene_from_string(scene.expanded.dump(), "again.json");
  check_same_model(model, again.model);
}

TEST_CASE("scene: a brush entry expands into rods named <name>_<k>, the same every time") {
  const Scene scene = load_scene_from_string(kBrushScene, "brush.json");
  const Model& model = scene.model;
  REQUIRE(model.rods.size() == 7);
  for (int k = 0; k < 6; ++k) {
    CHECK(model.rods[k].name == "tuft_" + std::to_string(k));
    CHECK(model.rods[k].vertex_count() == 5);
    CHECK(model.rods[k].fixed == std::vector<int>{0, 1});  // clamped roots by default
    CHECK(model.rods[k].initial_positions.front().z() == 0.0);  // on the base plane z = 0
  }
  CHECK(model.rods[6].name == "rod1");  // default names count entries, not rods
  CHECK(model.loads[0].rod == 5);
  CHECK(scene.expanded["rods"].size() == 7);
  CHECK(scene.expanded["rods"][0]["name"] == "tuft_0");

  const Scene again = load_scene_from_string(kBrushScene, "brush.json");
  check_same_model(model, again.model);
  const Scene reloaded = load_scene_from_string(scene.expanded.dump(), "expanded.json");
  check_same_model(model, reloaded.model);
}

TEST_CASE("scene: the bundled brushes start with no bristle inside another, the same on every load") {
  // Before bristles were planted clear of each other, brush_stroke.json started with 1091
  // overlapping segment pairs and demo.json with 36.
  for (const char* name : {"brush_stroke.json", "demo.json"}) {
    CAPTURE(name);
    const Scene scene = load_scene(std::string(bristle::test::kScenesDir) + "/" + name);
    const OverlapReport report = find_initial_overlaps(scene.model);
    CHECK(report.complete);
    CHECK(report.overlaps.empty());
    const Scene again = load_scene(std::string(bristle::test::kScenesDir) + "/" + name);
    CHECK(scene.expanded.dump() == again.expanded.dump());
    check_same_model(scene.model, again.model);
  }
}

TEST_CASE("scene: load_scene reports files it cannot read and syntax errors with their line") {
  try {
    load_scene(data_path("does_not_exist.json"));
    FAIL("expected a SceneError");
  } catch (const SceneError& e) {
    CHECK(e.pointer().empty());
    CHECK(e.message().find("cannot open") != std::string::npos);
  }
  try {
    load_scene(data_path("syntax_error.json"));
    FAIL("expected a SceneError");
  } catch (const SceneError& e) {
    CHECK(e.line() == 7);
    CHECK(e.pointer().empty());
    CHECK(e.message().find("invalid JSON at column 3") == 0);
    CHECK(std::string(e.what()).find("syntax_error.json:7: invalid JSON at column 3: ") != std::string::npos);
  }
}

TEST_CASE("scene: the complete scenes in docs/scene-format.md load") {
  // The documentation's examples are scenes users copy: each complete one (a JSON block with
  // a "format" key) must load as written, so the page cannot drift from the loader.
  std::ifstream in(std::string(bristle::test::kSourceDir) + "/docs/scene-format.md");
  REQUIRE(in);
  std::string line, block;
  bool inside = false;
  int loaded = 0;
  int line_number = 0, block_start = 0;
  while (std::getline(in, line)) {
    ++line_number;
    if (!inside && line == "```json") {
      inside = true;
      block.clear();
      block_start = line_number + 1;
    } else if (inside && line == "```") {
      inside = false;
      if (block.rfind("{", 0) != 0 || block.find("\"format\": \"bristle-scene/1\"") == std::string::npos) continue;
      CAPTURE(block_start);
      CHECK_NOTHROW(load_scene_from_string(block, "docs/scene-format.md"));
      ++loaded;
    } else if (inside) {
      block += line + "\n";
    }
  }
  CHECK(loaded >= 2);  // the minimal and the full example
}

TEST_CASE("scene: a top-level \"$schema\" string is accepted for editors and left out of the expanded scene") {
  const std::string body = R"(
    "time": { "dt": 0.01, "duration": 1 },
    "rods": [ { "material": { "density": 1, "radius": 0.1, "youngs_modulus": 1 },
                "vertices": [[0, 0, 0], [1, 0, 0]] } ] })";
  const Scene plain = load_scene_from_string(R"({ "format": "bristle-scene/1",)" + body, "scene.json");
  const Scene with_schema = load_scene_from_string(
      R"({ "$schema": "../scenes/bristle-scene.schema.json", "format": "bristle-scene/1",)" + body, "scene.json");
  CHECK(!with_schema.expanded.contains("$schema"));
  CHECK(with_schema.expanded == plain.expanded);  // the manifest does not change

  SUBCASE("it must be a string") {
    const SceneError e =
        test::scene_refusal(R"({ "$schema": 7, "format": "bristle-scene/1",)" + body);
    CHECK(e.pointer() == "/$schema");
    CHECK(e.message().find("expected a string") == 0);
  }
  SUBCASE("only at the top level") {
    const SceneError e = test::scene_refusal(R"({ "format": "bristle-scene/1",
      "time": { "$schema": "x", "dt": 0.01, "duration": 1 },
      "rods": [ { "material": { "density": 1, "radius": 0.1, "youngs_modulus": 1 },
                  "vertices": [[0, 0, 0], [1, 0, 0]] } ] })");
    CHECK(e.pointer() == "/time/$schema");
  }
  SUBCASE("a key missing its dollar is suggested the right spelling") {
    const SceneError e = test::scene_refusal(R"({ "schema": "x", "format": "bristle-scene/1",)" + body);
    CHECK(e.pointer() == "/schema");
    CHECK(e.message().find("did you mean \"$schema\"?") != std::string::npos);
  }
}

TEST_CASE("scene: a 3D rod at rest in a curved shape twists unless told not to") {
  // Without material frames a curved 3D rest shape is kept angle by angle but not in its
  // bending direction: a helix unwinds under gravity. So a 3D rod with "rest": "initial" (the
  // default) whose vertices bend anywhere gets twist by default; a straight one, a rod with
  // "rest": "straight", an explicit "twist": false and any 2D rod do not.
  auto load = [](const std::string& dimension, const std::string& rods) {
    return load_scene_from_string(R"({ "format": "bristle-scene/1", "dimension": )" + dimension + R"(,
      "time": { "dt": 0.01, "duration": 1 },
      "materials": { "hair": { "density": 1300, "radius": 5e-5, "youngs_modulus": 3e9 } },
      "rods": [)" + rods + "] }",
                                  "default_twist.json");
  };
  const Scene scene = load("3", R"(
      { "name": "helix", "material": "hair", "fixed": [0, 1],
        "generator": { "type": "helix", "centre": [0, 0, 0], "axis": [0, -1, 0], "radius": 0.005,
                       "pitch": 0.005, "turns": 3, "segments": 60 } },
      { "name": "arc", "material": "hair", "vertices": [[0, 0, 0], [0.01, 0, 0], [0.02, 0.001, 0]] },
      { "name": "line", "material": "hair", "vertices": [[0, 0, 0], [0.01, 0, 0], [0.02, 0, 0]] },
      { "name": "told", "material": "hair", "twist": false, "vertices": [[0, 0, 0], [0.01, 0, 0], [0.02, 0.001, 0]] },
      { "name": "straightened", "material": "hair", "rest": "straight",
        "vertices": [[0, 0, 0], [0.01, 0, 0], [0.02, 0.001, 0]] })");
  CHECK(scene.model.rods[0].twist);
  CHECK(scene.model.rods[1].twist);
  CHECK_FALSE(scene.model.rods[2].twist);
  // A straight line written to 7 significant digits (its rounding turns edges by up to 1e-5
  // rad) is straight.
  const Scene rounded = load("3", R"({ "name": "rounded", "material": "hair", "vertices": [[0, 0, 0], [0.005, 0.003535534, 0.001591549], [0.01, 0.007071068, 0.003183099], [0.015, 0.0106066, 0.004774648], [0.02, 0.01414214, 0.006366198], [0.025, 0.01767767, 0.007957747], [0.03, 0.0212132, 0.009549297], [0.035, 0.02474874, 0.01114085], [0.04, 0.02828427, 0.0127324], [0.045, 0.03181981, 0.01432394], [0.05, 0.03535534, 0.01591549], [0.055, 0.03889087, 0.01750704], [0.06, 0.04242641, 0.01909859], [0.065, 0.04596194, 0.02069014], [0.07, 0.04949747, 0.02228169], [0.075, 0.05303301, 0.02387324], [0.08, 0.05656854, 0.02546479], [0.085, 0.06010408, 0.02705634], [0.09, 0.06363961, 0.02864789], [0.095, 0.06717514, 0.03023944], [0.1, 0.07071068, 0.03183099]] })");
  CHECK_FALSE(rounded.model.rods[0].twist);
  CHECK_FALSE(scene.model.rods[3].twist);
  CHECK_FALSE(scene.model.rods[4].twist);
  // The expanded scene says so, and reloads to the same rods.
  CHECK(scene.expanded["rods"][0]["twist"] == true);
  CHECK_FALSE(scene.expanded["rods"][2].contains("twist"));
  CHECK(scene.expanded["rods"][3]["twist"] == false);
  const Scene again = load_scene_from_string(scene.expanded.dump(2), "expanded.json");
  for (int r = 0; r < 5; ++r) CHECK(again.model.rods[r].twist == scene.model.rods[r].twist);
  const Scene flat = load("2", R"({ "name": "arc", "material": "hair", "vertices": [[0, 0], [0.01, 0], [0.02, 0.001]] })");
  CHECK_FALSE(flat.model.rods[0].twist);
  // A flat section needs material frames: a curved ribbon has them by default, a straight one
  // must ask.
  const std::string ribbon = R"({ "format": "bristle-scene/1", "dimension": 3, "time": { "dt": 0.01, "duration": 1 },
      "materials": { "band": { "density": 1300, "youngs_modulus": 3e9,
                               "cross_section": { "type": "rectangle", "width": 1e-3, "thickness": 1e-4 } } },
      "rods": [ { "name": "ribbon", "material": "band", "vertices": VERTICES } ] })";
  auto with_vertices = [&](const std::string& vertices) {
    std::string text = ribbon;
    text.replace(text.find("VERTICES"), 8, vertices);
    return text;
  };
  CHECK(load_scene_from_string(with_vertices("[[0, 0, 0], [0.01, 0, 0], [0.02, 0.001, 0]]"), "ribbon.json")
            .model.rods[0]
            .twist);
  CHECK_THROWS_WITH_AS(load_scene_from_string(with_vertices("[[0, 0, 0], [0.01, 0, 0], [0.02, 0, 0]]"), "ribbon.json"),
                       doctest::Contains("needs \"twist\": true"), SceneError);
}

TEST_CASE("scene: rods with twist, their shear modulus and the helix generator") {
  const Scene scene = load_scene_from_string(R"({
    "format": "bristle-scene/1",
    "time": { "dt": 0.01, "duration": 1 },
    "materials": {
      "hair": { "density": 1300, "radius": 5e-5, "youngs_modulus": 3e9, "poissons_ratio": 0.25 },
      "wire": { "density": 7800, "radius": 5e-4, "youngs_modulus": 2e11, "shear_modulus": 8e10 },
      "plain": { "density": 1000, "radius": 1e-3, "youngs_modulus": 1e9 }
    },
    "rods": [
      { "name": "curl", "material": "hair", "twist": true, "material_normal": [0, 0, 1], "fixed": [0, 1],
        "generator": { "type": "helix", "centre": [0, 0, 0], "axis": [0, -2, 0], "radius": 0.01,
                       "pitch": 0.02, "turns": 2, "handedness": "left", "segments": 40 } },
      { "name": "spring", "material": "wire", "twist": true,
        "vertices": [[0, 0, 0], [0.01, 0, 0], [0.02, 0.001, 0]] },
      { "name": "stick", "material": "plain", "vertices": [[0, 0, 0], [0.01, 0, 0]] }
    ]
  })", "twist.json");
  const Rod& curl = scene.model.rods[0];
  CHECK(curl.twist);
  CHECK(curl.material_normal == Vec3(0, 0, 1));
  CHECK(curl.material.shear() == doctest::Approx(3e9 / 2.5).epsilon(1e-15));
  CHECK(scene.model.rods[1].material.shear() == 8e10);
  CHECK(scene.model.rods[2].material.shear() == doctest::Approx(1e9 / 3.0).epsilon(1e-15));  // nu = 0.5
  CHECK_FALSE(scene.model.rods[2].twist);
  // The layout has a twist DOF per edge of the rods with twist only.
  CHECK(scene.model.layout.twist_dof_count() == 40 + 2);
  // The helix: 41 vertices of radius 0.01 about the -y axis through the origin, left-handed,
  // advancing 0.02 per turn downwards.
  REQUIRE(curl.vertex_count() == 41);
  for (const Vec3& x : curl.initial_positions) CHECK(std::hypot(x.x(), x.z()) == doctest::Approx(0.01).epsilon(1e-12));
  CHECK(curl.initial_positions.back().y() == doctest::Approx(-0.04).epsilon(1e-12));
  const Vec3 a = curl.initial_positions[0], b = curl.initial_positions[1];
  // Left-handed about -y: seen from the tip of the axis (below), clockwise, so the angular
  // momentum direction of the winding is +y.
  CHECK(a.cross(b).y() > 0.0);
  // The expanded scene records what was given and reloads to the same rods.
  CHECK(scene.expanded["rods"][0]["twist"] == true);
  CHECK(scene.expanded["rods"][0]["material_normal"] == nlohmann::json::array({0.0, 0.0, 1.0}));
  CHECK(scene.expanded["materials"]["hair"]["shear_modulus"] == doctest::Approx(1.2e9));
  CHECK_FALSE(scene.expanded["materials"]["plain"].contains("shear_modulus"));
  CHECK_FALSE(scene.expanded["rods"][2].contains("twist"));
  const Scene again = load_scene_from_string(scene.expanded.dump(2), "expanded.json");
  CHECK(again.expanded == scene.expanded);
  CHECK(again.model.layout.twist_dof_count() == 42);
}

TEST_CASE("scene: cross-sections, rest twist and twist_fixed") {
  const std::string head = R"({ "format": "bristle-scene/1", "dimension": 3, "time": { "dt": 0.01, "duration": 0.02 },
    "materials": {
      "ribbon": { "density": 1000, "cross_section": { "type": "rectangle", "width": 0.004, "thickness": 0.0005 },
                  "youngs_modulus": 1e9, "poissons_ratio": 0.3 },
      "oval": { "density": 1000, "cross_section": { "type": "ellipse", "a": 0.001, "b": 0.002 }, "youngs_modulus": 1e9 },
      "disc": { "density": 1000, "cross_section": { "type": "circle", "radius": 0.001 }, "youngs_modulus": 1e9 },
      "round": { "density": 1000, "radius": 0.001, "youngs_modulus": 1e9 } },
    "rods": [)";
  const std::string line = R"("vertices": [[0, 0, 0], [0.01, 0, 0], [0.02, 0, 0], [0.03, 0, 0]])";
  const Scene scene = load_scene_from_string(
      head + R"(
      { "name": "strip", "material": "ribbon", "twist": true, "material_normal": [0, 1, 0], "rest_twist": 2.5,
        "fixed": [0, 1], "twist_fixed": { "root": false }, )" + line + R"( },
      { "name": "pin", "material": "oval", "twist": true, "fixed": [0], "twist_fixed": { "root": true, "tip": false }, )" +
          line + R"( },
      { "name": "plain", "material": "disc", )" + line + R"( },
      { "name": "wire", "material": "round", "twist": true, "fixed": [0, 1], )" + line + R"( } ] })",
      "sections.json");
  const Model& model = scene.model;
  const Rod& strip = model.rods[0];
  CHECK(strip.material.section().shape == CrossSection::Shape::Rectangle);
  CHECK(strip.material.section().size1 == 0.004);
  CHECK(strip.material.section().size2 == 0.0005);
  CHECK(strip.material.radius == 0.002);  // contact and rendering: the half width
  CHECK(strip.material.area() == doctest::Approx(2e-6).epsilon(1e-14).scale(0.0));
  CHECK(strip.rest_twist == 2.5);
  // A twist DOF's inertia is rho (I1 + I2) L_j: (w^3 t + w t^3) / 12 for the ribbon.
  CHECK(model.dof_masses()[model.layout.edge_dof(0, 1)] ==
        doctest::Approx(1000.0 * (6.4e-8 * 5e-4 + 0.004 * 1.25e-10) / 12.0 * 0.01).epsilon(1e-14).scale(0.0));
  // twist_fixed root false frees the clamped root edge's twist (a bearing); the others follow
  // the default rule.
  CHECK_FALSE(strip.is_twist_fixed(0));
  CHECK(model.layout.free_index(model.layout.edge_dof(0, 0)) >= 0);
  CHECK(model.layout.free_index(model.layout.edge_dof(0, 1)) >= 0);
  // The initial twists climb at the rest twist rate: theta_j = 2.5 * 0.01 * j.
  const State state = initial_state(model);
  CHECK(state.positions[model.layout.edge_dof(0, 0)] == 0.0);
  for (int j = 1; j < 3; ++j) CHECK(state.positions[model.layout.edge_dof(0, j)] == doctest::Approx(0.025 * j).epsilon(1e-14).scale(0.0));
  const Rod& pin = model.rods[1];
  CHECK(pin.material.radius == 0.002);
  CHECK(pin.material.section().second_moment_2() == doctest::Approx(kPi * 0.001 * 8e-9 / 4.0).epsilon(1e-14).scale(0.0));
  CHECK(pin.is_twist_fixed(0));  // a pinned root whose twist is held
  CHECK(model.layout.free_index(model.layout.edge_dof(1, 0)) < 0);
  CHECK_FALSE(pin.is_twist_fixed(2));
  CHECK(model.rods[2].material.section().shape == CrossSection::Shape::Circle);
  CHECK(model.rods[2].material.radius == 0.001);
  CHECK(model.rods[3].is_twist_fixed(0));  // the default: a clamp holds its frame
  CHECK_FALSE(model.rods[3].is_twist_fixed(1));

  // The expanded scene records what was given, and reloads to the same model.
  CHECK(scene.expanded["materials"]["ribbon"]["cross_section"] ==
        nlohmann::json({{"type", "rectangle"}, {"width", 0.004}, {"thickness", 0.0005}}));
  CHECK_FALSE(scene.expanded["materials"]["ribbon"].contains("radius"));
  CHECK(scene.expanded["materials"]["round"]["radius"] == 0.001);
  CHECK(scene.expanded["rods"][0]["rest_twist"] == 2.5);
  CHECK(scene.expanded["rods"][0]["twist_fixed"] == nlohmann::json({{"root", false}}));
  CHECK(scene.expanded["rods"][1]["twist_fixed"] == nlohmann::json({{"root", true}, {"tip", false}}));
  CHECK_FALSE(scene.expanded["rods"][3].contains("rest_twist"));
  CHECK_FALSE(scene.expanded["rods"][3].contains("twist_fixed"));
  const Scene again = load_scene_from_string(scene.expanded.dump(2), "expanded.json");
  CHECK(again.expanded == scene.expanded);
  for (std::size_t r = 0; r < model.rods.size(); ++r) {
    CHECK(again.model.rods[r].material.section().size1 == model.rods[r].material.section().size1);
    CHECK(again.model.rods[r].material.section().size2 == model.rods[r].material.section().size2);
    CHECK(again.model.rods[r].rest_twist == model.rods[r].rest_twist);
    for (int j = 0; j < model.rods[r].edge_count(); ++j)
      CHECK(again.model.rods[r].is_twist_fixed(j) == model.rods[r].is_twist_fixed(j));
  }

  struct Refusal {
    const char* rods;      // the `rods` entries after `head`
    const char* pointer;   // where the error must be
    const char* message;   // a piece of its message
  };
  const std::string v = line;
  const Refusal refusals[] = {
      {R"({ "material": "ribbon", VERTICES })", "/rods/0/material", "needs \"twist\": true"},
      {R"({ "material": "oval", VERTICES })", "/rods/0/material", "ellipse cross-section"},
      {R"({ "material": "round", "rest_twist": 1, VERTICES })", "/rods/0/rest_twist", "\"twist\": true"},
      {R"({ "material": "round", "rest_twist": "1", "twist": true, VERTICES })", "/rods/0/rest_twist", "expected a number"},
      {R"({ "material": "round", "fixed": [0, 1], "twist_fixed": { "root": true }, VERTICES })", "/rods/0/twist_fixed", "\"twist\": true"},
      {R"({ "material": "round", "twist": true, "twist_fixed": { "root": true }, VERTICES })", "/rods/0/twist_fixed/root", "needs vertex 0 fixed"},
      {R"({ "material": "round", "twist": true, "fixed": [0], "twist_fixed": { "tip": true }, VERTICES })", "/rods/0/twist_fixed/tip", "needs vertex 3 fixed"},
      {R"({ "material": "round", "twist": true, "twist_fixed": { "middle": true }, VERTICES })", "/rods/0/twist_fixed/middle", "unknown key"},
      {R"({ "material": "round", "twist": true, "twist_fixed": { "tip": 1 }, VERTICES })", "/rods/0/twist_fixed/tip", "expected"},
      {R"({ "material": { "density": 1, "radius": 0.001, "cross_section": { "type": "circle", "radius": 0.001 }, "youngs_modulus": 1 }, VERTICES })",
       "/rods/0/material/cross_section", "not both"},
      {R"({ "material": { "density": 1, "youngs_modulus": 1 }, VERTICES })", "/rods/0/material/radius", "\"cross_section\""},
      {R"({ "material": { "density": 1, "cross_section": { "type": "square", "width": 1 }, "youngs_modulus": 1 }, VERTICES })",
       "/rods/0/material/cross_section/type", "expected"},
      {R"({ "material": { "density": 1, "cross_section": { "type": "rectangle", "width": 0.001, "thickness": 0 }, "youngs_modulus": 1 }, "twist": true, VERTICES })",
       "/rods/0/material/cross_section/thickness", "positive"},
      {R"({ "material": { "density": 1, "cross_section": { "type": "ellipse", "a": -1, "b": 1 }, "youngs_modulus": 1 }, "twist": true, VERTICES })",
       "/rods/0/material/cross_section/a", "positive"},
      {R"({ "material": { "density": 1, "cross_section": { "type": "ellipse", "a": 1, "width": 1 }, "youngs_modulus": 1 }, "twist": true, VERTICES })",
       "/rods/0/material/cross_section/width", "unknown key"},
      {R"({ "material": { "density": 1, "cross_section": { "a": 1, "b": 1 }, "youngs_modulus": 1 }, "twist": true, VERTICES })",
       "/rods/0/material/cross_section/type", "missing"},
      {R"({ "material": { "density": 1, "cross_section": 0.001, "youngs_modulus": 1 }, VERTICES })",
       "/rods/0/material/cross_section", "expected a cross-section object"},
  };
  for (const Refusal& r : refusals) {
    std::string rods = r.rods;
    rods.replace(rods.find("VERTICES"), 8, v);
    CAPTURE(rods);
    const SceneError e = test::scene_refusal(head + rods + "] }");
    CHECK(e.pointer() == r.pointer);
    CHECK_MESSAGE(e.message().find(r.message) != std::string::npos, e.message());
  }

  // In 2D an anisotropic section bends in the plane with I2 (no twist needed); a square is
  // isotropic and needs no twist in 3D either.
  const Scene flat = load_scene_from_string(R"({ "format": "bristle-scene/1", "dimension": 2,
    "time": { "dt": 0.01, "duration": 0.02 },
    "rods": [ { "material": { "density": 1000, "cross_section": { "type": "rectangle", "width": 0.004, "thickness": 0.0005 },
                              "youngs_modulus": 1e9 },
                "vertices": [[0, 0], [0.01, 0], [0.02, 0]] } ] })", "flat.json");
  CHECK(flat.model.rods[0].bend_stiffness(1) == doctest::Approx(1e9 * 0.004 * 1.25e-10 / 12.0 / 0.01).epsilon(1e-12).scale(0.0));
  CHECK_NOTHROW(load_scene_from_string(head + R"({ "material": { "density": 1, "cross_section": { "type": "rectangle",
      "width": 0.001, "thickness": 0.001 }, "youngs_modulus": 1 }, )" + v + "}] }", "square.json"));
}

TEST_CASE("scene: rod_contact, its defaults, its shorthand and each key, in 2D and 3D") {
  // A scene with `rod_contact` set to `value` (JSON text), or without the key when empty.
  auto load = [](const std::string& value, int dimension = 3) {
    const std::string rod = dimension == 3 ? R"([[0, 0, 0], [1, 0, 0], [1, 1, 0]])" : R"([[0, 0], [1, 0], [1, 1]])";
    return load_scene_from_string(R"({ "format": "bristle-scene/1", "dimension": )" + std::to_string(dimension) +
                                      R"(, "time": { "dt": 0.01, "duration": 1 },
      "rods": [ { "material": { "density": 1, "radius": 0.1, "youngs_modulus": 1 }, "vertices": )" +
                                      rod + " } ]" + (value.empty() ? "" : R"(, "rod_contact": )" + value) + " }",
                                  "scene.json");
  };
  auto expanded = [](bool enabled, double friction, bool self, const char* method = "barrier") {
    return nlohmann::json{{"enabled", enabled}, {"friction", friction}, {"self", self}, {"method", method}};
  };
  auto check = [](const RodContactSettings& s, bool enabled, double friction, bool self) {
    CHECK(s.enabled == enabled);
    CHECK(s.friction == friction);
    CHECK(s.self == self);
  };

  SUBCASE("absent: off, no friction, self-contact on; the expanded scene says so") {
    const Scene scene = load("");
    check(scene.model.rod_contact, false, 0.0, true);
    CHECK(scene.expanded["rod_contact"] == expanded(false, 0.0, true));
  }
  SUBCASE("an empty object reads as absent") {
    const Scene scene = load("{}");
    check(scene.model.rod_contact, false, 0.0, true);
    CHECK(scene.expanded == load("").expanded);
  }
  SUBCASE("the shorthand true and false") {
    check(load("true").model.rod_contact, true, 0.0, true);
    check(load("false").model.rod_contact, false, 0.0, true);
    CHECK(load("true").expanded["rod_contact"] == expanded(true, 0.0, true));
    CHECK(load("true").expanded["rod_contact"] == load(R"({"enabled": true})").expanded["rod_contact"]);
  }
  SUBCASE("each key is read on its own") {
    check(load(R"({"enabled": true})").model.rod_contact, true, 0.0, true);
    check(load(R"({"enabled": false})").model.rod_contact, false, 0.0, true);
    check(load(R"({"friction": 0.35})").model.rod_contact, false, 0.35, true);
    check(load(R"({"self": false})").model.rod_contact, false, 0.0, false);
    check(load(R"({"enabled": true, "friction": 2, "self": false})").model.rod_contact, true, 2.0, false);
    check(load(R"({"friction": 0})").model.rod_contact, false, 0.0, true);  // the bound is allowed
  }
  SUBCASE("allowed in 2D as in 3D") {
    const Scene scene = load(R"({"enabled": true, "friction": 0.5, "self": false})", 2);
    check(scene.model.rod_contact, true, 0.5, false);
    CHECK(scene.expanded["rod_contact"] == expanded(true, 0.5, false));
  }
  SUBCASE("the method: barrier by default, or constraints") {
    CHECK(load("true").model.rod_contact.method == RodContactMethod::Barrier);
    CHECK(load(R"({"method": "barrier"})").model.rod_contact.method == RodContactMethod::Barrier);
    const Scene scene = load(R"({"enabled": true, "method": "constraints"})");
    CHECK(scene.model.rod_contact.method == RodContactMethod::Constraints);
    CHECK(scene.expanded["rod_contact"] == expanded(true, 0.0, true, "constraints"));
    const Scene again = load_scene_from_string(scene.expanded.dump(), "expanded.json");
    CHECK(again.model.rod_contact.method == RodContactMethod::Constraints);
  }
  SUBCASE("the expanded scene reloads to the same settings") {
    const Scene scene = load(R"({"enabled": true, "friction": 0.1})");
    const Scene again = load_scene_from_string(scene.expanded.dump(), "expanded.json");
    check(again.model.rod_contact, true, 0.1, true);
    CHECK(again.expanded == scene.expanded);
  }
  // Refusals (each key's type, friction < 0, a misspelt key): tests/scene/test_scene_validation.cpp.
}

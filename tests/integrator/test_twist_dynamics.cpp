// Rods with twist (discrete elastic rods) in the time step: the "transport frames" stage, a
// helix that hangs as it was given, a twist wave, and frames identical for every thread count.

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "bristle/integrator/implicit_euler.hpp"
#include "bristle/model/handle.hpp"
#include "bristle/model/model.hpp"

using namespace bristle;

namespace {

constexpr double kPi = 3.14159265358979323846;

/// A helix of 3 turns, radius 5 mm, pitch 5 mm, about -y, clamped at its top (vertices 0, 1),
/// "rest": "initial": hair (E = 3 GPa, r = 0.2 mm).
Model hanging_helix(bool twist) {
  const int n = 60;
  std::vector<Vec3> vertices;
  for (int k = 0; k <= n; ++k) {
    const double phi = 2.0 * kPi * 3.0 * k / n;
    vertices.push_back(Vec3(0.005 * std::cos(phi), -0.005 * phi / (2.0 * kPi), 0.005 * std::sin(phi)));
  }
  Material hair;
  hair.density = 1300.0;
  hair.radius = 2e-4;
  hair.youngs_modulus = 3e9;
  Model model;
  model.dimension = 3;
  model.gravity = Vec3(0.0, -9.81, 0.0);
  model.rods.push_back(make_rod("curl", hair, vertices, {0, 1}, RestShape::Initial, 3));
  model.rods[0].twist = twist;
  model.finalize();
  return model;
}

/// Nylon (E = 3 GPa) of the given radius [m].
Material nylon_of_radius(double radius) {
  Material nylon;
  nylon.density = 1140.0;
  nylon.radius = radius;
  nylon.youngs_modulus = 3e9;
  return nylon;
}

/// A 3D model of one rod with twist DOFs.
Model one_rod_with_twist(const std::string& name, const Material& material, const std::vector<Vec3>& vertices,
                         std::vector<int> fixed, RestShape rest) {
  Model model;
  model.dimension = 3;
  model.rods.push_back(make_rod(name, material, vertices, std::move(fixed), rest, 3));
  model.rods[0].twist = true;
  model.finalize();
  return model;
}

double largest_displacement(const Model& model, const State& a, const State& b) {
  double worst = 0.0;
  for (int i = 0; i < model.rods[0].vertex_count(); ++i) {
    const int dof = model.layout.vertex_dof(0, i);
    worst = std::max(worst, (b.positions.segment<3>(dof) - a.positions.segment<3>(dof)).norm());
  }
  return worst;
}

}  // namespace

TEST_CASE("twist: a helix with rest shape \"initial\" hangs as given with twist, and unwinds without") {
  // The measurement: without torsional stiffness the turning-angle bending has a
  // zero-energy mode per free vertex, and a hanging helix unwinds (80% of L); with twist it
  // is at rest as given up to its small sag under gravity.
  double moved[2] = {0.0, 0.0};
  for (const bool twist : {false, true}) {
    const Model model = hanging_helix(twist);
    ImplicitEuler integrator(model, SolverSettings{});
    State state = initial_state(model);
    const State start = state;
    for (int n = 0; n < 240; ++n) {
      const StepReport report = integrator.step(state, 1.0 / 240.0);
      REQUIRE(report.ok);
    }
    moved[twist] = largest_displacement(model, start, state) / model.rods[0].rest_length();
    MESSAGE(std::string(twist ? "with" : "without") << " twist: largest displacement after 1 s " << moved[twist] << " L");
    if (twist) {
      // The frames were carried along: the twist energy stays small next to the bending's
      // work against gravity, and the end state is an equilibrium.
      const EnergyBreakdown e = integrator.energies(state);
      CHECK(e.has_twist);
      CHECK(e.twist >= 0.0);
      CHECK(e.kinetic < 1e-12);
    }
  }
  CHECK(moved[0] > 0.5);
  CHECK(moved[1] < 0.005);
}

TEST_CASE("twist: a rod twisted along its length untwists, the same for every thread count") {
  // A straight rod along x, clamped at its root, with its free edges' twist set to a linear
  // ramp (pre-twisted elastic state) and released: the twist energy drains into motion and
  // is damped by backward Euler; the positions barely move (torsion decouples from bending
  // at a straight rod). Threads 1 and 2 give bitwise the same states.
  const Material nylon = nylon_of_radius(1e-3);
  // Four rods, so that two threads share them out.
  Model model;
  model.dimension = 3;
  for (int r = 0; r < 4; ++r) {
    std::vector<Vec3> vertices;
    for (int i = 0; i <= 40; ++i) vertices.push_back(Vec3(0.0025 * i, 0.0, 0.01 * r));
    model.rods.push_back(make_rod("rod" + std::to_string(r), nylon, vertices, {0, 1}, RestShape::Straight, 3));
    model.rods.back().twist = true;
  }
  model.finalize();
  State released = initial_state(model);
  for (int r = 0; r < 4; ++r)
    for (int j = 1; j < model.rods[r].edge_count(); ++j)
      released.positions[model.layout.edge_dof(r, j)] = 0.05 * (r + 1) * j;

  std::vector<State> ends;
  for (const int threads : {1, 2}) {
    SolverSettings settings;
    settings.threads = threads;
    ImplicitEuler integrator(model, settings);
    State state = released;
    const double start_twist = integrator.energies(state).twist;
    CHECK(start_twist > 0.0);
    for (int n = 0; n < 40; ++n) REQUIRE(integrator.step(state, 5e-5).ok);
    const EnergyBreakdown end = integrator.energies(state);
    MESSAGE("twist energy " << start_twist << " J -> " << end.twist << " J after 2 ms");
    CHECK(end.twist < 0.5 * start_twist);
    CHECK(end.total() < integrator.energies(released).total());
    ends.push_back(state);
  }
  CHECK(ends[0].positions.size() == ends[1].positions.size());
  CHECK(std::memcmp(ends[0].positions.data(), ends[1].positions.data(), sizeof(double) * ends[0].positions.size()) == 0);
  CHECK(std::memcmp(ends[0].velocities.data(), ends[1].velocities.data(), sizeof(double) * ends[0].velocities.size()) == 0);
}

TEST_CASE("twist: a bent rod spinning freely through whole turns keeps its frames: no elastic energy appears") {
  // A rigid rotation costs no elastic energy. The reference frames must follow the edges
  // step by step ("transport frames" at each commit): frames left where they started could
  // not be carried to edges that have turned by half a turn (parallel transport from t to -t
  // has no unique answer), and the energy would jump there.
  const Material nylon = nylon_of_radius(1e-3);
  std::vector<Vec3> vertices;
  for (int i = 0; i <= 20; ++i) {
    const double a = 0.04 * i;  // an arc in the xy plane, centred on the origin's side
    vertices.push_back(Vec3(0.005 * i - 0.05, 0.02 * std::sin(a), 0.003 * std::cos(2.0 * a)));
  }
  const Model model = one_rod_with_twist("spinner", nylon, vertices, {}, RestShape::Initial);
  State state = initial_state(model);
  const Vec3 omega(0.0, 0.0, 2.0 * kPi);  // one turn per second about z
  for (int i = 0; i < model.rods[0].vertex_count(); ++i) {
    const int dof = model.layout.vertex_dof(0, i);
    state.velocities.segment<3>(dof) = omega.cross(Vec3(state.positions.segment<3>(dof)));
  }
  ImplicitEuler integrator(model, SolverSettings{});
  const double kinetic = integrator.energies(state).kinetic;
  double worst_elastic = 0.0;
  for (int n = 0; n < 2 * 120; ++n) {  // two turns at dt = 1/120 s
    const StepReport report = integrator.step(state, 1.0 / 120.0);
    REQUIRE(report.ok);
    worst_elastic = std::max(worst_elastic, report.energies.twist + report.energies.bend);
  }
  MESSAGE("largest bend + twist energy over two turns: " << worst_elastic / kinetic << " of the kinetic energy");
  CHECK(worst_elastic < 1e-3 * kinetic);
  // The committed frames are those of the last committed positions: each element's tangents
  // are its edges' now, and its reference directors are perpendicular to them.
  const auto& frames = integrator.assembler().table<BendTwistTerm>().constants();
  REQUIRE(frames.size() == static_cast<std::size_t>(model.rods[0].vertex_count() - 2));
  for (std::size_t k = 0; k < frames.size(); ++k)
    for (int j = 0; j < 2; ++j) {
      const int i = static_cast<int>(k) + j;  // the element of interior vertex k + 1 has edges k, k + 1
      const Vec3 edge = state.positions.segment<3>(model.layout.vertex_dof(0, i + 1)) -
                        state.positions.segment<3>(model.layout.vertex_dof(0, i));
      CHECK((frames[k].frames.tangent[j] - edge.normalized()).norm() < 1e-12);
      CHECK(std::abs(frames[k].frames.director[j].dot(frames[k].frames.tangent[j])) < 1e-12);
    }
  // What a split step whose second half fails relies on: the saved frames come back.
  const SystemAssembler::ElementState saved = integrator.assembler().element_state();
  State probe = state;
  REQUIRE(integrator.step(probe, 1.0 / 120.0).ok);
  // The rod turns 3 degrees a step: the committed tangents moved with it.
  CHECK((integrator.assembler().table<BendTwistTerm>().constants()[0].frames.tangent[0] -
         std::get<2>(saved)[0].frames.tangent[0]).norm() > 0.01);
  integrator.assembler().restore_element_state(saved);
  const auto& restored = integrator.assembler().table<BendTwistTerm>().constants();
  for (std::size_t k = 0; k < restored.size(); ++k)
    CHECK(std::memcmp(&restored[k].frames, &std::get<2>(saved)[k].frames, sizeof(StencilFrames)) == 0);
}

namespace {

HandleKey turn_key(double time, double angle, const Vec3& axis) {
  HandleKey k;
  k.time = time;
  k.rotation_axis = axis;
  k.rotation_angle = angle;
  return k;
}

}  // namespace

TEST_CASE("twist: turning a root about the rod's axis turns its clamped frame, and the free rod follows") {
  // A straight rod along x, clamped in a handle that turns it by 1 rad about its own axis:
  // positions do not move, the clamped edge's twist is the handle's angle at every step, and
  // once the handle stops the free edges follow it (the rod turns rigidly, no twist left).
  const Material nylon = nylon_of_radius(5e-4);
  std::vector<Vec3> vertices;
  for (int i = 0; i <= 20; ++i) vertices.push_back(Vec3(0.0025 * i, 0.0, 0.0));
  Model model = one_rod_with_twist("rod", nylon, vertices, {0, 1}, RestShape::Straight);
  Handle handle;
  handle.name = "chuck";
  handle.rods = {"rod"};
  handle.interpolation = HandleInterpolation::Smooth;
  handle.keys = {turn_key(0.0, 0.0, Vec3::UnitX()), turn_key(0.05, 1.0, Vec3::UnitX())};
  HandleDriver driver(model, {handle});
  ImplicitEuler integrator(model, SolverSettings{});
  State state = initial_state(model);
  driver.place(model, state);
  const State start = state;
  const double dt = 1e-3;
  double worst_clamp = 0.0;
  for (int n = 0; n < 200; ++n) {
    driver.prepare_step(model, state, dt);
    REQUIRE(integrator.step(state, dt).ok);
    const double expected = handle.pose(state.time).rotation(2, 1) >= 0.0
                                ? std::acos(std::clamp(handle.pose(state.time).rotation(1, 1), -1.0, 1.0))
                                : -std::acos(std::clamp(handle.pose(state.time).rotation(1, 1), -1.0, 1.0));
    worst_clamp = std::max(worst_clamp, std::abs(state.positions[model.layout.edge_dof(0, 0)] - expected));
  }
  MESSAGE("clamped twist against the handle's angle: worst difference " << worst_clamp << " rad");
  CHECK(worst_clamp < 1e-12);
  for (int j = 0; j < model.rods[0].edge_count(); ++j)
    CHECK(state.positions[model.layout.edge_dof(0, j)] == doctest::Approx(1.0).epsilon(1e-3));
  CHECK(largest_displacement(model, start, state) < 1e-9);
  CHECK(integrator.energies(state).twist < 1e-9 * nylon.shear() * 2.0 * nylon.second_moment());
}

TEST_CASE("twist: a bent rod clamped at both ends in one handle turns rigidly with it, with no twist strain") {
  // Both ends of an out-of-plane arc clamped in the same handle, turned by 1.2 rad about an
  // oblique axis: the whole rod must turn rigidly, so every clamped edge's frame turns by the
  // angle its own tangent needs (frame_turn), different at the two ends. Getting one end's
  // wrong would leave twist strain locked between the clamps.
  const Material nylon = nylon_of_radius(5e-4);
  std::vector<Vec3> vertices;
  for (int i = 0; i <= 24; ++i) {
    const double a = 0.12 * i;
    vertices.push_back(Vec3(0.02 * std::sin(a), 0.02 * (1.0 - std::cos(a)), 0.004 * a));
  }
  Model model = one_rod_with_twist("arc", nylon, vertices, {0, 1, 23, 24}, RestShape::Initial);
  Handle handle;
  handle.name = "frame";
  handle.rods = {"arc"};
  handle.pivot = Vec3(0.01, 0.0, 0.0);
  handle.interpolation = HandleInterpolation::Smooth;
  const Vec3 axis(0.4, 1.0, -0.7);
  handle.keys = {turn_key(0.0, 0.0, axis), turn_key(0.1, 1.2, axis)};
  HandleDriver driver(model, {handle});
  ImplicitEuler integrator(model, SolverSettings{});
  State state = initial_state(model);
  driver.place(model, state);
  const double dt = 1e-3;
  for (int n = 0; n < 400; ++n) {
    driver.prepare_step(model, state, dt);
    REQUIRE(integrator.step(state, dt).ok);
  }
  const EnergyBreakdown e = integrator.energies(state);
  // The rod ends where the handle put it, rigidly: every vertex at pose(t) x_rest.
  const RigidTransform pose = handle.pose(state.time);
  double off = 0.0;
  for (int i = 0; i < model.rods[0].vertex_count(); ++i)
    off = std::max(off, (state.positions.segment<3>(model.layout.vertex_dof(0, i)) -
                         pose.apply(model.rods[0].initial_positions[i])).norm());
  const double scale = nylon.shear() * 2.0 * nylon.second_moment() / model.rods[0].rest_length();  // G J / L [J]
  MESSAGE("after the turn: twist " << e.twist << " J, bend " << e.bend << " J (G J / L = " << scale
                                   << " J), largest offset from the rigid pose " << off << " m");
  CHECK(e.twist < 1e-8 * scale);
  CHECK(e.bend < 1e-8 * scale);
  CHECK(off < 1e-7);

  // A first key already turned: place() starts the rod rigidly turned, its frames too.
  Handle turned = handle;
  turned.keys = {turn_key(0.0, 1.2, axis)};
  HandleDriver placing(model, {turned});
  ImplicitEuler fresh(model, SolverSettings{});
  State placed = initial_state(model);
  placing.place(model, placed);
  const EnergyBreakdown at_start = fresh.energies(placed);
  MESSAGE("placed at the turned first key: twist " << at_start.twist << " J, bend " << at_start.bend << " J");
  CHECK(at_start.twist < 1e-12 * scale);
  CHECK(at_start.bend < 1e-12 * scale);
}

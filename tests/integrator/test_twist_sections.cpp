// Rods with twist and what a scene adds to them (issue 15): non-round sections, a rest twist,
// and which end edges hold their twist (`twist_fixed`), in the time step.

#include <cmath>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "bristle/integrator/implicit_euler.hpp"
#include "bristle/model/handle.hpp"
#include "bristle/model/model.hpp"

using namespace bristle;

namespace {

Material ribbon_material() {
  Material m;
  m.density = 1140.0;
  m.youngs_modulus = 3e9;
  m.set_cross_section(CrossSection::rectangle(0.004, 0.0004));
  return m;
}

Material round_material() {
  Material m;
  m.density = 1140.0;
  m.youngs_modulus = 3e9;
  m.radius = 5e-4;
  return m;
}

std::vector<Vec3> straight_along_x(int segments, double edge) {
  std::vector<Vec3> v;
  for (int i = 0; i <= segments; ++i) v.push_back(Vec3(edge * i, 0.0, 0.0));
  return v;
}

double largest_vertex_offset(const Model& model, const State& a, const State& b) {
  double worst = 0.0;
  for (int i = 0; i < model.rods[0].vertex_count(); ++i) {
    const int dof = model.layout.vertex_dof(0, i);
    worst = std::max(worst, (b.positions.segment<3>(dof) - a.positions.segment<3>(dof)).norm());
  }
  return worst;
}

HandleKey turn_key(double time, double angle) {
  HandleKey k;
  k.time = time;
  k.rotation_axis = Vec3::UnitX();
  k.rotation_angle = angle;
  return k;
}

/// Turns the root of a straight rod along x by 1 rad about the rod's axis with a handle, then
/// holds it; returns the state after 0.2 s.
State turn_root(Model& model) {
  Handle handle;
  handle.name = "chuck";
  handle.rods = {model.rods[0].name};
  handle.interpolation = HandleInterpolation::Smooth;
  handle.keys = {turn_key(0.0, 0.0), turn_key(0.05, 1.0)};
  HandleDriver driver(model, {handle});
  ImplicitEuler integrator(model, SolverSettings{});
  State state = initial_state(model);
  driver.place(model, state);
  for (int n = 0; n < 200; ++n) {
    driver.prepare_step(model, state, 1e-3);
    REQUIRE(integrator.step(state, 1e-3).ok);
  }
  return state;
}

}  // namespace

TEST_CASE("twist sections: a pre-twisted, curved ribbon starts at rest and stays there") {
  // A ribbon bent into an out-of-plane arc ("rest": "initial") with a rest twist of 30 rad/m
  // (its width turns 1.7 times about its centreline over 0.35 m): the initial state must be
  // its rest state, curvatures measured in the twisted material frames, so nothing moves.
  std::vector<Vec3> vertices;
  for (int i = 0; i <= 35; ++i) {
    const double a = 0.05 * i;
    vertices.push_back(Vec3(0.2 * std::sin(a), 0.2 * (1.0 - std::cos(a)), 0.01 * a));
  }
  Model model;
  model.dimension = 3;
  model.rods.push_back(make_rod("curl", ribbon_material(), vertices, {0, 1}, RestShape::Initial, 3));
  model.rods[0].twist = true;
  model.rods[0].material_normal = Vec3::UnitZ();
  model.rods[0].rest_twist = 30.0;
  model.finalize();
  ImplicitEuler integrator(model, SolverSettings{});
  State state = initial_state(model);
  const State start = state;
  // The initial twists climb by rest_twist * l_i per vertex.
  const int last = model.rods[0].edge_count() - 1;
  CHECK(state.positions[model.layout.edge_dof(0, last)] ==
        doctest::Approx(30.0 * (model.rods[0].rest_length() - 0.5 * (model.rods[0].rest_lengths[0] +
                                                                      model.rods[0].rest_lengths[last])))
            .epsilon(1e-12).scale(0.0));
  const EnergyBreakdown at_start = integrator.energies(state);
  for (int n = 0; n < 50; ++n) REQUIRE(integrator.step(state, 1e-3).ok);
  const EnergyBreakdown after = integrator.energies(state);
  const double moved = largest_vertex_offset(model, start, state);
  MESSAGE("pre-twisted ribbon: bend + twist energy " << at_start.bend + at_start.twist << " J at the start, "
                                                     << after.bend + after.twist << " J after 50 steps; moved " << moved
                                                     << " m");
  CHECK(at_start.bend + at_start.twist < 1e-20);
  CHECK(moved < 1e-12);
  double twist_change = 0.0;
  for (int j = 0; j <= last; ++j)
    twist_change = std::max(twist_change, std::abs(state.positions[model.layout.edge_dof(0, j)] -
                                                   start.positions[model.layout.edge_dof(0, j)]));
  CHECK(twist_change < 1e-10);
}

TEST_CASE("twist sections: twist_fixed decides whether a turned root end carries the rod along") {
  // A straight round rod along x whose root a handle turns by 1 rad about the rod's axis.
  // A clamp (the default) holds the frame and the rod follows; a clamp with "root": false is
  // a bearing: the edge turns nothing, the rod stays untwisted. A pin (one fixed vertex)
  // turns nothing by default; with "root": true it holds the frame and carries the rod.
  struct Case {
    const char* name;
    std::vector<int> fixed;
    Rod::TwistEnd root;
    double expected;  ///< every edge's twist at the end [rad]
  };
  const Case cases[] = {
      {"clamp", {0, 1}, Rod::TwistEnd::Default, 1.0},
      {"clamp, root twist free", {0, 1}, Rod::TwistEnd::Free, 0.0},
      {"pin", {0}, Rod::TwistEnd::Default, 0.0},
      {"pin, root twist held", {0}, Rod::TwistEnd::Fixed, 1.0},
  };
  for (const Case& c : cases) {
    const std::string name = c.name;
    CAPTURE(name);
    Model model;
    model.dimension = 3;
    model.rods.push_back(make_rod("rod", round_material(), straight_along_x(20, 0.0025), c.fixed, RestShape::Straight, 3));
    model.rods[0].twist = true;
    model.rods[0].twist_root = c.root;
    model.finalize();
    const State state = turn_root(model);
    double worst = 0.0;
    for (int j = 0; j < model.rods[0].edge_count(); ++j)
      worst = std::max(worst, std::abs(state.positions[model.layout.edge_dof(0, j)] - c.expected));
    MESSAGE(name << ": root edge twist " << state.positions[model.layout.edge_dof(0, 0)]
                   << " rad, every edge within " << worst << " rad of " << c.expected);
    CHECK(worst < 1e-3);
  }
}

TEST_CASE("twist sections: a tip with free twist lets a twisted rod clamped at both ends untwist") {
  // A rod clamped at both ends (vertices 0, 1 and n-2, n-1) released from a twisted state
  // (edges' twist a ramp from 0 at the root to 1.9 rad at the tip): with both clamps holding
  // their frames the twist between them stays (it evens out to 1.9 rad over the rod); with
  // "tip": false the tip clamp is a bearing and the twist drains.
  for (const Rod::TwistEnd tip : {Rod::TwistEnd::Default, Rod::TwistEnd::Free}) {
    CAPTURE(tip == Rod::TwistEnd::Free);
    Model model;
    model.dimension = 3;
    model.rods.push_back(make_rod("rod", round_material(), straight_along_x(20, 0.0025), {0, 1, 19, 20},
                                  RestShape::Straight, 3));
    model.rods[0].twist = true;
    model.rods[0].twist_tip = tip;
    model.finalize();
    const int last = model.rods[0].edge_count() - 1;
    CHECK(model.rods[0].is_twist_fixed(last) == (tip == Rod::TwistEnd::Default));
    State state = initial_state(model);
    // Every edge but the root's twisted as a ramp: a held tip edge stays at 1.9 rad.
    for (int j = 1; j <= last; ++j) state.positions[model.layout.edge_dof(0, j)] = 0.1 * j;
    ImplicitEuler integrator(model, SolverSettings{});
    const double start = integrator.energies(state).twist;
    for (int n = 0; n < 400; ++n) {
      const StepReport report = integrator.step(state, 1e-3);
      INFO("step ", n, ": ", report.failure);
      REQUIRE(report.ok);
    }
    const double end = integrator.energies(state).twist;
    MESSAGE((tip == Rod::TwistEnd::Free ? "tip free" : "tip held") << ": twist energy " << start << " J -> " << end
                                                                   << " J after 0.4 s");
    if (tip == Rod::TwistEnd::Free)
      CHECK(end < 1e-6 * start);
    else
      CHECK(end > 1e-3 * start);
  }
}

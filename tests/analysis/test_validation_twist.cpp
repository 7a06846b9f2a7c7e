// The validation cases of rods with twist (cases 6 to 9 of `bristle verify`, issue 15) as CI
// tests, at their targets, and the suite's rows for them; plus objectivity of a curved rod with
// twist turned rigidly. Coarser series than `bristle verify` where that keeps the module fast.

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <sstream>
#include <string>

#include <doctest/doctest.h>

#include "bristle/analysis/static_solver.hpp"
#include "bristle/analysis/validation.hpp"
#include "bristle/analysis/validation_cases.hpp"
#include "bristle/integrator/assembly.hpp"
#include "bristle/model/handle.hpp"
#include "test_paths.hpp"

using namespace bristle;

namespace {

std::string series(const TwistStudy& s) {
  std::ostringstream out;
  out << std::setprecision(6);
  for (std::size_t i = 0; i < s.segments.size(); ++i) {
    out << "\n  " << s.segments[i] << ":";
    for (std::size_t q = 0; q < s.references.size(); ++q)
      out << " " << s.values[i][q] << " (" << 100.0 * s.relative_error(i, q) << "%)";
  }
  out << "\n  error measure:";
  for (double e : s.convergence.errors) out << " " << e;
  out << ", observed order " << s.convergence.order;
  return out.str();
}

/// |value / reference - 1| at the finest resolution, worst over the quantities.
double finest_error(const TwistStudy& s) {
  double worst = 0.0;
  for (std::size_t q = 0; q < s.references.size(); ++q)
    worst = std::max(worst, std::abs(s.relative_error(s.values.size() - 1, q)));
  return worst;
}

}  // namespace

TEST_CASE("validation case 6: torsional frequencies of a clamped-free rod with twist, 0.5% at 100 segments, second order") {
  const TwistStudy s = torsional_frequency_study({25, 50, 100});
  INFO(s.message);
  REQUIRE(s.ok);
  MESSAGE("torsional frequencies [Hz] " << s.references[0] << ", " << s.references[1] << ", " << s.references[2]
                                        << series(s));
  REQUIRE(s.values.size() == 3u);
  REQUIRE(s.references.size() == 3u);
  CHECK(s.references[1] == doctest::Approx(3.0 * s.references[0]).epsilon(1e-12));
  CHECK(finest_error(s) < 0.005);
  CHECK(s.convergence.order > 1.5);
}

TEST_CASE("validation case 7: Greenhill's twist buckling M L / (E I) = 2.861 pi within 3%, second order") {
  const TwistStudy s = twist_buckling_study({40, 80}, 1e-5);
  INFO(s.message);
  REQUIRE(s.ok);
  MESSAGE("M L / (E I) / pi:" << series(s));
  CHECK(finest_error(s) < 0.03);
  CHECK(s.convergence.order > 1.5);
}

TEST_CASE("validation case 8: a coil spring's stiffness within 3% of G d^4 / (8 D^3 n), converging at second order") {
  const TwistStudy s = coil_spring_study({12, 24, 48});
  INFO(s.message);
  REQUIRE(s.ok);
  MESSAGE("k [N/m], Wahl " << s.references[0] << ":" << series(s));
  CHECK(finest_error(s) < 0.03);
  REQUIRE(s.convergence.errors.size() == 2u);
  CHECK(s.convergence.order > 1.5);
}

TEST_CASE("validation case 9: a quarter circle loaded out of its plane bends and twists as Castigliano says") {
  const TwistStudy s = curved_cantilever_study({10, 20, 40, 80});
  INFO(s.message);
  REQUIRE(s.ok);
  MESSAGE("tip deflection [m], reference " << s.references[0] << ":" << series(s));
  CHECK(finest_error(s) < 0.01);
  CHECK(s.convergence.order > 1.5);
  // The torsion term is not negligible: the formula without it is more than 10% off. Its share
  // of the bending term is (3 pi / 4 - 2) / (pi / 4) E I / (G J), with E I / (G J) = 1 + nu = 1.3
  // for a round section.
  constexpr double kPi = 3.14159265358979323846;
  const double bending_only = s.references[0] / (1.0 + (0.75 * kPi - 2.0) / (0.25 * kPi) * 1.3);
  CHECK(std::abs(s.values.back()[0] / bending_only - 1.0) > 0.1);
}

TEST_CASE("validation: `bristle verify` reports cases 6 to 9, each with its refinement series") {
  ValidationSettings settings;
  settings.scene_dir = std::string(bristle::test::kScenesDir) + "/validation";
  settings.quick = true;
  const ValidationReport report = run_validation(settings);
  for (const ValidationCheck& c : report.checks) {
    INFO(c.case_name << ": " << c.parameters << ": " << c.bristle << " " << c.error << " " << c.note);
    CHECK(c.pass);
  }
  CHECK(report.passed());
  REQUIRE(report.twist_convergence.size() == 4u);
  for (const char* name : {"6 torsional frequencies", "7 twist buckling", "8 coil spring", "9 curved cantilever"}) {
    CAPTURE(name);
    // One row per quantity at the finest resolution and one for the order.
    const auto rows = std::count_if(report.checks.begin(), report.checks.end(),
                                    [&](const ValidationCheck& c) { return c.case_name == name; });
    CHECK(rows == (std::string(name).front() == '6' ? 4 : 2));
  }
  MESSAGE("quick suite: " << report.checks.size() << " checks in " << report.seconds << " s");
}

TEST_CASE("objectivity: a curved rod with twist, at rest, turned and moved rigidly feels no force") {
  // A curve of varying curvature and torsion, "rest": "initial" with twist, placed by a handle
  // whose first key turns it by 1.2 rad about an oblique axis and moves it: every material
  // frame turns with the rod (frame_turn), so curvatures and twist are those of rest and the
  // whole gradient of the potential must vanish, to round-off.
  Material nylon;
  nylon.density = 1140.0;
  nylon.radius = 5e-4;
  nylon.youngs_modulus = 3e9;
  std::vector<Vec3> vertices;
  for (int i = 0; i <= 30; ++i) {
    const double a = 0.15 * i;
    vertices.push_back(Vec3(0.02 * std::sin(a), 0.02 * (1.0 - std::cos(a)) + 0.002 * std::sin(3.0 * a), 0.004 * a));
  }
  Model model;
  model.dimension = 3;
  model.rods.push_back(make_rod("curl", nylon, vertices, {0, 1}, RestShape::Initial, 3));
  model.rods[0].twist = true;
  model.finalize();
  HandleKey key;
  key.rotation_axis = Vec3(0.4, 1.0, -0.7);
  key.rotation_angle = 1.2;
  key.translation = Vec3(0.01, -0.03, 0.02);
  Handle handle;
  handle.name = "hand";
  handle.rods = {"curl"};
  handle.pivot = Vec3(0.01, 0.0, 0.0);
  handle.keys = {key};
  HandleDriver driver(model, {handle});
  State state = initial_state(model);
  driver.place(model, state);

  const SystemAssembler assembler(model);
  const DofLayout& layout = model.layout;
  const double L = model.rods[0].rest_length();
  const double force_scale = nylon.bending_stiffness() / (L * L);  // [N]
  const double torque_scale = nylon.bending_stiffness() / L;       // [N m]
  auto largest = [&](const VecX& x) {
    VecX g;
    SystemAssembler(model).assemble(x, 0.0, HessianProjection::Exact, 0.0, g);
    double force = 0.0, torque = 0.0;
    for (int i = 0; i < model.rods[0].vertex_count(); ++i)
      force = std::max(force, g.segment<3>(layout.vertex_dof(0, i)).cwiseAbs().maxCoeff());
    for (int j = 0; j < model.rods[0].edge_count(); ++j) torque = std::max(torque, std::abs(g[layout.edge_dof(0, j)]));
    return std::make_pair(force, torque);
  };
  const auto [force, torque] = largest(state.positions);
  const double floor = static_force_tolerance(model, state.positions, 0.0);  // the stretch forces' round-off
  MESSAGE("turned rigidly: largest force " << force << " N (E I / L^2 = " << force_scale << " N, round-off floor "
                                           << floor << " N), largest torque " << torque << " N m (E I / L = "
                                           << torque_scale << " N m)");
  CHECK((state.positions.segment<3>(layout.vertex_dof(0, 5)) - vertices[5]).norm() > 0.01);  // it did move
  CHECK(force < std::max(floor, 1e-9 * force_scale));
  CHECK(torque < 1e-9 * torque_scale);
  const EnergyBreakdown e = assembler.potential_energies(state.positions, 0.0);
  CHECK(e.elastic() < 1e-20 * torque_scale);

  // The control: the same positions with the material frames not turned (twist DOFs zero)
  // are strained, and the check above sees it.
  VecX unturned = state.positions;
  for (int j = 0; j < model.rods[0].edge_count(); ++j) unturned[layout.edge_dof(0, j)] = 0.0;
  const auto [control_force, control_torque] = largest(unturned);
  MESSAGE("frames not turned: largest force " << control_force << " N, torque " << control_torque << " N m");
  CHECK(control_torque > 1e-3 * torque_scale);
}

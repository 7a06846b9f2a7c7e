#include <cmath>
#include <iomanip>

#include <doctest/doctest.h>

#include "bristle/analysis/modes.hpp"
#include "bristle/analysis/static_solver.hpp"
#include "support/elastica_builders.hpp"

using namespace bristle;
using bristle::test::Cantilever;
using bristle::test::CantileverSpec;
using bristle::test::make_cantilever;

namespace {

constexpr double kPi = 3.14159265358979323846;
// Roots of 1 + cos(beta L) cosh(beta L) = 0 (clamped-free Euler-Bernoulli beam).
constexpr double kBetaL[] = {1.87510407, 4.69409113, 7.85475744};

double beam_frequency(const Cantilever& c, int n) {
  return kBetaL[n] * kBetaL[n] / (2.0 * kPi * c.L * c.L) * std::sqrt(c.EI / c.rhoA);
}

}  // namespace

TEST_CASE("analysis modes: clamped-free rod, first three bending frequencies (2D)") {
  CantileverSpec spec;
  spec.segments = 100;
  const Cantilever c = make_cantilever(spec);
  const ModalResult modes = natural_modes(c.model, initial_state(c.model), 3);
  INFO(modes.message);
  REQUIRE(modes.ok);
  REQUIRE(modes.frequencies_hz.size() == 3);
  CHECK(modes.unstable_count == 0);
  MESSAGE("method: " << modes.method);
  for (int k = 0; k < 3; ++k) {
    const double exact = beam_frequency(c, k);
    const double error = modes.frequencies_hz[k] / exact - 1.0;
    MESSAGE("2D mode " << k + 1 << ": " << std::setprecision(8) << modes.frequencies_hz[k] << " Hz vs "
                       << exact << " Hz, relative error " << error);
    CHECK(std::abs(error) < 0.005);
  }
  // Shapes: M-orthonormal, zero on the fixed DOFs, transverse (y) for a rod along x.
  const VecX mass = c.model.dof_masses();
  for (int i = 0; i < 3; ++i) {
    CHECK(modes.shapes[i].head(4).norm() == 0.0);
    for (int j = 0; j < 3; ++j)
      CHECK(modes.shapes[i].dot(mass.cwiseProduct(modes.shapes[j])) == doctest::Approx(i == j ? 1.0 : 0.0).epsilon(1e-8));
    double along = 0.0, across = 0.0;
    for (int v = 0; v <= c.tip; ++v) {
      along += std::pow(modes.shapes[i][2 * v], 2);
      across += std::pow(modes.shapes[i][2 * v + 1], 2);
    }
    CHECK(along < 1e-6 * across);
  }
}

TEST_CASE("analysis modes: clamped-free rod in 3D, each bending frequency twice") {
  CantileverSpec spec;
  spec.segments = 100;
  spec.dimension = 3;
  const Cantilever c = make_cantilever(spec);
  const ModalResult modes = modal_analysis(c.model, initial_state(c.model), {7});
  INFO(modes.message);
  REQUIRE(modes.ok);
  REQUIRE(modes.frequencies_hz.size() == 7);
  for (int k = 0; k < 3; ++k) {
    const double exact = beam_frequency(c, k);
    for (int twin = 0; twin < 2; ++twin) {
      const double error = modes.frequencies_hz[2 * k + twin] / exact - 1.0;
      MESSAGE("3D mode " << 2 * k + twin + 1 << ": " << std::setprecision(8) << modes.frequencies_hz[2 * k + twin]
                         << " Hz, relative error " << error);
      CHECK(std::abs(error) < 0.005);
    }
    CHECK(modes.frequencies_hz[2 * k + 1] == doctest::Approx(modes.frequencies_hz[2 * k]).epsilon(1e-9));
  }
  // The 7th is the fourth bending mode (beta L = 10.9955), far below the first axial mode
  // f = sqrt(E / rho) / (4 L) for a slender rod.
  const double fourth = 10.99554073 * 10.99554073 / (2.0 * kPi) * std::sqrt(c.EI / c.rhoA);
  CHECK(modes.frequencies_hz[6] == doctest::Approx(fourth).epsilon(0.01));
  const double axial = std::sqrt(spec.youngs_modulus / spec.density) / (4.0 * c.L);
  MESSAGE("3D mode 7: " << modes.frequencies_hz[6] << " Hz (fourth bending " << fourth << " Hz); first axial mode " << axial << " Hz");
  CHECK(axial > 20.0 * modes.frequencies_hz[6]);
}

TEST_CASE("analysis modes: dense fallback and Spectra agree, tiny systems work") {
  CantileverSpec spec;
  spec.segments = 12;
  const Cantilever c = make_cantilever(spec);
  const State x = initial_state(c.model);
  ModalSettings dense;
  dense.count = 4;
  ModalSettings sparse = dense;
  sparse.dense_threshold = 0;
  const ModalResult a = modal_analysis(c.model, x, dense);
  const ModalResult b = modal_analysis(c.model, x, sparse);
  REQUIRE(a.ok);
  REQUIRE(b.ok);
  CHECK(a.method == "dense");
  CHECK(b.method.find("spectra") == 0);
  for (int k = 0; k < 4; ++k) CHECK(a.eigenvalues[k] == doctest::Approx(b.eigenvalues[k]).epsilon(1e-8));

  // Three vertices, one free: two DOFs in 2D; asking for more returns all there are.
  CantileverSpec tiny;
  tiny.segments = 2;
  const Cantilever t = make_cantilever(tiny);
  const ModalResult m = modal_analysis(t.model, initial_state(t.model), {5});
  REQUIRE(m.ok);
  CHECK(m.frequencies_hz.size() == 2);
  CHECK(m.frequencies_hz[0] > 0.0);
}

TEST_CASE("analysis modes: rigid-body modes of an unclamped rod are zero, not a failure") {
  Material material;
  material.density = 1000.0;
  material.radius = 1e-3;
  material.youngs_modulus = 1e9;
  std::vector<Vec3> vertices;
  for (int i = 0; i <= 60; ++i) vertices.push_back(Vec3(i / 60.0, 0.0, 0.0));
  Model model;
  model.dimension = 2;
  model.rods.push_back(make_rod("free", material, vertices, {}, RestShape::Straight, 2));
  model.finalize();
  const ModalResult modes = modal_analysis(model, initial_state(model), {4});
  INFO(modes.message);
  REQUIRE(modes.ok);
  MESSAGE("free rod: " << modes.frequencies_hz[0] << " " << modes.frequencies_hz[1] << " "
                       << modes.frequencies_hz[2] << " " << modes.frequencies_hz[3] << " Hz");
  // 2 translations and 1 rotation in the plane; then the first free-free bending mode
  // (beta L = 4.7300).
  const double bending = 4.73004074 * 4.73004074 / (2.0 * kPi) * std::sqrt(material.bending_stiffness() / material.linear_density());
  for (int k = 0; k < 3; ++k) CHECK(std::abs(modes.frequencies_hz[k]) < 1e-3 * bending);
  CHECK(modes.frequencies_hz[3] == doctest::Approx(bending).epsilon(0.01));
  CHECK(modes.unstable_count == 0);
}

TEST_CASE("analysis modes: gravity prestress softens a standing column, stiffens a hanging one, and an unstable state has negative eigenvalues") {
  // The same rod (Gamma computed with g = 9.81), with gravity scaled by `gravity_scale`.
  auto first_frequency = [](const Vec3& direction, double gamma, double gravity_scale, int dense_threshold,
                            int* unstable) {
    CantileverSpec spec;
    spec.segments = 40;
    spec.direction = direction;
    spec.gamma = gamma;
    Cantilever c = make_cantilever(spec);
    c.model.gravity *= gravity_scale;
    State state = initial_state(c.model);
    const StaticResult equilibrium = solve_static(c.model, state, {});
    REQUIRE(equilibrium.ok);
    ModalSettings settings;
    settings.count = 3;
    settings.dense_threshold = dense_threshold;
    const ModalResult modes = modal_analysis(c.model, state, settings);
    INFO(modes.message);
    REQUIRE(modes.ok);
    CHECK(modes.max_force <= equilibrium.tolerance);
    for (double f : modes.frequencies_hz) CHECK(std::isfinite(f));
    if (unstable) *unstable = modes.unstable_count;
    return modes.frequencies_hz[0];
  };
  const double free = first_frequency(Vec3::UnitY(), 4.0, 0.0, 48, nullptr);
  const double standing = first_frequency(Vec3::UnitY(), 4.0, 1.0, 48, nullptr);
  const double hanging = first_frequency(-Vec3::UnitY(), 4.0, 1.0, 48, nullptr);
  MESSAGE("first frequency, Gamma = 4: standing " << standing << " Hz, without gravity " << free << " Hz, hanging "
                                                  << hanging << " Hz");
  CHECK(standing < free);
  CHECK(hanging > free);
  // The Southwell-Galef rule omega^2 / omega0^2 ~ 1 -+ Gamma / Gamma_c (approximate for a
  // self-weight column; Galef, J. Acoust. Soc. Am. 44, 1968): agreement to a few percent.
  const double ratio_standing = std::pow(standing / free, 2), ratio_hanging = std::pow(hanging / free, 2);
  MESSAGE("omega^2/omega0^2: standing " << ratio_standing << " (rule " << 1.0 - 4.0 / 7.8373 << "), hanging "
                                        << ratio_hanging << " (rule " << 1.0 + 4.0 / 7.8373 << ")");
  CHECK(ratio_standing == doctest::Approx(1.0 - 4.0 / 7.8373).epsilon(0.03));
  CHECK(ratio_hanging == doctest::Approx(1.0 + 4.0 / 7.8373).epsilon(0.03));
  // Above Greenhill's threshold the straight column is a saddle: a negative eigenvalue.
  for (int threshold : {48, 1000}) {  // Spectra's shift search, and the dense path
    int unstable = -1;
    const double f = first_frequency(Vec3::UnitY(), 12.0, 1.0, threshold, &unstable);
    MESSAGE("standing column, Gamma = 12, straight: first frequency " << f << " Hz (negative: unstable)");
    CHECK(f < 0.0);
    CHECK(unstable == 1);
  }
}

TEST_CASE("analysis modes: torsional frequencies of a clamped-free rod with twist converge to (2k - 1) / (4 L) sqrt(G / rho)") {
  // A straight rod with twist DOFs (discrete elastic rods), clamped at the midpoint of its
  // first edge (both its vertices fixed, which fixes that edge's twist too). Torsion of a
  // straight rod decouples from bending and stretching, so its modes are pure twist: picked
  // out by the share of their (M-orthonormal) kinetic norm on the twist DOFs. A thick rod
  // (L / r = 20) keeps the bending and axial modes below the third torsional one few.
  double previous_error = 1.0;
  for (const int segments : {25, 50, 100}) {
    CAPTURE(segments);
    CantileverSpec spec;
    spec.segments = segments;
    spec.dimension = 3;
    spec.radius = 0.05;
    Cantilever c = make_cantilever(spec);
    c.model.rods[0].twist = true;
    c.model.finalize();
    const Material& material = c.model.rods[0].material;
    const double wave_speed = std::sqrt(material.shear() / material.density);
    const ModalResult modes = modal_analysis(c.model, initial_state(c.model), {40, true});
    INFO(modes.message);
    REQUIRE(modes.ok);
    CHECK(modes.unstable_count == 0);
    const DofLayout& layout = c.model.layout;
    const VecX mass = c.model.dof_masses();
    std::vector<double> torsional;
    for (std::size_t m = 0; m < modes.shapes.size(); ++m) {
      double twist_share = 0.0;
      for (int j = 0; j < c.model.rods[0].edge_count(); ++j) {
        const int dof = layout.edge_dof(0, j);
        twist_share += mass[dof] * modes.shapes[m][dof] * modes.shapes[m][dof];
      }
      // Pure modes: a share of 1 or 0 up to round-off, nothing in between.
      CHECK((twist_share > 1.0 - 1e-8 || twist_share < 1e-8));
      if (twist_share > 0.5) torsional.push_back(modes.frequencies_hz[m]);
    }
    REQUIRE(torsional.size() >= 3);
    double worst = 0.0;
    for (int k = 1; k <= 3; ++k) {
      const double exact = (2.0 * k - 1.0) / (4.0 * c.L) * wave_speed;
      const double error = torsional[k - 1] / exact - 1.0;
      MESSAGE("N = " << segments << ", torsional mode " << k << ": " << std::setprecision(8) << torsional[k - 1]
                     << " Hz vs " << exact << " Hz, relative error " << error);
      worst = std::max(worst, std::abs(error));
    }
    // Second-order convergence: halving h divides the error by about 4.
    CHECK(worst < 0.6 * previous_error);
    previous_error = worst;
    if (segments == 100) CHECK(worst < 0.005);
  }
}

TEST_CASE("analysis modes: Greenhill's twist buckling of a rod clamped at both ends, M L / (E I) = 2.861 pi") {
  // A straight rod with twist, both end edges clamped, one of them turned by Phi about the
  // axis: the uniformly twisted straight rod is an equilibrium, with twisting moment
  // M = G J Phi / L. It is stable until M L / (E I) reaches 2.861 pi (clamped ends, Timoshenko
  // and Gere, "Theory of Elastic Stability", section 2.19), where the lowest eigenvalue of the
  // exact Hessian crosses zero; the buckled shape is a helix. The critical turn is found by
  // bisection on the sign of the lowest eigenvalue (Sylvester inertia in modal_analysis).
  constexpr double kGreenhill = 2.861;
  double previous_error = 1.0;
  for (const int segments : {40, 80}) {
    CAPTURE(segments);
    Material wire;
    wire.density = 1000.0;
    wire.radius = 1e-3;
    wire.youngs_modulus = 1e9;
    std::vector<Vec3> vertices;
    const double L = 0.5, h = L / (segments - 1);  // clamp points: the middles of the end edges
    for (int i = 0; i <= segments; ++i) vertices.push_back(Vec3((i - 0.5) * h, 0.0, 0.0));
    Model model;
    model.dimension = 3;
    model.rods.push_back(make_rod("wire", wire, vertices, {0, 1, segments - 1, segments}, RestShape::Straight, 3));
    model.rods[0].twist = true;
    model.finalize();
    const DofLayout& layout = model.layout;
    const double GJ = wire.shear() * 2.0 * wire.second_moment(), EI = wire.bending_stiffness();
    // The twist of edge j at arc length j h (edge 0 at 0, the last edge at L).
    auto twisted = [&](double phi) {
      State s = initial_state(model);
      for (int j = 0; j < segments; ++j) s.positions[layout.edge_dof(0, j)] = phi * std::min(1.0, j * h / L);
      return s;
    };
    auto stable = [&](double phi) {
      const ModalResult m = modal_analysis(model, twisted(phi), {1});
      REQUIRE(m.ok);
      return m.unstable_count == 0;
    };
    // The straight twisted rod is an equilibrium.
    const State at = twisted(10.0);
    CHECK(modal_analysis(model, at, {1}).max_force < 1e-9 * GJ * 10.0 / L);
    double lo = 1.0, hi = 40.0;
    REQUIRE(stable(lo));
    REQUIRE_FALSE(stable(hi));
    for (int k = 0; k < 30; ++k) {
      const double mid = 0.5 * (lo + hi);
      (stable(mid) ? lo : hi) = mid;
    }
    const double critical_moment = GJ * lo / L;
    const double ratio = critical_moment * L / (EI * kPi);
    MESSAGE("N = " << segments << ": critical end turn " << lo << " rad, M L / (E I) = " << ratio
                   << " pi (Greenhill 2.861 pi), relative error " << ratio / kGreenhill - 1.0);
    const double error = std::abs(ratio / kGreenhill - 1.0);
    CHECK(error < 0.03);
    CHECK(error < 0.5 * previous_error);  // second order: about 4 times smaller per halving of h
    previous_error = error;
  }
}

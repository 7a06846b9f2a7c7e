#include "bristle/analysis/validation_cases.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "bristle/analysis/modes.hpp"
#include "bristle/analysis/stability.hpp"

namespace bristle {
namespace {

constexpr double kPi = 3.14159265358979323846;
// "Perpendicular" and "parallel" for directions read from a scene (unit vectors).
constexpr double kDirectionTolerance = 1e-9;

[[noreturn]] void refuse(const std::string& what) { throw ValidationError(what); }

Vec3 full_vector(const Vec3& v, int dimension) {
  Vec3 out = Vec3::Zero();
  out.head(dimension) = v.head(dimension);
  return out;
}

}  // namespace

CantileverComparison compare_cantilever(const Model& model, const StaticSettings& settings) {
  CantileverComparison out;
  out.rod = describe_clamped_rod(model);
  const ClampedRod& rod = out.rod;
  const Vec3 g = full_vector(model.gravity, model.dimension);
  const Vec3 force = full_vector(rod.tip_force, model.dimension);
  if (g.norm() == 0.0 && force.norm() == 0.0) refuse("a cantilever case needs gravity or a tip load");
  const Vec3 down = g.norm() > 0.0 ? g.normalized() : force.normalized();
  if (force.norm() > 0.0 && (force.normalized() - down).norm() > kDirectionTolerance)
    refuse("gravity and the tip load must point the same way");
  if (std::abs(down.dot(rod.axis)) > kDirectionTolerance)
    refuse("gravity and the tip load must be perpendicular to the rod (a horizontal cantilever)");
  // The elastica's frame: x along the rod at the clamp, y against the load.
  const Vec3 ex = rod.axis, ey = -down, ez = ex.cross(ey);

  State state = initial_state(model);
  out.equilibrium = solve_static(model, state, settings);
  if (!out.equilibrium.ok) {
    out.message = "static solve: " + out.equilibrium.message;
    return out;
  }
  ElasticaSettings reference_settings;
  reference_settings.keep_curve = true;
  out.reference = solve_cantilever_elastica(rod.gamma, rod.alpha, reference_settings);
  if (!out.reference.ok) {
    out.message = out.reference.message;
    return out;
  }
  out.reference_tip = Vec2(out.reference.tip_x, out.reference.tip_y);
  const Vec3 tip = relative_to_clamp(model, state.positions, rod, rod.tip);
  out.bristle_tip = Vec3(tip.dot(ex), tip.dot(ey), tip.dot(ez));
  out.tip_error = (out.bristle_tip - Vec3(out.reference_tip.x(), out.reference_tip.y(), 0.0)).norm();
  for (int i = 0; i <= rod.tip; ++i) {
    const Vec3 r = relative_to_clamp(model, state.positions, rod, i);
    out.centreline.push_back(Vec2(r.dot(ex), r.dot(ey)));
  }
  out.ok = true;
  return out;
}

double observed_order(const std::vector<int>& segments, const std::vector<double>& errors) {
  // Ordinary least squares of y = log(error) on x = log(N); the order is -slope.
  double sx = 0.0, sy = 0.0, sxx = 0.0, sxy = 0.0;
  int n = 0;
  for (std::size_t i = 0; i < segments.size() && i < errors.size(); ++i) {
    if (!(errors[i] > 0.0) || segments[i] <= 0) continue;
    const double x = std::log(static_cast<double>(segments[i])), y = std::log(errors[i]);
    sx += x;
    sy += y;
    sxx += x * x;
    sxy += x * y;
    ++n;
  }
  const double denominator = n * sxx - sx * sx;
  if (n < 2 || !(denominator > 0.0)) return std::nan("");
  return -(n * sxy - sx * sy) / denominator;
}

ConvergenceStudy cantilever_convergence(const Model& model, const std::vector<int>& segments) {
  ConvergenceStudy out;
  const ClampedRod rod = describe_clamped_rod(model);
  for (int n : segments) {
    const CantileverComparison c = compare_cantilever(resample_clamped_rod(model, rod, n));
    if (!c.ok) {
      out.message = std::to_string(n) + " segments: " + c.message;
      return out;
    }
    out.segments.push_back(n);
    out.errors.push_back(c.tip_error);
  }
  out.order = observed_order(out.segments, out.errors);
  out.ok = true;
  return out;
}

ModesComparison compare_modes(const Model& model, int bending_modes) {
  ModesComparison out;
  out.rod = describe_clamped_rod(model);
  const ClampedRod& rod = out.rod;
  if (rod.gravity != 0.0 || rod.tip_force.norm() != 0.0)
    refuse("the modes case needs a rod without gravity or loads (linearised about the straight rod)");
  bending_modes = std::clamp(bending_modes, 1, 3);
  const int copies = model.dimension == 3 ? 2 : 1;  // two bending planes in 3D
  ModalSettings settings;
  settings.count = bending_modes * copies;
  const ModalResult modes = modal_analysis(model, initial_state(model), settings);
  if (!modes.ok || static_cast<int>(modes.frequencies_hz.size()) != settings.count) {
    out.message = "modal analysis: " + (modes.ok ? std::string("too few modes") : modes.message);
    return out;
  }
  const double L = rod.length;
  for (int k = 0; k < settings.count; ++k) {
    const int n = k / copies;
    const double beta_l = kClampedFreeBetaL[n];
    const double reference =
        beta_l * beta_l / (2.0 * kPi * L * L) * std::sqrt(rod.bending_stiffness / rod.linear_density);
    out.bristle_hz.push_back(modes.frequencies_hz[k]);
    out.reference_hz.push_back(reference);
    out.mode_number.push_back(n + 1);
    out.relative_errors.push_back(modes.frequencies_hz[k] / reference - 1.0);
  }
  out.ok = true;
  return out;
}

namespace {

ClampedRod describe_column(const Model& model) {
  const ClampedRod rod = describe_clamped_rod(model);
  if (!(rod.gravity > 0.0)) refuse("Greenhill's column needs gravity");
  if (rod.tip_force.norm() != 0.0) refuse("Greenhill's column carries only its own weight (no load)");
  const Vec3 g = full_vector(model.gravity, model.dimension).normalized();
  if (rod.axis.dot(g) > -1.0 + kDirectionTolerance) refuse("Greenhill's column must stand straight up, against gravity");
  return rod;
}

/// A unit vector perpendicular to the axis, in the plane in 2D.
Vec3 sideways_direction(const Vec3& axis, int dimension) {
  if (dimension == 2) return Vec3(-axis.y(), axis.x(), 0.0).normalized();
  const Vec3 other = std::abs(axis.x()) < 0.9 ? Vec3::UnitX() : Vec3::UnitY();
  return axis.cross(other).normalized();
}

}  // namespace

GreenhillResult find_greenhill_threshold(const Model& model, double low, double high, double tolerance) {
  GreenhillResult out;
  out.rod = describe_column(model);
  const ClampedRod& rod = out.rod;

  StabilitySettings settings;
  settings.low = low;
  settings.high = high;
  settings.tolerance = tolerance;
  const StabilityResult r = find_stability_threshold(
      [&](double gamma) { return with_gravito_bending_number(model, rod, gamma); }, settings);
  out.evaluations = static_cast<int>(r.samples.size());
  if (!r.ok) {
    out.message = r.message;
    return out;
  }
  out.critical_gamma = r.critical;
  out.relative_error = r.critical / kGreenhillGamma - 1.0;
  out.ok = true;
  return out;
}

GreenhillResult find_greenhill_by_imperfection(const Model& model, double low, double high, double tolerance,
                                               double imperfection) {
  GreenhillResult out;
  out.rod = describe_column(model);
  const ClampedRod& rod = out.rod;
  const Vec3 side = sideways_direction(rod.axis, model.dimension);
  const DofLayout& layout = model.layout;
  const int D = model.dimension;
  // 1: buckled, 0: upright, -1: the static solve failed.
  auto buckled = [&](double gamma) {
    const Model loaded = with_gravito_bending_number(model, rod, gamma);
    State state = initial_state(loaded);
    for (int i = 2; i <= rod.tip; ++i) {
      const double s = (i - 0.5) * rod.h / rod.length;
      const Vec3 offset = imperfection * rod.length * s * s * side;
      for (int k = 0; k < D; ++k) state.positions[layout.vertex_dof(0, i) + k] += offset[k];
    }
    ++out.evaluations;
    const StaticResult r = solve_static(loaded, state);
    if (!r.ok) {
      out.message = "static solve at Gamma = " + std::to_string(gamma) + ": " + r.message;
      return -1;
    }
    const Vec3 tip = relative_to_clamp(loaded, state.positions, rod, rod.tip);
    return (tip - tip.dot(rod.axis) * rod.axis).norm() > 2.0 * imperfection ? 1 : 0;
  };
  const int at_low = buckled(low), at_high = buckled(high);
  if (at_low < 0 || at_high < 0) return out;
  if (at_low != 0 || at_high != 1) {
    std::ostringstream message;
    message << "[" << low << ", " << high << "] does not bracket the threshold (buckled: " << at_low << ", " << at_high
            << ")";
    out.message = message.str();
    return out;
  }
  while (high - low > tolerance * high) {
    const double mid = 0.5 * (low + high);
    const int b = buckled(mid);
    if (b < 0) return out;
    (b ? high : low) = mid;
  }
  out.critical_gamma = 0.5 * (low + high);
  out.relative_error = out.critical_gamma / kGreenhillGamma - 1.0;
  out.ok = true;
  return out;
}

// Cases 6 to 9: rods with twist, built in code (validation_cases.hpp).

namespace {

/// A 3D model of one rod with twist DOFs, and optionally one point load on its last vertex.
Model rod_with_twist(const Material& material, std::vector<Vec3> vertices, std::vector<int> fixed, RestShape rest,
                     const Vec3& tip_force = Vec3::Zero()) {
  Model model;
  model.dimension = 3;
  model.rods.push_back(make_rod("rod", material, std::move(vertices), std::move(fixed), rest, 3));
  model.rods[0].twist = true;
  if (tip_force.norm() > 0.0) {
    PointLoad load;
    load.rod = 0;
    load.vertex = model.rods[0].vertex_count() - 1;
    load.force = tip_force;
    model.loads.push_back(load);
  }
  model.finalize();
  return model;
}

/// Vertices i = 0..n of a straight rod along x at (i - 1/2) h: the first edge's midpoint at
/// the origin (the effective clamp of fixed vertices 0 and 1).
std::vector<Vec3> straight_vertices(int segments, double h) {
  std::vector<Vec3> vertices;
  for (int i = 0; i <= segments; ++i) vertices.push_back(Vec3((i - 0.5) * h, 0.0, 0.0));
  return vertices;
}

std::string describe(const char* pattern, double a, double b, double c) {
  char buffer[256];
  std::snprintf(buffer, sizeof buffer, pattern, a, b, c);
  return buffer;
}

/// Fills `convergence` with the largest relative error of each run and its order.
void relative_error_convergence(TwistStudy& study) {
  study.convergence.segments = study.segments;
  study.convergence.errors.clear();
  for (std::size_t i = 0; i < study.values.size(); ++i) {
    double worst = 0.0;
    for (std::size_t q = 0; q < study.references.size(); ++q)
      worst = std::max(worst, std::abs(study.relative_error(i, q)));
    study.convergence.errors.push_back(worst);
  }
  study.convergence.order = observed_order(study.convergence.segments, study.convergence.errors);
  study.convergence.ok = true;
  study.ok = true;
}

}  // namespace

TwistStudy torsional_frequency_study(const std::vector<int>& segments) {
  TwistStudy out;
  Material steel;
  steel.density = 7800.0;
  steel.radius = 0.05;
  steel.youngs_modulus = 2e11;
  steel.shear_modulus = 2e11 / (2.0 * 1.3);
  const double L = 1.0;
  out.setup = describe("steel rod, L = %g m, r = %g m, G = E / (2 (1 + %g))", L, steel.radius, 0.3);
  const double wave_speed = std::sqrt(steel.shear() / steel.density);
  for (int k = 1; k <= 3; ++k) out.references.push_back((2.0 * k - 1.0) / (4.0 * L) * wave_speed);
  for (const int n : segments) {
    const Model model = rod_with_twist(steel, straight_vertices(n, L / (n - 0.5)), {0, 1}, RestShape::Straight);
    // A straight rod's twist decouples from its bending and stretching: its torsional modes
    // carry all their (M-orthonormal) mass norm on the twist DOFs, the others none. With
    // L / r = 20 about a dozen bending and axial modes lie below the third torsional one.
    ModalSettings settings;
    settings.count = 24;
    settings.want_shapes = true;
    const ModalResult modes = modal_analysis(model, initial_state(model), settings);
    if (!modes.ok) {
      out.message = std::to_string(n) + " segments: modal analysis: " + modes.message;
      return out;
    }
    const VecX mass = model.dof_masses();
    std::vector<double> torsional;
    for (std::size_t m = 0; m < modes.shapes.size() && torsional.size() < 3; ++m) {
      double share = 0.0;
      for (int j = 0; j < model.rods[0].edge_count(); ++j) {
        const int dof = model.layout.edge_dof(0, j);
        share += mass[dof] * modes.shapes[m][dof] * modes.shapes[m][dof];
      }
      if (share > 0.5) torsional.push_back(modes.frequencies_hz[m]);
    }
    if (torsional.size() < 3) {
      out.message = std::to_string(n) + " segments: fewer than 3 torsional modes among the lowest " +
                    std::to_string(settings.count);
      return out;
    }
    out.segments.push_back(n);
    out.values.push_back(torsional);
  }
  relative_error_convergence(out);
  return out;
}

TwistStudy twist_buckling_study(const std::vector<int>& segments, double tolerance) {
  TwistStudy out;
  Material wire;
  wire.density = 1000.0;
  wire.radius = 1e-3;
  wire.youngs_modulus = 1e9;  // G = E / 3, the default
  const double L = 0.5;
  out.setup = describe("wire, L = %g m, r = %g m, E = %g Pa, G = E / 3", L, wire.radius, wire.youngs_modulus);
  out.references.push_back(kGreenhillTwist);
  const double GJ = wire.shear() * 2.0 * wire.second_moment(), EI = wire.bending_stiffness();
  for (const int n : segments) {
    // Both end edges clamped: their midpoints, at arc length 0 and L, are the clamps.
    const double h = L / (n - 1);
    const Model model = rod_with_twist(wire, straight_vertices(n, h), {0, 1, n - 1, n}, RestShape::Straight);
    // The uniformly twisted straight rod, the last edge turned by phi: an equilibrium for
    // every phi, with twisting moment G J phi / L. Edge j's midpoint is at arc length j h.
    std::string failure;
    auto lowest = [&](double phi) {
      State state = initial_state(model);
      for (int j = 0; j < n; ++j) state.positions[model.layout.edge_dof(0, j)] = phi * std::min(1.0, j * h / L);
      ModalSettings settings;
      settings.count = 1;
      const ModalResult m = modal_analysis(model, state, settings);
      if (!m.ok || m.eigenvalues.empty()) {
        failure = m.ok ? "no eigenvalue" : m.message;
        return std::nan("");
      }
      return m.eigenvalues.front();
    };
    // Illinois regula falsi (Dowell and Jarratt, BIT 11, 1971) on the bracket of end turns
    // [1, 40] rad: stable at 1 rad, unstable at 40 for this rod at any resolution used.
    double a = 1.0, b = 40.0, fa = lowest(a), fb = lowest(b), c = a;
    if (!(fa > 0.0 && fb < 0.0)) {
      out.message = std::to_string(n) + " segments: " +
                    (failure.empty() ? "[1, 40] rad does not bracket the threshold" : "modal analysis: " + failure);
      return out;
    }
    int side = 0;
    for (int evaluation = 0; evaluation < 60; ++evaluation) {
      c = (a * fb - b * fa) / (fb - fa);
      const double fc = lowest(c);
      if (std::isnan(fc)) {
        out.message = std::to_string(n) + " segments: modal analysis: " + failure;
        return out;
      }
      if (fc == 0.0) break;
      if ((fc > 0.0) == (fa > 0.0)) {
        a = c;
        fa = fc;
        if (side == 1) fb *= 0.5;
        side = 1;
      } else {
        b = c;
        fb = fc;
        if (side == -1) fa *= 0.5;
        side = -1;
      }
      if (b - a <= tolerance * c) break;
    }
    out.segments.push_back(n);
    const double moment = GJ * c / L;  // the twisting moment of the critical end turn c
    out.values.push_back({moment * L / (EI * kPi)});
  }
  relative_error_convergence(out);
  return out;
}

TwistStudy coil_spring_study(const std::vector<int>& edges_per_turn) {
  TwistStudy out;
  const double R = 0.005, d = 0.0005, pitch = 0.004, P = 0.05;
  const int turns = 10;
  Material steel;
  steel.density = 7800.0;
  steel.radius = d / 2.0;
  steel.youngs_modulus = 2e11;
  steel.shear_modulus = 2e11 / (2.0 * 1.3);
  out.setup = describe("steel wire d = %g mm, coil D = %g mm, pitch %g mm", 1e3 * d, 2e3 * R, 1e3 * pitch) +
              ", n = 10 turns, P = 0.05 N";
  out.references.push_back(steel.shear() * std::pow(d, 4) / (8.0 * std::pow(2.0 * R, 3) * turns));
  for (const int per_turn : edges_per_turn) {
    // The coil about -y, vertex i at angle (i - 1/2) dphi: n whole turns from the clamp (the
    // first edge's midpoint, at angle 0) to the coil's last vertex.
    const int coil_edges = turns * per_turn;
    const double dphi = 2.0 * kPi * turns / (coil_edges - 0.5);
    std::vector<Vec3> vertices;
    for (int i = 0; i <= coil_edges; ++i) {
      const double phi = (i - 0.5) * dphi;
      vertices.push_back(Vec3(R * std::cos(phi), -pitch * phi / (2.0 * kPi), R * std::sin(phi)));
    }
    // A radial hook from the coil's end to its axis, refined with the coil, so that the load
    // acts on the axis as in the textbook spring.
    const Vec3 last = vertices.back(), hook(0.0, last.y(), 0.0);
    const int hook_edges = std::max(2, per_turn / 6);
    for (int k = 1; k <= hook_edges; ++k) vertices.push_back(last + (hook - last) * (double(k) / hook_edges));
    const Model model = rod_with_twist(steel, vertices, {0, 1}, RestShape::Initial, Vec3(0.0, -P, 0.0));
    State state = initial_state(model);
    const int dof = model.layout.vertex_dof(0, model.loads.front().vertex) + 1;
    const double start = state.positions[dof];
    const StaticResult r = solve_static(model, state);
    if (!r.ok) {
      out.message = std::to_string(per_turn) + " edges per turn: static solve: " + r.message;
      return out;
    }
    out.segments.push_back(per_turn);
    out.values.push_back({P / (start - state.positions[dof])});
  }
  // The error measure: the change from the previous resolution.
  for (std::size_t i = 1; i < out.values.size(); ++i) {
    out.convergence.segments.push_back(out.segments[i]);
    out.convergence.errors.push_back(std::abs(out.values[i][0] / out.values[i - 1][0] - 1.0));
  }
  out.convergence.order = observed_order(out.convergence.segments, out.convergence.errors);
  out.convergence.ok = true;
  out.ok = true;
  return out;
}

TwistStudy curved_cantilever_study(const std::vector<int>& segments) {
  TwistStudy out;
  const double R = 0.1, nu = 0.3;
  Material wire;
  wire.density = 1000.0;
  wire.radius = 1e-3;
  wire.youngs_modulus = 1e9;
  wire.shear_modulus = wire.youngs_modulus / (2.0 * (1.0 + nu));
  const double EI = wire.bending_stiffness(), GJ = wire.shear() * 2.0 * wire.second_moment();
  const double P = 1e-3 * EI / (R * R);
  out.setup = describe("quarter circle R = %g m, wire r = %g m, G = E / (2 (1 + %g))", R, wire.radius, nu) +
              ", P R^2 / (E I) = 1e-3";
  out.references.push_back(P * R * R * R * (kPi / (4.0 * EI) + (0.75 * kPi - 2.0) / GJ));
  for (const int n : segments) {
    // Vertex i at angle (i - 1/2) dtheta on the circle: the clamp (the first edge's midpoint)
    // at angle 0, the tip at pi / 2.
    const double dtheta = 0.5 * kPi / (n - 0.5);
    std::vector<Vec3> vertices;
    for (int i = 0; i <= n; ++i) {
      const double theta = (i - 0.5) * dtheta;
      vertices.push_back(Vec3(R * std::cos(theta), R * std::sin(theta), 0.0));
    }
    const Model model = rod_with_twist(wire, vertices, {0, 1}, RestShape::Initial, Vec3(0.0, 0.0, P));
    State state = initial_state(model);
    const StaticResult r = solve_static(model, state);
    if (!r.ok) {
      out.message = std::to_string(n) + " segments: static solve: " + r.message;
      return out;
    }
    out.segments.push_back(n);
    out.values.push_back({state.positions[model.layout.vertex_dof(0, n) + 2]});
  }
  relative_error_convergence(out);
  return out;
}

}  // namespace bristle

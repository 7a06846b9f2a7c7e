#include "bristle/analysis/validation_cases.hpp"

#include <algorithm>
#include <cmath>
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

}  // namespace bristle

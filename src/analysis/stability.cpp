#include "bristle/analysis/stability.hpp"

#include <cmath>
#include <sstream>

#include "bristle/analysis/modes.hpp"

namespace bristle {

double lowest_eigenvalue_at_equilibrium(const Model& model, const StaticSettings& settings,
                                        std::string* message) {
  State state = initial_state(model);
  const StaticResult equilibrium = solve_static(model, state, settings);
  if (!equilibrium.ok) {
    if (message) *message = equilibrium.message;
    return std::nan("");
  }
  ModalSettings modal;
  modal.count = 1;
  const ModalResult modes = modal_analysis(model, state, modal);
  if (!modes.ok || modes.eigenvalues.empty()) {
    if (message) *message = modes.message;
    return std::nan("");
  }
  return modes.eigenvalues.front();
}

StabilityResult find_stability_threshold(const LoadedModelFactory& make_model,
                                         const StabilitySettings& settings) {
  StabilityResult result;
  std::string message;
  auto evaluate = [&](double p) {
    const double lambda = lowest_eigenvalue_at_equilibrium(make_model(p), settings.static_settings, &message);
    result.samples.push_back({p, lambda});
    return lambda;
  };

  double a = settings.low, b = settings.high;
  double fa = evaluate(a), fb = evaluate(b);
  if (std::isnan(fa) || std::isnan(fb)) {
    result.message = "stability threshold: " + message;
    return result;
  }
  if (!(fa > 0.0 && fb < 0.0)) {
    std::ostringstream out;
    out << "stability threshold: [" << a << ", " << b << "] is not a bracket (lowest eigenvalues "
        << fa << " and " << fb << "; want stable at low, unstable at high)";
    result.message = out.str();
    return result;
  }

  // Illinois regula falsi: halve the retained end's value when the same end is kept twice.
  int side = 0;
  for (int k = 2; k < settings.max_evaluations; ++k) {
    if (std::abs(b - a) <= settings.tolerance * std::max(std::abs(a), std::abs(b))) break;
    double c = (a * fb - b * fa) / (fb - fa);
    if (!(c > std::min(a, b) && c < std::max(a, b))) c = 0.5 * (a + b);
    const double fc = evaluate(c);
    if (std::isnan(fc)) {
      result.message = "stability threshold: " + message;
      return result;
    }
    if (fc == 0.0) {
      a = b = c;
      break;
    }
    if (fc > 0.0) {  // stable: replaces the low end
      a = c;
      fa = fc;
      if (side == -1) fb *= 0.5;
      side = -1;
    } else {
      b = c;
      fb = fc;
      if (side == +1) fa *= 0.5;
      side = +1;
    }
  }
  result.critical = (a * fb - b * fa) / (fb - fa);
  if (!std::isfinite(result.critical) || a == b) result.critical = 0.5 * (a + b);
  result.ok = true;
  return result;
}

}  // namespace bristle

#pragma once
/// The two plots of docs/validation.md, drawn with cairo into PNG images (a few tens of KB):
///
///  - centrelines: each simulated cantilever (dots at its vertices) over its reference
///    elastica (line), in units of L, equal scales on both axes;
///  - convergence: tip error / L against the number of segments on log-log axes, with the
///    observed order in the legend and dashed 1/N and 1/N^2 slopes for comparison.

#include <string>
#include <vector>

#include "bristle/analysis/validation.hpp"

namespace bristle {

/// The PNG file's bytes. Throws std::runtime_error if cairo fails.
std::string plot_centrelines_png(const std::vector<CentrelinePlotData>& curves);
std::string plot_convergence_png(const std::vector<ConvergencePlotData>& series);

}  // namespace bristle

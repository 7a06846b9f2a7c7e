#pragma once
/// The two plots of docs/validation.md, drawn with cairo into PNG images (a few tens of KB):
///
///  - centrelines: each simulated cantilever (dots at its vertices) over its reference
///    elastica (line), in units of L, equal scales on both axes;
///  - convergence: tip error / L against the number of segments on log-log axes, with the
///    observed order in the legend and dashed 1/N and 1/N^2 slopes for comparison; the same
///    for the relative errors of the cases with twist (6 to 9).

#include <string>
#include <vector>

#include "bristle/analysis/validation.hpp"

namespace bristle {

/// The PNG file's bytes. Throws std::runtime_error if cairo fails.
std::string plot_centrelines_png(const std::vector<CentrelinePlotData>& curves);
/// The defaults are case 5's labels and layout (legend in the lower left); cases 6 to 9 pass
/// their own, with the legend above the data.
std::string plot_convergence_png(
    const std::vector<ConvergencePlotData>& series,
    const std::string& title = "Convergence of the cantilever tip (clamp at the first edge's midpoint)",
    const std::string& x_label = "segments N", const std::string& y_label = "tip error / L",
    bool legend_on_top = false);

}  // namespace bristle

// Plots of the validation report, drawn with the charts of include/bristle/plot/chart.hpp.

#include "bristle/analysis/validation_plot.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include <cairo.h>

#include "bristle/plot/chart.hpp"

namespace bristle {

using namespace plot;

std::string plot_centrelines_png(const std::vector<CentrelinePlotData>& curves) {
  // Equal scales: the same data span on both axes over a square frame.
  const Canvas canvas(640, 640);
  double x_min = 0.0, x_max = 1.0, y_min = -0.1, y_max = 0.1;
  for (const auto& curve : curves)
    for (const auto* points : {&curve.bristle, &curve.reference})
      for (const Vec2& p : *points) {
        x_min = std::min(x_min, p.x());
        x_max = std::max(x_max, p.x());
        y_min = std::min(y_min, p.y());
        y_max = std::max(y_max, p.y());
      }
  const double span = 1.08 * std::max(x_max - x_min, y_max - y_min);
  const double cx = 0.5 * (x_min + x_max), cy = 0.5 * (y_min + y_max);
  Axes a{80, 50, 530, 530, cx - 0.5 * span, cx + 0.5 * span, cy - 0.5 * span, cy + 0.5 * span};
  draw_frame(canvas, a, "x / L (along the clamp)", "y / L (up)", ticks(a.x0, a.x1, false, 6),
             ticks(a.y0, a.y1, false, 6));
  canvas.text("Self-weight cantilevers: Bristle (dots) over the elastica (lines)", 320, 18, 0.5, 0.0, 14.0);

  cairo_t* cr = canvas.cr();
  cairo_save(cr);
  cairo_rectangle(cr, a.left, a.top, a.width, a.height);
  cairo_clip(cr);
  // The clamp: a short wall at the origin.
  canvas.color(kGuide);
  cairo_set_line_width(cr, 3.0);
  cairo_move_to(cr, a.px(0.0), a.py(-0.06));
  cairo_line_to(cr, a.px(0.0), a.py(0.06));
  cairo_stroke(cr);
  for (std::size_t i = 0; i < curves.size(); ++i) {
    canvas.color(palette(i));
    cairo_set_line_width(cr, 1.6);
    polyline(canvas, a, curves[i].reference);
    for (const Vec2& p : curves[i].bristle) dot(canvas, a.px(p.x()), a.py(p.y()), 2.2);
  }
  cairo_restore(cr);
  // Legend in the lower right, where the sagging rods leave the frame empty.
  for (std::size_t i = 0; i < curves.size(); ++i)
    legend_entry(canvas, a.left + a.width - 190, a.top + a.height - 20.0 * (curves.size() - i) - 10, palette(i), true,
                 true, curves[i].label);
  return canvas.png();
}

std::string plot_convergence_png(const std::vector<ConvergencePlotData>& series, const std::string& title,
                                 const std::string& x_label, const std::string& y_label, bool legend_on_top) {
  const Canvas canvas(640, 480);
  double e_min = 1.0, e_max = 1e-12;
  int n_min = 1 << 30, n_max = 1;
  for (const auto& s : series)
    for (std::size_t i = 0; i < s.study.errors.size(); ++i) {
      if (!(s.study.errors[i] > 0.0)) continue;
      e_min = std::min(e_min, s.study.errors[i]);
      e_max = std::max(e_max, s.study.errors[i]);
      n_min = std::min(n_min, s.study.segments[i]);
      n_max = std::max(n_max, s.study.segments[i]);
    }
  if (e_min > e_max) {  // nothing to plot: an empty frame
    e_min = 1e-6;
    e_max = 1e-1;
    n_min = 10;
    n_max = 100;
  }
  Axes a{90, 50, 520, 360, 0.0, 0.0, 0.0, 0.0, true, true};
  a.x0 = n_min / 1.4;
  a.x1 = n_max * 1.4;
  a.y0 = std::pow(10.0, std::floor(std::log10(e_min / 2.0)));
  a.y1 = std::pow(10.0, std::ceil(std::log10(e_max * 2.0)));
  // A legend on top gets a decade and a half of its own above the data.
  if (legend_on_top) a.y1 = std::pow(10.0, std::ceil(std::log10(e_max * 2.0) + 1.5));
  // Ticks on N at the resolutions run (10, 20, 40, ...), on the error at the decades.
  std::vector<double> n_ticks;
  for (const auto& s : series)
    for (int n : s.study.segments)
      // Resolutions closer than 15% (24 and 25) would print over each other: the first one only.
      if (std::none_of(n_ticks.begin(), n_ticks.end(),
                       [&](double t) { return std::max<double>(n, t) < 1.15 * std::min<double>(n, t); }))
        n_ticks.push_back(n);
  if (n_ticks.empty()) n_ticks = ticks(a.x0, a.x1, true, 0);
  draw_frame(canvas, a, x_label, y_label, n_ticks, ticks(a.y0, a.y1, true, 0));
  canvas.text(title, 350, 18, 0.5, 0.0, 14.0);

  cairo_t* cr = canvas.cr();
  cairo_save(cr);
  cairo_rectangle(cr, a.left, a.top, a.width, a.height);
  cairo_clip(cr);
  // Guide slopes 1/N and 1/N^2 through the first series' first point.
  if (!series.empty() && !series.front().study.errors.empty()) {
    const double n0 = series.front().study.segments.front(), e0 = series.front().study.errors.front();
    const double dash[] = {5.0, 4.0};
    cairo_set_dash(cr, dash, 2, 0.0);
    canvas.color(kGuide);
    cairo_set_line_width(cr, 1.2);
    for (int p : {1, 2}) {
      const double nb = a.x1;
      polyline(canvas, a, {Vec2(n0, 2.0 * e0), Vec2(nb, 2.0 * e0 * std::pow(n0 / nb, p))});
    }
    cairo_set_dash(cr, nullptr, 0, 0.0);
    const double n_label = a.x1 / 1.25;
    canvas.text("1/N", a.px(n_label), a.py(2.0 * e0 * n0 / n_label) - 4, 0.5, 1.0, 12.0);
    canvas.text("1/N^2", a.px(n_label), a.py(2.0 * e0 * std::pow(n0 / n_label, 2)) - 4, 0.5, 1.0, 12.0);
  }
  for (std::size_t i = 0; i < series.size(); ++i) {
    const ConvergenceStudy& s = series[i].study;
    std::vector<Vec2> points;
    for (std::size_t k = 0; k < s.errors.size(); ++k)
      if (s.errors[k] > 0.0) points.push_back(Vec2(s.segments[k], s.errors[k]));
    canvas.color(palette(i));
    cairo_set_line_width(cr, 1.8);
    polyline(canvas, a, points);
    for (const Vec2& p : points) dot(canvas, a.px(p.x()), a.py(p.y()), 3.5);
  }
  cairo_restore(cr);
  double y = legend_on_top ? a.top + 16.0 : a.top + a.height - 20.0 * (series.size() + 2) - 4;
  for (std::size_t i = 0; i < series.size(); ++i, y += 20) {
    char order[64];
    std::snprintf(order, sizeof order, " (observed order %.2f)", series[i].study.order);
    legend_entry(canvas, a.left + 14, y, palette(i), true, true, series[i].label + order);
  }
  legend_entry(canvas, a.left + 14, y, kGuide, true, false, "slopes 1/N and 1/N^2", true);
  return canvas.png();
}

}  // namespace bristle

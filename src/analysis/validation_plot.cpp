// Plots of the validation report, drawn with cairo's vector API onto an image surface and
// encoded as PNG in memory (cairo_surface_write_to_png_stream), so the caller writes the file
// whole. Only what the two figures need: a frame with linear or logarithmic axes, grid, tick
// labels, polylines, dots and a legend.

#include "bristle/analysis/validation_plot.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include <cairo.h>

namespace bristle {
namespace {

constexpr double kPi = 3.14159265358979323846;

struct Color {
  double r, g, b;
};

// Colour-blind-safe palette (Okabe and Ito, "Color Universal Design", 2008).
constexpr Color kPalette[] = {{0.000, 0.447, 0.698}, {0.835, 0.369, 0.000}, {0.000, 0.620, 0.451},
                              {0.800, 0.475, 0.655}, {0.902, 0.624, 0.000}, {0.337, 0.706, 0.914}};
constexpr Color kBlack{0.0, 0.0, 0.0};
constexpr Color kGrid{0.88, 0.88, 0.88};
constexpr Color kGuide{0.55, 0.55, 0.55};

Color palette(std::size_t i) { return kPalette[i % (sizeof kPalette / sizeof kPalette[0])]; }

/// A cairo image surface and context, freed on scope exit.
class Canvas {
 public:
  Canvas(int width, int height)
      : surface_(cairo_image_surface_create(CAIRO_FORMAT_RGB24, width, height)), cr_(cairo_create(surface_)) {
    if (cairo_status(cr_) != CAIRO_STATUS_SUCCESS) throw std::runtime_error("cairo: cannot create the plot surface");
    cairo_set_source_rgb(cr_, 1.0, 1.0, 1.0);
    cairo_paint(cr_);
    cairo_select_font_face(cr_, "DejaVu Sans", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
    cairo_set_font_size(cr_, 13.0);
  }
  ~Canvas() {
    cairo_destroy(cr_);
    cairo_surface_destroy(surface_);
  }
  Canvas(const Canvas&) = delete;
  Canvas& operator=(const Canvas&) = delete;

  cairo_t* cr() const { return cr_; }

  void color(const Color& c) const { cairo_set_source_rgb(cr_, c.r, c.g, c.b); }

  /// Text with its anchor at (x, y): ax, ay in [0, 1] pick the point of the text's box.
  void text(const std::string& s, double x, double y, double ax, double ay, double size = 13.0) const {
    cairo_set_font_size(cr_, size);
    cairo_text_extents_t e;
    cairo_text_extents(cr_, s.c_str(), &e);
    cairo_move_to(cr_, x - e.x_bearing - ax * e.width, y - e.y_bearing - ay * e.height);
    cairo_show_text(cr_, s.c_str());
  }

  std::string png() const {
    cairo_surface_flush(surface_);
    std::string bytes;
    const cairo_status_t status = cairo_surface_write_to_png_stream(
        surface_,
        [](void* closure, const unsigned char* data, unsigned int length) {
          static_cast<std::string*>(closure)->append(reinterpret_cast<const char*>(data), length);
          return CAIRO_STATUS_SUCCESS;
        },
        &bytes);
    if (status != CAIRO_STATUS_SUCCESS)
      throw std::runtime_error(std::string("cairo: cannot encode the plot: ") + cairo_status_to_string(status));
    return bytes;
  }

 private:
  cairo_surface_t* surface_;
  cairo_t* cr_;
};

/// Data coordinates to pixels, linear or logarithmic per axis.
struct Axes {
  double left, top, width, height;  // the frame [px]
  double x0, x1, y0, y1;            // data range
  bool log_x = false, log_y = false;

  double u(double x) const { return log_x ? std::log10(x) : x; }
  double v(double y) const { return log_y ? std::log10(y) : y; }
  double px(double x) const { return left + (u(x) - u(x0)) / (u(x1) - u(x0)) * width; }
  double py(double y) const { return top + height - (v(y) - v(y0)) / (v(y1) - v(y0)) * height; }
};

/// Tick values: multiples of 1, 2 or 5 times a power of ten for a linear axis (about `count`
/// of them), the decades for a logarithmic one.
std::vector<double> ticks(double a, double b, bool log, int count) {
  std::vector<double> out;
  if (log) {
    for (int e = static_cast<int>(std::floor(std::log10(a))); e <= static_cast<int>(std::ceil(std::log10(b))); ++e) {
      const double t = std::pow(10.0, e);
      if (t >= a * (1 - 1e-9) && t <= b * (1 + 1e-9)) out.push_back(t);
    }
    return out;
  }
  const double raw = (b - a) / count, magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  double step = magnitude;
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * magnitude >= raw) {
      step = m * magnitude;
      break;
    }
  for (double t = std::ceil(a / step - 1e-9) * step; t <= b + 1e-9 * step; t += step)
    out.push_back(std::abs(t) < 1e-12 * step ? 0.0 : t);
  return out;
}

std::string tick_label(double t, bool log) {
  char buffer[32];
  if (log) {
    const int e = static_cast<int>(std::lround(std::log10(t)));
    // Decades below 1 as 1e-3; other values (10, 20, 160) as they are.
    if (e >= 0 || std::abs(t / std::pow(10.0, e) - 1.0) > 1e-9) std::snprintf(buffer, sizeof buffer, "%g", t);
    else std::snprintf(buffer, sizeof buffer, "1e%d", e);
  } else {
    std::snprintf(buffer, sizeof buffer, "%g", t);
  }
  return buffer;
}

/// Grid, frame, tick labels and axis titles.
void draw_frame(const Canvas& c, const Axes& a, const std::string& x_title, const std::string& y_title,
                const std::vector<double>& x_ticks, const std::vector<double>& y_ticks) {
  cairo_t* cr = c.cr();
  cairo_set_line_width(cr, 1.0);
  c.color(kGrid);
  for (double t : x_ticks) {
    cairo_move_to(cr, a.px(t), a.top);
    cairo_line_to(cr, a.px(t), a.top + a.height);
  }
  for (double t : y_ticks) {
    cairo_move_to(cr, a.left, a.py(t));
    cairo_line_to(cr, a.left + a.width, a.py(t));
  }
  cairo_stroke(cr);
  c.color(kBlack);
  cairo_rectangle(cr, a.left, a.top, a.width, a.height);
  cairo_stroke(cr);
  for (double t : x_ticks) c.text(tick_label(t, a.log_x), a.px(t), a.top + a.height + 6, 0.5, 0.0, 12.0);
  for (double t : y_ticks) c.text(tick_label(t, a.log_y), a.left - 6, a.py(t), 1.0, 0.5, 12.0);
  c.text(x_title, a.left + 0.5 * a.width, a.top + a.height + 28, 0.5, 0.0);
  cairo_save(cr);
  cairo_translate(cr, a.left - 52, a.top + 0.5 * a.height);
  cairo_rotate(cr, -kPi / 2);
  c.text(y_title, 0.0, 0.0, 0.5, 0.5);
  cairo_restore(cr);
}

void polyline(const Canvas& c, const Axes& a, const std::vector<Vec2>& points) {
  cairo_t* cr = c.cr();
  for (std::size_t i = 0; i < points.size(); ++i) {
    const double x = a.px(points[i].x()), y = a.py(points[i].y());
    if (i == 0) cairo_move_to(cr, x, y);
    else cairo_line_to(cr, x, y);
  }
  cairo_stroke(cr);
}

void dot(const Canvas& c, double x, double y, double radius) {
  cairo_new_sub_path(c.cr());
  cairo_arc(c.cr(), x, y, radius, 0.0, 2.0 * kPi);
  cairo_fill(c.cr());
}

/// One legend entry at (x, y): a short line, optionally a dot, then the text.
void legend_entry(const Canvas& c, double x, double y, const Color& color, bool line, bool marker, const std::string& text,
                  bool dashed = false) {
  cairo_t* cr = c.cr();
  c.color(color);
  if (line) {
    if (dashed) {
      const double dash[] = {5.0, 4.0};
      cairo_set_dash(cr, dash, 2, 0.0);
    }
    cairo_set_line_width(cr, 1.6);
    cairo_move_to(cr, x, y);
    cairo_line_to(cr, x + 26, y);
    cairo_stroke(cr);
    cairo_set_dash(cr, nullptr, 0, 0.0);
  }
  if (marker) dot(c, x + 13, y, 3.0);
  c.color(kBlack);
  c.text(text, x + 34, y, 0.0, 0.5, 12.5);
}

}  // namespace

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

std::string plot_convergence_png(const std::vector<ConvergencePlotData>& series) {
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
  // Ticks on N at the resolutions run (10, 20, 40, ...), on the error at the decades.
  std::vector<double> n_ticks;
  for (const auto& s : series)
    for (int n : s.study.segments)
      if (std::find(n_ticks.begin(), n_ticks.end(), n) == n_ticks.end()) n_ticks.push_back(n);
  if (n_ticks.empty()) n_ticks = ticks(a.x0, a.x1, true, 0);
  draw_frame(canvas, a, "segments N", "tip error / L", n_ticks, ticks(a.y0, a.y1, true, 0));
  canvas.text("Convergence of the cantilever tip (clamp at the first edge's midpoint)", 350, 18, 0.5, 0.0, 14.0);

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
  double y = a.top + a.height - 20.0 * (series.size() + 2) - 4;
  for (std::size_t i = 0; i < series.size(); ++i, y += 20) {
    char order[64];
    std::snprintf(order, sizeof order, " (observed order %.2f)", series[i].study.order);
    legend_entry(canvas, a.left + 14, y, palette(i), true, true, series[i].label + order);
  }
  legend_entry(canvas, a.left + 14, y, kGuide, true, false, "slopes 1/N and 1/N^2", true);
  return canvas.png();
}

}  // namespace bristle

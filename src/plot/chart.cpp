// Charts for reports (include/bristle/plot/chart.hpp).

#include "bristle/plot/chart.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace bristle::plot {

namespace {
constexpr Color kPalette[] = {{0.000, 0.447, 0.698}, {0.835, 0.369, 0.000}, {0.000, 0.620, 0.451},
                              {0.800, 0.475, 0.655}, {0.902, 0.624, 0.000}, {0.337, 0.706, 0.914}};

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
}  // namespace

Color palette(std::size_t i) { return kPalette[i % (sizeof kPalette / sizeof kPalette[0])]; }

Canvas::Canvas(int width, int height)
    : surface_(cairo_image_surface_create(CAIRO_FORMAT_RGB24, width, height)), cr_(cairo_create(surface_)) {
  if (cairo_status(cr_) != CAIRO_STATUS_SUCCESS) throw std::runtime_error("cairo: cannot create the plot surface");
  cairo_set_source_rgb(cr_, 1.0, 1.0, 1.0);
  cairo_paint(cr_);
  cairo_select_font_face(cr_, "DejaVu Sans", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
  cairo_set_font_size(cr_, 13.0);
}

Canvas::~Canvas() {
  cairo_destroy(cr_);
  cairo_surface_destroy(surface_);
}

void Canvas::text(const std::string& s, double x, double y, double ax, double ay, double size) const {
  cairo_set_font_size(cr_, size);
  cairo_text_extents_t e;
  cairo_text_extents(cr_, s.c_str(), &e);
  cairo_move_to(cr_, x - e.x_bearing - ax * e.width, y - e.y_bearing - ay * e.height);
  cairo_show_text(cr_, s.c_str());
}

std::string Canvas::png() const {
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

double Axes::u(double x) const { return log_x ? std::log10(x) : x; }
double Axes::v(double y) const { return log_y ? std::log10(y) : y; }

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

void legend_entry(const Canvas& c, double x, double y, const Color& color, bool line, bool marker, const std::string& text,
                  bool dashed) {
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

}  // namespace bristle::plot

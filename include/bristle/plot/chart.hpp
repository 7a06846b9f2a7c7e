#pragma once
/// Small charts drawn with cairo onto an image surface and encoded as PNG in memory, so the
/// caller writes the file whole (validation and benchmark reports). Only what those figures
/// need: a frame with linear or logarithmic axes, grid, tick labels, polylines, dots and a
/// legend.

#include <string>
#include <vector>

#include <cairo.h>

#include "bristle/math/types.hpp"

namespace bristle::plot {

constexpr double kPi = 3.14159265358979323846;

struct Color {
  double r, g, b;
};

constexpr Color kBlack{0.0, 0.0, 0.0};
constexpr Color kGrid{0.88, 0.88, 0.88};
constexpr Color kGuide{0.55, 0.55, 0.55};

/// Colour-blind-safe palette (Okabe and Ito, "Color Universal Design", 2008), cycled.
Color palette(std::size_t i);

/// A cairo image surface and context, freed on scope exit.
class Canvas {
 public:
  Canvas(int width, int height);
  ~Canvas();
  Canvas(const Canvas&) = delete;
  Canvas& operator=(const Canvas&) = delete;

  cairo_t* cr() const { return cr_; }
  void color(const Color& c) const { cairo_set_source_rgb(cr_, c.r, c.g, c.b); }
  /// Text with its anchor at (x, y): ax, ay in [0, 1] pick the point of the text's box.
  void text(const std::string& s, double x, double y, double ax, double ay, double size = 13.0) const;
  /// The PNG file's bytes. Throws std::runtime_error if cairo fails.
  std::string png() const;

 private:
  cairo_surface_t* surface_;
  cairo_t* cr_;
};

/// Data coordinates to pixels, linear or logarithmic per axis.
struct Axes {
  double left, top, width, height;  // the frame [px]
  double x0, x1, y0, y1;            // data range
  bool log_x = false, log_y = false;

  double u(double x) const;
  double v(double y) const;
  double px(double x) const { return left + (u(x) - u(x0)) / (u(x1) - u(x0)) * width; }
  double py(double y) const { return top + height - (v(y) - v(y0)) / (v(y1) - v(y0)) * height; }
};

/// Tick values: multiples of 1, 2 or 5 times a power of ten for a linear axis (about `count`
/// of them), the decades for a logarithmic one.
std::vector<double> ticks(double a, double b, bool log, int count);

/// Grid, frame, tick labels and axis titles.
void draw_frame(const Canvas& c, const Axes& a, const std::string& x_title, const std::string& y_title,
                const std::vector<double>& x_ticks, const std::vector<double>& y_ticks);

void polyline(const Canvas& c, const Axes& a, const std::vector<Vec2>& points);
void dot(const Canvas& c, double x, double y, double radius);

/// One legend entry at (x, y): a short line, optionally a dot, then the text.
void legend_entry(const Canvas& c, double x, double y, const Color& color, bool line, bool marker,
                  const std::string& text, bool dashed = false);

}  // namespace bristle::plot

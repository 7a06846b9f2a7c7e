#pragma once
/// Colours for the renderer: linear-ish sRGB triples in [0, 1], the default rod palette, and
/// the JSON forms a scene's `render` block accepts ("#rrggbb" or [r, g, b] in [0, 1]).

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace bristle {

struct Color {
  double r = 0.0, g = 0.0, b = 0.0;  ///< each in [0, 1]

  friend bool operator==(const Color& x, const Color& y) {
    return x.r == y.r && x.g == y.g && x.b == y.b;
  }
  friend bool operator!=(const Color& x, const Color& y) { return !(x == y); }
};

/// From 8-bit channels: exactly k / 255, which cairo stores back as the byte k.
Color color_from_rgb8(int r, int g, int b);

/// "#rrggbb" (or "rrggbb"); throws RenderError naming `where` when malformed.
Color parse_color_hex(const std::string& text, const std::string& where = "");

/// "#rrggbb" or [r, g, b] with components in [0, 1]; throws RenderError naming `where`
/// (a JSON pointer) when malformed.
Color parse_color(const nlohmann::json& value, const std::string& where = "");

/// The default rod palette (colour-blind-safe hues, see docs/rendering.md).
const std::vector<Color>& default_palette();

/// The colour of rod `rod_index` out of `rod_count`: `palette[i % size]` when a palette is
/// given, else the default palette. With many rods and no palette given the default palette
/// is sampled as a smooth ramp across the rod indices, so a brush of neighbouring bristles
/// reads as one gradient instead of confetti.
Color rod_color(int rod_index, int rod_count, const std::vector<Color>& palette);

/// Linear interpolation a + t (b - a).
Color mix(const Color& a, const Color& b, double t);

}  // namespace bristle

#include "bristle/render/color.hpp"

#include <algorithm>
#include <cmath>

#include "bristle/render/render_error.hpp"

namespace bristle {

namespace {

std::string at(const std::string& where) { return where.empty() ? "" : where + ": "; }

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

Color color_from_rgb8(int r, int g, int b) {
  return Color{r / 255.0, g / 255.0, b / 255.0};
}

Color parse_color_hex(const std::string& text, const std::string& where) {
  std::string s = text;
  if (!s.empty() && s[0] == '#') s.erase(0, 1);
  int v[6];
  bool ok = s.size() == 6;
  for (std::size_t i = 0; ok && i < 6; ++i) {
    v[i] = hex_digit(s[i]);
    ok = v[i] >= 0;
  }
  if (!ok) {
    throw RenderError(at(where) + "expected a colour \"#rrggbb\", found \"" + text + "\"");
  }
  return color_from_rgb8(16 * v[0] + v[1], 16 * v[2] + v[3], 16 * v[4] + v[5]);
}

Color parse_color(const nlohmann::json& value, const std::string& where) {
  if (value.is_string()) return parse_color_hex(value.get<std::string>(), where);
  if (value.is_array() && value.size() == 3) {
    double c[3];
    for (int i = 0; i < 3; ++i) {
      const auto& x = value[static_cast<std::size_t>(i)];
      if (!x.is_number() || !(x.get<double>() >= 0.0 && x.get<double>() <= 1.0)) {
        throw RenderError(at(where) + "expected colour components in [0, 1], found " +
                          value.dump());
      }
      c[i] = x.get<double>();
    }
    return Color{c[0], c[1], c[2]};
  }
  throw RenderError(at(where) + "expected a colour \"#rrggbb\" or [r, g, b] in [0, 1], found " +
                    value.dump());
}

// Okabe & Ito, "Color Universal Design" (2002): hues that stay distinct under the common
// colour-vision deficiencies. Black is left out (it hides the lighting).
const std::vector<Color>& default_palette() {
  static const std::vector<Color> palette = {
      color_from_rgb8(0xe6, 0x9f, 0x00),  // orange
      color_from_rgb8(0x56, 0xb4, 0xe9),  // sky blue
      color_from_rgb8(0x00, 0x9e, 0x73),  // bluish green
      color_from_rgb8(0xf0, 0xe4, 0x42),  // yellow
      color_from_rgb8(0x00, 0x72, 0xb2),  // blue
      color_from_rgb8(0xd5, 0x5e, 0x00),  // vermilion
      color_from_rgb8(0xcc, 0x79, 0xa7),  // reddish purple
  };
  return palette;
}

Color mix(const Color& a, const Color& b, double t) {
  return Color{a.r + t * (b.r - a.r), a.g + t * (b.g - a.g), a.b + t * (b.b - a.b)};
}

Color rod_color(int rod_index, int rod_count, const std::vector<Color>& palette) {
  if (!palette.empty()) {
    return palette[static_cast<std::size_t>(rod_index) % palette.size()];
  }
  const auto& p = default_palette();
  if (rod_count <= static_cast<int>(p.size())) {
    return p[static_cast<std::size_t>(rod_index) % p.size()];
  }
  // Many rods: a smooth ramp through an ordered subset of the palette. Yellow is left out:
  // thin fibres of it vanish against the default light background.
  static const std::vector<Color> ramp = {
      color_from_rgb8(0x00, 0x72, 0xb2),  // blue
      color_from_rgb8(0x56, 0xb4, 0xe9),  // sky blue
      color_from_rgb8(0x00, 0x9e, 0x73),  // bluish green
      color_from_rgb8(0xe6, 0x9f, 0x00),  // orange
      color_from_rgb8(0xd5, 0x5e, 0x00),  // vermilion
  };
  const double u = static_cast<double>(rod_index) / static_cast<double>(rod_count - 1) *
                   static_cast<double>(ramp.size() - 1);
  const int i = std::min(static_cast<int>(std::floor(u)), static_cast<int>(ramp.size()) - 2);
  return mix(ramp[static_cast<std::size_t>(i)], ramp[static_cast<std::size_t>(i) + 1], u - i);
}

}  // namespace bristle

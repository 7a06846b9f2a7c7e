#pragma once
/// What a rendered image looks like apart from the camera: size, colours, line widths,
/// lighting. Defaults give a 960x540 image on a light background (docs/rendering.md).

#include <vector>

#include "bristle/math/types.hpp"
#include "bristle/render/color.hpp"

namespace bristle {

/// Hair lighting (Kajiya & Kay 1989) with one key light and one fill light, both given in the
/// camera frame (x right, y up, z towards the viewer) so the look does not depend on how the
/// scene is oriented. See shading.hpp for the formulas.
struct Lighting {
  Vec3 key_direction = Vec3(-0.45, 0.45, 0.75);  ///< towards the key light, camera frame
  Vec3 fill_direction = Vec3(0.7, -0.2, 0.6);    ///< towards the fill light, camera frame
  // The weights add up to about 1 where the key light meets a fibre broadside, so a lit
  // fibre shows its own colour rather than washing out to white on a light background.
  double ambient = 0.35;        ///< k_a, fraction of the base colour always present
  double diffuse = 0.55;        ///< k_d, key light diffuse weight
  double fill = 0.15;           ///< fill light diffuse weight
  double specular = 0.30;       ///< k_s, weight of the (white) highlight
  double shininess = 24.0;      ///< p, the highlight's exponent
};

struct RenderOptions {
  int width = 960;   ///< [px]
  int height = 540;  ///< [px]
  Color background = color_from_rgb8(0xf5, 0xf3, 0xef);
  /// Rods are drawn at their projected diameter but never thinner than this [px], so thin
  /// bristles stay visible.
  double min_line_width = 1.25;
  /// Rods at least this wide [px] are drawn as shaded tubes (light across the width);
  /// thinner ones as flat strokes of the Kajiya-Kay colour.
  double tube_shading_width = 3.0;
  /// Draw "t = 1.234 s" in the top-left corner.
  bool time_stamp = true;
  /// Per-rod colours, cycled; empty: the default palette (color.hpp rod_color).
  std::vector<Color> palette;
  /// Colour of the colliders.
  Color collider_color = color_from_rgb8(0x9a, 0xa3, 0xad);
  Lighting lighting;
};

}  // namespace bristle

#pragma once
/// What a rendered image looks like apart from the camera: size, colours, sampling,
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
  /// Ambient light a collider keeps where rods crowd it: 1 - contact_shadow * occlusion, the
  /// occlusion from occlusion.hpp. 0 turns the contact shadow off.
  double contact_shadow = 0.85;
};

struct RenderOptions {
  int width = 960;   ///< [px]
  int height = 540;  ///< [px]
  Color background = color_from_rgb8(0xf5, 0xf3, 0xef);
  /// Rods are traced at their true radius. A positive value widens a rod wherever its
  /// projected diameter is below this [px] (a thicker tube, traced like any other); 0, the
  /// default, draws every rod as thick as it is, sub-pixel fibres by their pixel coverage.
  double min_line_width = 0.0;
  /// Samples per pixel along each axis where a rod may be seen, and on the edges of colliders
  /// and shadows: 2 gives four samples per pixel (a rotated grid); elsewhere one sample.
  int supersampling = 2;
  /// Draw "t = 1.234 s" in a band along the top of the image, outside the picture.
  bool time_stamp = true;
  /// Per-rod colours, cycled; empty: the default palette (color.hpp rod_color).
  std::vector<Color> palette;
  /// Colour of the colliders.
  Color collider_color = color_from_rgb8(0x9a, 0xa3, 0xad);
  /// Colours of the brush drawn at a handle that carries rods: the ferrule holding the
  /// bristles and the wooden handle above it.
  Color ferrule_color = color_from_rgb8(0xb4, 0xb8, 0xbe);
  Color handle_color = color_from_rgb8(0x8a, 0x5a, 0x36);
  Lighting lighting;
};

}  // namespace bristle

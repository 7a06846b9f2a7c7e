#pragma once
/// Hair lighting for rods drawn as thin fibres: Kajiya & Kay, "Rendering fur with three
/// dimensional textures", SIGGRAPH 1989 (Computer Graphics 23(3), 271-280), section 4.
///
/// A fibre has no single normal, only a tangent t. Integrating Lambert's law over the lit half
/// of a thin cylinder gives a diffuse term proportional to the sine of the angle between the
/// tangent and the light:
///     diffuse = sin(t, l) = sqrt(1 - (t.l)^2)
/// Light reflected specularly off a cylinder leaves on a cone around t with the same opening
/// angle as the incoming light, mirrored: a reflected direction r has t.r = -(t.l). The
/// specular term is the cosine of the angle between the eye direction v and that cone, raised
/// to a shininess p:
///     cos(phi) = sin(t, l) sin(t, v) - (t.l)(t.v),  specular = max(0, cos(phi))^p
/// with l and v both unit vectors pointing away from the fibre (towards light and eye). The
/// paper writes the same cone with its eye vector pointing the other way, hence its "+" sign;
/// the maximum (the eye on the cone, t.v = -(t.l)) is the same.
///
/// The fibre colour is then  base * (k_a + k_d diffuse_key + k_f diffuse_fill)
///                          + k_s specular_key * white.
/// Rods wider than a few pixels are drawn as tubes: across the visible width the surface
/// normal turns from one silhouette to the other, and tube_color blends the fibre diffuse
/// with Lambert's law on that normal (a cylinder seen from the side) and narrows the
/// highlight onto the part of the tube facing the half vector.

#include "bristle/math/types.hpp"
#include "bristle/render/color.hpp"
#include "bristle/render/render_options.hpp"

namespace bristle {

struct HairTerms {
  double diffuse = 0.0;   ///< sin(t, l), in [0, 1]
  double specular = 0.0;  ///< max(0, cos(phi))^p, in [0, 1]
};

/// The two Kajiya-Kay terms; t, l, v unit vectors (l, v pointing away from the fibre).
HairTerms kajiya_kay(const Vec3& t, const Vec3& l, const Vec3& v, double shininess);

/// Directions of the lights in the world frame for a camera frame (right, up, towards the
/// viewer = -forward).
struct WorldLights {
  Vec3 key = Vec3::UnitY();
  Vec3 fill = Vec3::UnitX();
};
WorldLights world_lights(const Lighting& lighting, const Vec3& right, const Vec3& up,
                         const Vec3& forward);

/// The colour of a fibre segment with unit tangent t seen along unit v (towards the eye).
Color hair_color(const Color& base, const Vec3& t, const Vec3& v, const WorldLights& lights,
                 const Lighting& lighting);

/// The colour of a tube at s in [-1, 1] across its visible width; `side` is the world
/// direction of s = +1 (roughly perpendicular to t and v). s = 0 is the line nearest the
/// eye; s = +-1 are the silhouettes.
Color tube_color(const Color& base, const Vec3& t, const Vec3& v, const Vec3& side, double s,
                 const WorldLights& lights, const Lighting& lighting);

/// The colour of a traced rod at a surface point with unit normal `normal` (tube_color with
/// the normal given rather than rebuilt from the screen offset). `key_visibility` in [0, 1]
/// scales the key light's diffuse and specular terms: 0 where a shadow ray to the key light
/// is blocked.
Color fibre_color(const Color& base, const Vec3& t, const Vec3& v, const Vec3& normal, const WorldLights& lights,
                  const Lighting& lighting, double key_visibility = 1.0);

/// A matte surface (colliders, the brush's handle) with unit normal n: Lambert's law for the
/// key and fill lights, the key scaled by `key_visibility`, the ambient and fill light by
/// (1 - lighting.contact_shadow * occlusion), occlusion in [0, 1] from occlusion.hpp; plus a
/// faint Blinn-Phong highlight of weight `gloss` towards the eye direction v.
Color surface_color(const Color& base, const Vec3& n, const Vec3& v, const WorldLights& lights,
                    const Lighting& lighting, double key_visibility, double occlusion, double gloss = 0.0);

/// The stripe that shows a rod's twist (docs/rendering.md): 1 where the tube's unit surface
/// normal points along the material director m1, 0 beyond kStripeHalfAngle from it, a
/// smoothstep between (from the inner angle kStripeHalfAngle / 2). Both vectors are taken
/// perpendicular to the unit tangent t first; 0 when either vanishes there.
double director_stripe(const Vec3& normal, const Vec3& director, const Vec3& t);
/// The stripe's half width as an angle about the tube's axis [rad]: 0.45 rad (26 degrees), a
/// fifteenth of the circumference either side.
constexpr double kStripeHalfAngle = 0.45;

/// Clamp each channel to [0, 1].
Color clamp01(const Color& c);

}  // namespace bristle

#include "bristle/render/shading.hpp"

#include <algorithm>
#include <cmath>

namespace bristle {

namespace {

double sine(double cosine) { return std::sqrt(std::max(0.0, 1.0 - cosine * cosine)); }

// x^p for x >= 0: by squaring when p is a whole number up to 64 (the default shininesses are),
// which is several times faster than std::pow (4% of a frame's time) and equal to it within
// a few units in the last place.
double power(double x, double p) {
  if (p >= 0.0 && p <= 64.0 && p == std::floor(p)) {
    double result = 1.0;
    for (int n = static_cast<int>(p); n > 0; n >>= 1, x *= x)
      if (n & 1) result *= x;
    return result;
  }
  return std::pow(x, p);
}

// The unit part of a perpendicular to unit t, or zero when a is (nearly) parallel to t.
Vec3 perpendicular_part(const Vec3& a, const Vec3& t) {
  const Vec3 p = a - a.dot(t) * t;
  const double n = p.norm();
  return n > 1e-9 ? Vec3(p / n) : Vec3(Vec3::Zero());
}

Color combine(const Color& base, double light, double highlight) {
  return clamp01(Color{base.r * light + highlight, base.g * light + highlight,
                       base.b * light + highlight});
}

}  // namespace

double director_stripe(const Vec3& normal, const Vec3& director, const Vec3& t) {
  const Vec3 n = normal - normal.dot(t) * t, m = director - director.dot(t) * t;
  const double nn = n.norm(), mm = m.norm();
  if (!(nn > 1e-12) || !(mm > 1e-12)) return 0.0;
  const double c = n.dot(m) / (nn * mm);
  const double outer = std::cos(kStripeHalfAngle), inner = std::cos(0.5 * kStripeHalfAngle);
  const double x = std::clamp((c - outer) / (inner - outer), 0.0, 1.0);
  return x * x * (3.0 - 2.0 * x);
}

Color clamp01(const Color& c) {
  return Color{std::clamp(c.r, 0.0, 1.0), std::clamp(c.g, 0.0, 1.0), std::clamp(c.b, 0.0, 1.0)};
}

HairTerms kajiya_kay(const Vec3& t, const Vec3& l, const Vec3& v, double shininess) {
  const double tl = t.dot(l), tv = t.dot(v);
  const double sin_tl = sine(tl), sin_tv = sine(tv);
  HairTerms h;
  h.diffuse = sin_tl;
  const double cos_phi = sin_tl * sin_tv - tl * tv;
  h.specular = cos_phi > 0.0 ? power(cos_phi, shininess) : 0.0;
  return h;
}

WorldLights world_lights(const Lighting& lighting, const Vec3& right, const Vec3& up,
                         const Vec3& forward) {
  auto to_world = [&](const Vec3& c) {
    const Vec3 w = c.x() * right + c.y() * up - c.z() * forward;
    return w.norm() > 0.0 ? Vec3(w.normalized()) : Vec3(-forward);
  };
  return WorldLights{to_world(lighting.key_direction), to_world(lighting.fill_direction)};
}

Color hair_color(const Color& base, const Vec3& t, const Vec3& v, const WorldLights& lights,
                 const Lighting& lighting) {
  const HairTerms key = kajiya_kay(t, lights.key, v, lighting.shininess);
  const double fill = sine(t.dot(lights.fill));
  const double light =
      lighting.ambient + lighting.diffuse * key.diffuse + lighting.fill * fill;
  return combine(base, light, lighting.specular * key.specular);
}

namespace {

// Tube shading at a known surface normal; c in [0, 1] is how squarely the surface faces the
// eye (1 on the line nearest the eye, 0 at the silhouettes).
Color tube_at_normal(const Color& base, const Vec3& t, const Vec3& v, const Vec3& normal, double c,
                     const WorldLights& lights, const Lighting& lighting, double key_visibility) {
  const HairTerms key = kajiya_kay(t, lights.key, v, lighting.shininess);
  const double fill_fibre = sine(t.dot(lights.fill));
  // Across the width the fibre terms are redistributed by Lambert's law on the tube's normal,
  // relative to its brightest line: the line facing the light keeps the fibre colour, the side
  // turned away from it falls to half. So a tube and a thin fibre of the same rod agree.
  auto profile = [&](const Vec3& l) {
    const Vec3 l_perp = l - l.dot(t) * t;
    const double reach = l_perp.norm();
    if (reach < 1e-9) return 1.0;
    return 0.5 + 0.5 * std::max(0.0, normal.dot(l)) / reach;
  };
  const double key_diffuse = key.diffuse * profile(lights.key) * key_visibility;
  const double fill_diffuse = fill_fibre * profile(lights.fill);
  const double edge = 0.7 + 0.3 * c;  // ambient occlusion towards the silhouettes

  // The highlight sits on the part of the tube facing the half vector.
  const Vec3 h_perp = perpendicular_part((lights.key + v).normalized(), t);
  // (cos)^8 by three squarings: std::pow took 4% of a frame's time.
  const double facing = std::max(0.0, normal.dot(h_perp));
  const double facing2 = facing * facing, facing4 = facing2 * facing2;
  const double band = h_perp.isZero() ? 1.0 : facing4 * facing4;

  const double light = lighting.ambient * edge + lighting.diffuse * key_diffuse +
                       lighting.fill * fill_diffuse;
  return combine(base, light, lighting.specular * key.specular * band * key_visibility);
}

}  // namespace

Color tube_color(const Color& base, const Vec3& t, const Vec3& v, const Vec3& side, double s,
                 const WorldLights& lights, const Lighting& lighting) {
  const Vec3 v_perp = perpendicular_part(v, t);
  if (v_perp.isZero()) return hair_color(base, t, v, lights, lighting);
  Vec3 side_perp = perpendicular_part(side - side.dot(v_perp) * v_perp, t);
  if (side_perp.isZero()) side_perp = t.cross(v_perp);
  s = std::clamp(s, -1.0, 1.0);
  const double c = std::sqrt(1.0 - s * s);
  // The surface normal of the tube at the screen offset s across its width.
  const Vec3 normal = s * side_perp + c * v_perp;
  return tube_at_normal(base, t, v, normal, c, lights, lighting, 1.0);
}

Color fibre_color(const Color& base, const Vec3& t, const Vec3& v, const Vec3& normal, const WorldLights& lights,
                  const Lighting& lighting, double key_visibility) {
  const Vec3 v_perp = perpendicular_part(v, t);
  if (v_perp.isZero()) {
    const HairTerms key = kajiya_kay(t, lights.key, v, lighting.shininess);
    const double light = lighting.ambient + lighting.diffuse * key.diffuse * key_visibility +
                         lighting.fill * sine(t.dot(lights.fill));
    return combine(base, light, lighting.specular * key.specular * key_visibility);
  }
  // The normal's part across the tube (a hit on a round joint may lean along t).
  Vec3 across = perpendicular_part(normal, t);
  if (across.isZero()) across = v_perp;
  const double c = std::clamp(across.dot(v_perp), 0.0, 1.0);
  return tube_at_normal(base, t, v, across, c, lights, lighting, key_visibility);
}

Color surface_color(const Color& base, const Vec3& n, const Vec3& v, const WorldLights& lights,
                    const Lighting& lighting, double key_visibility, double occlusion, double gloss) {
  const double open = 1.0 - lighting.contact_shadow * std::clamp(occlusion, 0.0, 1.0);
  const double key = std::max(0.0, n.dot(lights.key)) * key_visibility;
  const double fill = std::max(0.0, n.dot(lights.fill));
  // Matte surfaces get more ambient light than fibres (they are large and pale, and must not
  // fall to black where the key light grazes them).
  const double light = (lighting.ambient + 0.25) * open + lighting.diffuse * key + lighting.fill * fill * open;
  double highlight = 0.0;
  if (gloss > 0.0 && key > 0.0) {
    const Vec3 h = (lights.key + v).normalized();
    highlight = gloss * power(std::max(0.0, n.dot(h)), 4.0 * lighting.shininess) * key_visibility;
  }
  return combine(base, light, highlight);
}

}  // namespace bristle

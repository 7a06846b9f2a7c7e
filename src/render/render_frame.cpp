#include "bristle/render/render_frame.hpp"

#include <cairo.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <memory>
#include <sstream>

#include "bristle/render/render_error.hpp"
#include "bristle/render/shading.hpp"

namespace bristle {

namespace {

constexpr double kPi = 3.14159265358979323846;

// Owns a cairo image surface and its context.
struct Canvas {
  cairo_surface_t* surface = nullptr;
  cairo_t* cr = nullptr;

  Canvas(int width, int height) {
    surface = cairo_image_surface_create(CAIRO_FORMAT_RGB24, width, height);
    if (cairo_surface_status(surface) != CAIRO_STATUS_SUCCESS) {
      cairo_surface_destroy(surface);
      throw RenderError("cannot allocate an image of " + std::to_string(width) + "x" +
                        std::to_string(height) + " pixels");
    }
    cr = cairo_create(surface);
    cairo_set_antialias(cr, CAIRO_ANTIALIAS_DEFAULT);
  }
  ~Canvas() {
    cairo_destroy(cr);
    cairo_surface_destroy(surface);
  }
  Canvas(const Canvas&) = delete;
  Canvas& operator=(const Canvas&) = delete;
};

void set_color(cairo_t* cr, const Color& c, double alpha = 1.0) {
  if (alpha >= 1.0) {
    cairo_set_source_rgb(cr, c.r, c.g, c.b);
  } else {
    cairo_set_source_rgba(cr, c.r, c.g, c.b, alpha);
  }
}

Color scale(const Color& c, double k) { return clamp01(Color{c.r * k, c.g * k, c.b * k}); }

Vec2 perp(const Vec2& d) { return Vec2(-d.y(), d.x()); }

double angle_of(const Vec2& v) { return std::atan2(v.y(), v.x()); }

// ---------------------------------------------------------------------------------------------
// Primitives of the painter's algorithm.

enum class PrimKind { Segment, Sphere, Capsule, BoxFace };

struct Prim {
  double depth = 0.0;  ///< larger is farther; drawn first
  int group = 0;       ///< tie-break: colliders (0) before rods (1)
  int order = 0;       ///< tie-break within the group
  PrimKind kind = PrimKind::Segment;
  int a = 0, b = 0;    ///< rod and segment, or collider and face
};

// A rod seen by the camera: its projected vertices and the per-vertex edge offsets.
struct RodView {
  std::vector<ScreenPoint> screen;
  std::vector<bool> in_front;   ///< vertex at or beyond the near plane
  std::vector<double> half_px;  ///< half width at each vertex [px]
  std::vector<Vec2> offset;     ///< mitred offset of the left edge at interior vertices [px]
  std::vector<Vec2> dir;        ///< screen direction of each segment (unit)
  Color base;
  double radius = 0.0;
};

// Half of the drawn width of a rod of world radius r at a vertex.
double half_width(double radius, const ScreenPoint& s, double min_width) {
  return std::max(radius * s.pixels_per_meter, 0.5 * min_width);
}

RodView view_rod(const RodFrame& rod, double radius, const Color& base, const Projector& proj,
                 const RenderOptions& opt) {
  RodView v;
  v.base = base;
  v.radius = radius;
  const std::size_t n = rod.positions.size();
  v.screen.resize(n);
  v.in_front.resize(n);
  v.half_px.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    v.in_front[i] = rod.positions[i].allFinite() && proj.depth(rod.positions[i]) >= proj.near_depth();
    if (v.in_front[i]) {
      v.screen[i] = proj.project(rod.positions[i]);
      v.half_px[i] = half_width(radius, v.screen[i], opt.min_line_width);
    }
  }
  // Screen directions of the segments; a segment seen end-on borrows its neighbour's.
  v.dir.assign(n > 0 ? n - 1 : 0, Vec2(1.0, 0.0));
  std::vector<bool> known(v.dir.size(), false);
  for (std::size_t i = 0; i + 1 < n; ++i) {
    if (!v.in_front[i] || !v.in_front[i + 1]) continue;
    const Vec2 d = v.screen[i + 1].pixel - v.screen[i].pixel;
    if (d.norm() > 1e-9) {
      v.dir[i] = d.normalized();
      known[i] = true;
    }
  }
  for (std::size_t i = 1; i < v.dir.size(); ++i) {
    if (!known[i] && known[i - 1]) {
      v.dir[i] = v.dir[i - 1];
      known[i] = true;
    }
  }
  for (std::size_t i = v.dir.size(); i-- > 1;) {
    if (!known[i - 1] && known[i]) {
      v.dir[i - 1] = v.dir[i];
      known[i - 1] = true;
    }
  }
  // Mitred offsets at interior vertices, shared by the two segments that meet there.
  v.offset.assign(n, Vec2::Zero());
  for (std::size_t i = 1; i + 1 < n; ++i) {
    const Vec2 n0 = perp(v.dir[i - 1]), n1 = perp(v.dir[i]);
    const Vec2 sum = n0 + n1;
    if (sum.norm() < 1e-6) {  // folded back on itself: no common edge
      v.offset[i] = n1 * v.half_px[i];
      continue;
    }
    const Vec2 m = sum.normalized();
    const double cos_half = std::max(m.dot(n1), 0.5);  // miter limit 2
    v.offset[i] = m * (v.half_px[i] / cos_half);
  }
  return v;
}

// The fill of a tube segment: a gradient across the width from s = +1 (left edge) to -1.
cairo_pattern_t* tube_pattern(const Vec2& mid, const Vec2& normal, double half, const Color& base,
                              const Vec3& t, const Vec3& v, const Vec3& side,
                              const WorldLights& lights, const Lighting& lighting) {
  const Vec2 p0 = mid + normal * half, p1 = mid - normal * half;
  cairo_pattern_t* pat = cairo_pattern_create_linear(p0.x(), p0.y(), p1.x(), p1.y());
  constexpr int kStops = 9;
  for (int k = 0; k < kStops; ++k) {
    const double offset = static_cast<double>(k) / (kStops - 1);
    const Color c = tube_color(base, t, v, side, 1.0 - 2.0 * offset, lights, lighting);
    cairo_pattern_add_color_stop_rgb(pat, offset, c.r, c.g, c.b);
  }
  return pat;
}

// Draws one segment of a rod (or a capsule's axis) seen by the camera.
void draw_segment(cairo_t* cr, const RodView& v, std::size_t i, const Vec3& x0, const Vec3& x1,
                  const Projector& proj, const WorldLights& lights, const RenderOptions& opt) {
  const std::size_t n = v.screen.size();
  const Vec3 mid_world = 0.5 * (x0 + x1);
  Vec3 t = x1 - x0;
  t = t.norm() > 0.0 ? Vec3(t.normalized()) : proj.right();
  const Vec3 to_eye = proj.to_eye(mid_world);

  ScreenPoint s0, s1;
  double h0, h1;
  bool clipped = false;
  if (v.in_front[i] && v.in_front[i + 1]) {
    s0 = v.screen[i];
    s1 = v.screen[i + 1];
    h0 = v.half_px[i];
    h1 = v.half_px[i + 1];
  } else {
    // One end behind the near plane: clip there and draw the piece on its own.
    const double d0 = proj.depth(x0), d1 = proj.depth(x1), near = proj.near_depth() * 1.0001;
    if (d0 < near && d1 < near) return;
    const double u = (near - d0) / (d1 - d0);
    const Vec3 xc = x0 + u * (x1 - x0);
    s0 = proj.project(d0 < near ? xc : x0);
    s1 = proj.project(d1 < near ? xc : x1);
    h0 = half_width(v.radius, s0, opt.min_line_width);
    h1 = half_width(v.radius, s1, opt.min_line_width);
    clipped = true;
  }
  const Color flat = hair_color(v.base, t, to_eye, lights, opt.lighting);
  const bool tube = 2.0 * std::max(h0, h1) >= opt.tube_shading_width;

  if (!tube || clipped) {
    // A thin fibre: one stroke of the Kajiya-Kay colour, round caps hide the joints.
    cairo_move_to(cr, s0.pixel.x(), s0.pixel.y());
    cairo_line_to(cr, s1.pixel.x(), s1.pixel.y());
    cairo_set_line_width(cr, h0 + h1);
    cairo_set_line_cap(cr, CAIRO_LINE_CAP_ROUND);
    set_color(cr, flat);
    cairo_stroke(cr);
    return;
  }

  // A tube: the quad between the mitred edges at both ends, round caps at the rod's ends.
  const Vec2 d = v.dir[i];
  const Vec2 nrm = perp(d);
  const bool first = i == 0 || !v.in_front[i - 1];
  const bool last = i + 2 == n || !v.in_front[i + 2];
  constexpr double kOverlap = 0.4;  // [px] neighbouring quads overlap: no antialiasing seams
  const Vec2 o0 = first ? Vec2(nrm * h0) : v.offset[i];
  const Vec2 o1 = last ? Vec2(nrm * h1) : v.offset[i + 1];
  const Vec2 e0 = first ? Vec2::Zero() : Vec2(-d * kOverlap);
  const Vec2 e1 = last ? Vec2::Zero() : Vec2(d * kOverlap);
  const Vec2& p0 = s0.pixel;
  const Vec2& p1 = s1.pixel;
  const double a = angle_of(nrm);

  cairo_new_path(cr);
  const Vec2 l0 = p0 + o0 + e0, l1 = p1 + o1 + e1, r1 = p1 - o1 + e1, r0 = p0 - o0 + e0;
  cairo_move_to(cr, l0.x(), l0.y());
  cairo_line_to(cr, l1.x(), l1.y());
  if (last) cairo_arc_negative(cr, p1.x(), p1.y(), h1, a, a - kPi);
  cairo_line_to(cr, r1.x(), r1.y());
  cairo_line_to(cr, r0.x(), r0.y());
  if (first) cairo_arc_negative(cr, p0.x(), p0.y(), h0, a - kPi, a - 2.0 * kPi);
  cairo_close_path(cr);

  const Vec3 side = proj.screen_to_world_direction(nrm.x(), nrm.y());
  cairo_pattern_t* pat = tube_pattern(0.5 * (p0 + p1), nrm, 0.5 * (h0 + h1), v.base, t, to_eye,
                                      side, lights, opt.lighting);
  cairo_set_source(cr, pat);
  cairo_fill(cr);
  cairo_pattern_destroy(pat);
}

// ---------------------------------------------------------------------------------------------
// Colliders.

// Keeps the part of a convex world polygon at or beyond the near plane.
std::vector<Vec3> clip_near(const std::vector<Vec3>& poly, const Projector& proj) {
  const double near = proj.near_depth() * 1.0001;
  if (!std::isfinite(near)) return poly;
  std::vector<Vec3> out;
  for (std::size_t i = 0; i < poly.size(); ++i) {
    const Vec3& a = poly[i];
    const Vec3& b = poly[(i + 1) % poly.size()];
    const double da = proj.depth(a), db = proj.depth(b);
    if (da >= near) out.push_back(a);
    if ((da >= near) != (db >= near)) out.push_back(a + (near - da) / (db - da) * (b - a));
  }
  return out;
}

void path_polygon(cairo_t* cr, const std::vector<Vec3>& world, const Projector& proj) {
  cairo_new_path(cr);
  for (std::size_t i = 0; i < world.size(); ++i) {
    const Vec2 p = proj.project(world[i]).pixel;
    if (i == 0) {
      cairo_move_to(cr, p.x(), p.y());
    } else {
      cairo_line_to(cr, p.x(), p.y());
    }
  }
  cairo_close_path(cr);
}

// Matte shading of a collider surface: brighter ambient than the rods, so obstacles stay
// light and the rods read against them.
double lambert(const Vec3& normal, const WorldLights& lights, const Lighting& lighting) {
  return 0.5 + 0.5 * (lighting.ambient + lighting.diffuse * std::max(0.0, normal.dot(lights.key)) +
                      lighting.fill * std::max(0.0, normal.dot(lights.fill)));
}

// A "nice" grid spacing near `x`: 1, 2 or 5 times a power of ten.
double nice_step(double x) {
  const double p = std::pow(10.0, std::floor(std::log10(x)));
  const double m = x / p;
  return (m < 1.5 ? 1.0 : m < 3.5 ? 2.0 : m < 7.5 ? 5.0 : 10.0) * p;
}

// The half size of the region a plane is drawn over: the visible window and some.
double view_extent(const Projector& proj) {
  const Camera& cam = proj.camera();
  const double aspect = static_cast<double>(proj.width()) / proj.height();
  if (cam.type == ProjectionType::Orthographic) {
    return 0.75 * cam.ortho_height * std::max(aspect, 1.0);
  }
  const double dist = (cam.target - cam.position).norm();
  return 1.5 * dist * std::tan(cam.fov_deg * kPi / 360.0) * std::max(aspect, 1.0);
}

void draw_plane(cairo_t* cr, const Collider& c, const Projector& proj, const WorldLights& lights,
                const RenderOptions& opt) {
  const Vec3 n = c.normal.norm() > 0.0 ? Vec3(c.normal.normalized()) : Vec3(Vec3::UnitY());
  const Vec3& target = proj.camera().target;
  const Vec3 center = target - (target - c.point).dot(n) * n;
  const double extent = view_extent(proj);
  const Color fill_color = mix(opt.background, opt.collider_color, 0.4);
  const Color line_color = scale(opt.collider_color, 0.6);

  if (std::abs(n.dot(proj.forward())) < 0.05) {
    // Seen edge-on (every 2D scene): the solid half plane, shaded, and its boundary line.
    const Vec3 along = n.cross(proj.forward()).normalized();
    const double big = 4.0 * extent;
    std::vector<Vec3> poly = {center - big * along, center + big * along,
                              center + big * along - big * n, center - big * along - big * n};
    poly = clip_near(poly, proj);
    if (poly.size() < 3) return;
    path_polygon(cr, poly, proj);
    set_color(cr, fill_color);
    cairo_fill(cr);
    const Vec2 a = proj.project(center - big * along).pixel;
    const Vec2 b = proj.project(center + big * along).pixel;
    cairo_move_to(cr, a.x(), a.y());
    cairo_line_to(cr, b.x(), b.y());
    cairo_set_line_width(cr, 1.5);
    set_color(cr, line_color);
    cairo_stroke(cr);
    return;
  }

  // A shaded square around the camera target, with a grid on it.
  Vec3 e1 = Vec3::UnitX();
  for (const Vec3& axis : {Vec3(Vec3::UnitX()), Vec3(Vec3::UnitZ()), Vec3(Vec3::UnitY())}) {
    if (std::abs(axis.dot(n)) < 0.9) {
      e1 = axis;
      break;
    }
  }
  e1 = (e1 - e1.dot(n) * n).normalized();
  const Vec3 e2 = n.cross(e1);
  const double step = nice_step(extent / 6.0);
  const double half = std::ceil(extent / step) * step;
  // Snap the grid to multiples of its step in the plane's coordinates, so it does not slide.
  const double u0 = std::round((center - c.point).dot(e1) / step) * step;
  const double v0 = std::round((center - c.point).dot(e2) / step) * step;
  const Vec3 origin = c.point + u0 * e1 + v0 * e2;

  const bool seen_from_above = n.dot(proj.to_eye(origin)) > 0.0;
  const double shade = seen_from_above ? std::min(1.0, lambert(n, lights, opt.lighting)) : 0.5;
  std::vector<Vec3> quad = {origin - half * e1 - half * e2, origin + half * e1 - half * e2,
                            origin + half * e1 + half * e2, origin - half * e1 + half * e2};
  quad = clip_near(quad, proj);
  if (quad.size() >= 3) {
    path_polygon(cr, quad, proj);
    set_color(cr, mix(opt.background, scale(fill_color, shade), 0.8));
    cairo_fill(cr);
  }
  cairo_set_line_width(cr, 1.0);
  set_color(cr, line_color, 0.3);
  const int lines = static_cast<int>(std::lround(half / step));
  for (int k = -lines; k <= lines; ++k) {
    for (int dir = 0; dir < 2; ++dir) {
      const Vec3 a_axis = dir == 0 ? e1 : e2, b_axis = dir == 0 ? e2 : e1;
      std::vector<Vec3> seg = {origin + k * step * a_axis - half * b_axis,
                               origin + k * step * a_axis + half * b_axis};
      const double near = proj.near_depth() * 1.0001;
      const double d0 = proj.depth(seg[0]), d1 = proj.depth(seg[1]);
      if (d0 < near && d1 < near) continue;
      if (d0 < near) seg[0] += (near - d0) / (d1 - d0) * (seg[1] - seg[0]);
      if (d1 < near) seg[1] += (near - d1) / (d0 - d1) * (seg[0] - seg[1]);
      const Vec2 a = proj.project(seg[0]).pixel, b = proj.project(seg[1]).pixel;
      cairo_move_to(cr, a.x(), a.y());
      cairo_line_to(cr, b.x(), b.y());
    }
  }
  cairo_stroke(cr);
}

void draw_sphere(cairo_t* cr, const Collider& c, const Projector& proj, const WorldLights& lights,
                 const RenderOptions& opt) {
  if (proj.depth(c.center) - c.radius < proj.near_depth()) return;
  const ScreenPoint s = proj.project(c.center);
  const double r = c.radius * s.pixels_per_meter;
  if (!(r > 0.0)) return;
  // The highlight moves towards the key light as seen on the screen.
  const Vec2 light_dir(lights.key.dot(proj.right()), -lights.key.dot(proj.up()));
  const Vec2 h = s.pixel + 0.4 * r * light_dir;
  cairo_pattern_t* pat = cairo_pattern_create_radial(h.x(), h.y(), 0.0, s.pixel.x(), s.pixel.y(), r);
  const Color base = opt.collider_color;
  const Color lit = clamp01(Color{base.r * 1.15 + 0.12, base.g * 1.15 + 0.12, base.b * 1.15 + 0.12});
  cairo_pattern_add_color_stop_rgb(pat, 0.0, lit.r, lit.g, lit.b);
  const Color mid = scale(base, 0.95);
  cairo_pattern_add_color_stop_rgb(pat, 0.55, mid.r, mid.g, mid.b);
  const Color dark = scale(base, 0.5);
  cairo_pattern_add_color_stop_rgb(pat, 1.0, dark.r, dark.g, dark.b);
  cairo_new_path(cr);
  cairo_arc(cr, s.pixel.x(), s.pixel.y(), r, 0.0, 2.0 * kPi);
  cairo_set_source(cr, pat);
  cairo_fill(cr);
  cairo_pattern_destroy(pat);
}

void draw_capsule(cairo_t* cr, const Collider& c, const Projector& proj, const WorldLights& lights,
                  const RenderOptions& opt) {
  RodFrame axis;
  axis.positions = {c.a, c.b};
  RenderOptions o = opt;
  o.min_line_width = 1.0;
  o.tube_shading_width = 0.0;  // always a shaded tube
  // A capsule is matte: no fibre highlight.
  o.lighting.specular = 0.0;
  const RodView v = view_rod(axis, c.radius, opt.collider_color, proj, o);
  draw_segment(cr, v, 0, c.a, c.b, proj, lights, o);
}

// Face f of a box: axis f / 2, side +1 (f even) or -1. Corners in counter-clockwise order
// seen from outside.
std::array<Vec3, 4> box_face(const Collider& c, int f, Vec3* normal) {
  const int k = f / 2;
  const double sgn = (f % 2 == 0) ? 1.0 : -1.0;
  const Vec3 nk = c.rotation.col(k);
  const Vec3 u = c.rotation.col((k + 1) % 3) * c.half_extents[(k + 1) % 3];
  const Vec3 w = c.rotation.col((k + 2) % 3) * c.half_extents[(k + 2) % 3];
  const Vec3 fc = c.center + sgn * c.half_extents[k] * nk;
  *normal = sgn * nk;
  return {fc - u - w, fc + u - w, fc + u + w, fc - u + w};
}

void draw_box_face(cairo_t* cr, const Collider& c, int f, const Projector& proj,
                   const WorldLights& lights, const RenderOptions& opt) {
  Vec3 normal;
  const std::array<Vec3, 4> corners = box_face(c, f, &normal);
  std::vector<Vec3> poly = clip_near({corners.begin(), corners.end()}, proj);
  if (poly.size() < 3) return;
  path_polygon(cr, poly, proj);
  set_color(cr, scale(opt.collider_color, std::min(1.05, lambert(normal, lights, opt.lighting))));
  cairo_fill_preserve(cr);
  cairo_set_line_width(cr, 1.0);
  cairo_set_line_join(cr, CAIRO_LINE_JOIN_ROUND);
  set_color(cr, scale(opt.collider_color, 0.55));
  cairo_stroke(cr);
}

bool box_face_visible(const Collider& c, int f, const Projector& proj, double* depth) {
  Vec3 normal;
  const std::array<Vec3, 4> corners = box_face(c, f, &normal);
  const Vec3 center = 0.25 * (corners[0] + corners[1] + corners[2] + corners[3]);
  *depth = proj.depth(center);
  return normal.dot(proj.to_eye(center)) > 1e-9;
}

void draw_time_stamp(cairo_t* cr, const std::string& text, const RenderOptions& opt) {
  const double size = std::max(11.0, opt.height / 30.0);
  cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
  cairo_set_font_size(cr, size);
  cairo_font_extents_t fe;
  cairo_font_extents(cr, &fe);
  const Color& bg = opt.background;
  const double luminance = 0.2126 * bg.r + 0.7152 * bg.g + 0.0722 * bg.b;
  set_color(cr, luminance > 0.5 ? Color{0.18, 0.18, 0.2} : Color{0.9, 0.9, 0.9});
  cairo_move_to(cr, 0.6 * size, 0.6 * size + fe.ascent);
  cairo_show_text(cr, text.c_str());
}

void draw(Canvas& canvas, const Manifest& manifest, const Frame& frame,
          const std::vector<Collider>& colliders, const Camera& camera, const RenderOptions& opt) {
  if (frame.rods.size() != manifest.rods.size()) {
    throw RenderError("frame " + std::to_string(frame.index) + " has " +
                      std::to_string(frame.rods.size()) + " rods, the manifest " +
                      std::to_string(manifest.rods.size()));
  }
  cairo_t* cr = canvas.cr;
  set_color(cr, opt.background);
  cairo_paint(cr);

  const Projector proj(camera, opt.width, opt.height);
  const WorldLights lights =
      world_lights(opt.lighting, proj.right(), proj.up(), proj.forward());

  // Planes first: they are infinite and lie under everything.
  for (const Collider& c : colliders) {
    if (c.type == ColliderType::Plane) draw_plane(cr, c, proj, lights, opt);
  }

  // Everything else, depth sorted.
  std::vector<Prim> prims;
  for (std::size_t k = 0; k < colliders.size(); ++k) {
    const Collider& c = colliders[k];
    const int ki = static_cast<int>(k);
    switch (c.type) {
      case ColliderType::Plane:
        break;
      case ColliderType::Sphere:
        if (!(c.radius > 0.0)) break;  // a point: nothing to see
        prims.push_back({proj.depth(c.center), 0, ki * 8, PrimKind::Sphere, ki, 0});
        break;
      case ColliderType::Capsule:
        if (!(c.radius > 0.0)) break;  // a segment: nothing to see
        prims.push_back({proj.depth(0.5 * (c.a + c.b)), 0, ki * 8, PrimKind::Capsule, ki, 0});
        break;
      case ColliderType::Box:
        for (int f = 0; f < 6; ++f) {
          double depth;
          if (box_face_visible(c, f, proj, &depth)) {
            prims.push_back({depth, 0, ki * 8 + f, PrimKind::BoxFace, ki, f});
          }
        }
        break;
    }
  }

  const int rod_count = static_cast<int>(frame.rods.size());
  std::vector<RodView> views;
  views.reserve(frame.rods.size());
  int order = 0;
  for (int r = 0; r < rod_count; ++r) {
    const RodFrame& rod = frame.rods[static_cast<std::size_t>(r)];
    const double radius = manifest.rods[static_cast<std::size_t>(r)].radius;
    views.push_back(view_rod(rod, radius, rod_color(r, rod_count, opt.palette), proj, opt));
    for (std::size_t i = 0; i + 1 < rod.positions.size(); ++i, ++order) {
      const Vec3 mid = 0.5 * (rod.positions[i] + rod.positions[i + 1]);
      if (!mid.allFinite()) continue;
      prims.push_back({proj.depth(mid), 1, order, PrimKind::Segment, r, static_cast<int>(i)});
    }
  }
  std::sort(prims.begin(), prims.end(), [](const Prim& x, const Prim& y) {
    if (x.depth != y.depth) return x.depth > y.depth;
    if (x.group != y.group) return x.group < y.group;
    return x.order < y.order;
  });

  for (const Prim& p : prims) {
    switch (p.kind) {
      case PrimKind::Segment: {
        const RodFrame& rod = frame.rods[static_cast<std::size_t>(p.a)];
        const std::size_t i = static_cast<std::size_t>(p.b);
        draw_segment(cr, views[static_cast<std::size_t>(p.a)], i, rod.positions[i],
                     rod.positions[i + 1], proj, lights, opt);
        break;
      }
      case PrimKind::Sphere:
        draw_sphere(cr, colliders[static_cast<std::size_t>(p.a)], proj, lights, opt);
        break;
      case PrimKind::Capsule:
        draw_capsule(cr, colliders[static_cast<std::size_t>(p.a)], proj, lights, opt);
        break;
      case PrimKind::BoxFace:
        draw_box_face(cr, colliders[static_cast<std::size_t>(p.a)], p.b, proj, lights, opt);
        break;
    }
  }

  if (opt.time_stamp) draw_time_stamp(cr, time_stamp_text(frame.time, manifest.frame_dt), opt);
  cairo_surface_flush(canvas.surface);
  if (cairo_status(cr) != CAIRO_STATUS_SUCCESS) {
    throw RenderError(std::string("cairo failed: ") + cairo_status_to_string(cairo_status(cr)));
  }
}

void check_options(const RenderOptions& opt) {
  if (opt.width <= 0 || opt.height <= 0 || opt.width > 32767 || opt.height > 32767) {
    throw RenderError("image size must be between 1 and 32767 pixels, got " +
                      std::to_string(opt.width) + "x" + std::to_string(opt.height));
  }
}

}  // namespace

std::string time_stamp_text(double time, double frame_dt) {
  int decimals = 3;
  if (frame_dt > 0.0 && std::isfinite(frame_dt)) {
    decimals = std::max(3, static_cast<int>(std::ceil(-std::log10(frame_dt) - 1e-9)));
    decimals = std::min(decimals, 9);
  }
  std::ostringstream s;
  s.setf(std::ios::fixed);
  s.precision(decimals);
  s << "t = " << time << " s";
  return s.str();
}

Image render_image(const Manifest& manifest, const Frame& frame,
                   const std::vector<Collider>& colliders, const Camera& camera,
                   const RenderOptions& options) {
  check_options(options);
  Canvas canvas(options.width, options.height);
  draw(canvas, manifest, frame, colliders, camera, options);
  Image image;
  image.width = options.width;
  image.height = options.height;
  image.pixels.resize(static_cast<std::size_t>(image.width) * image.height);
  const int stride = cairo_image_surface_get_stride(canvas.surface);
  const unsigned char* data = cairo_image_surface_get_data(canvas.surface);
  for (int y = 0; y < image.height; ++y) {
    for (int x = 0; x < image.width; ++x) {
      std::uint32_t p;
      std::memcpy(&p, data + static_cast<std::ptrdiff_t>(y) * stride + 4 * x, 4);
      image.pixels[static_cast<std::size_t>(y) * image.width + x] =
          Rgb8{static_cast<std::uint8_t>((p >> 16) & 0xff), static_cast<std::uint8_t>((p >> 8) & 0xff),
               static_cast<std::uint8_t>(p & 0xff)};
    }
  }
  return image;
}

void render_frame(const Manifest& manifest, const Frame& frame,
                  const std::vector<Collider>& colliders, const Camera& camera,
                  const RenderOptions& options, const std::string& png_path) {
  check_options(options);
  Canvas canvas(options.width, options.height);
  draw(canvas, manifest, frame, colliders, camera, options);
  // Written whole: a temporary file in the same folder (the ".name.tmp" form io/ readers and
  // `bristle render --force` recognise), then renamed over the target, so an interrupted
  // render never leaves a truncated PNG behind.
  const std::filesystem::path target(png_path);
  const std::filesystem::path temporary =
      target.parent_path() / ("." + target.filename().string() + ".tmp");
  const cairo_status_t status = cairo_surface_write_to_png(canvas.surface, temporary.c_str());
  std::error_code error;
  if (status != CAIRO_STATUS_SUCCESS) {
    std::filesystem::remove(temporary, error);
    throw RenderError("cannot write PNG '" + png_path + "': " + cairo_status_to_string(status));
  }
  std::filesystem::rename(temporary, target, error);
  if (error) {
    std::error_code ignored;
    std::filesystem::remove(temporary, ignored);
    throw RenderError("cannot write PNG '" + png_path + "': " + error.message());
  }
}

}  // namespace bristle

#include "bristle/render/render_frame.hpp"

#include <cairo.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <filesystem>
#include <sstream>

#include "bristle/io/frame_directors.hpp"
#include "bristle/render/ray_scene.hpp"
#include "bristle/render/render_error.hpp"
#include "bristle/render/shading.hpp"

namespace bristle {

namespace {

constexpr double kPi = 3.14159265358979323846;

// Owns a cairo image surface.
struct Canvas {
  cairo_surface_t* surface = nullptr;

  Canvas(int width, int height) {
    surface = cairo_image_surface_create(CAIRO_FORMAT_RGB24, width, height);
    if (cairo_surface_status(surface) != CAIRO_STATUS_SUCCESS) {
      cairo_surface_destroy(surface);
      throw RenderError("cannot allocate an image of " + std::to_string(width) + "x" +
                        std::to_string(height) + " pixels");
    }
  }
  ~Canvas() { cairo_surface_destroy(surface); }
  Canvas(const Canvas&) = delete;
  Canvas& operator=(const Canvas&) = delete;
};

std::uint8_t to_byte(double x) { return static_cast<std::uint8_t>(std::lround(std::clamp(x, 0.0, 1.0) * 255.0)); }

Rgb8 to_rgb8(const Color& c) { return Rgb8{to_byte(c.r), to_byte(c.g), to_byte(c.b)}; }

Color scale(const Color& c, double k) { return clamp01(Color{c.r * k, c.g * k, c.b * k}); }

// A "nice" grid spacing near `x`: 1, 2 or 5 times a power of ten.
double nice_step(double x) {
  const double p = std::pow(10.0, std::floor(std::log10(x)));
  const double m = x / p;
  return (m < 1.5 ? 1.0 : m < 3.5 ? 2.0 : m < 7.5 ? 5.0 : 10.0) * p;
}

// The half size of the region around the target the camera sees [m] (the larger side).
double view_extent(const Projector& proj) {
  const Camera& cam = proj.camera();
  const double aspect = static_cast<double>(proj.width()) / proj.height();
  if (cam.type == ProjectionType::Orthographic) return 0.5 * cam.ortho_height * std::max(aspect, 1.0);
  const double dist = (cam.target - cam.position).norm();
  return dist * std::tan(cam.fov_deg * kPi / 360.0) * std::max(aspect, 1.0);
}

// Two unit vectors spanning the plane with unit normal n (fixed choice, so grids do not turn).
void plane_axes(const Vec3& n, Vec3& e1, Vec3& e2) {
  e1 = Vec3::UnitX();
  for (const Vec3& axis : {Vec3(Vec3::UnitX()), Vec3(Vec3::UnitZ()), Vec3(Vec3::UnitY())}) {
    if (std::abs(axis.dot(n)) < 0.9) {
      e1 = axis;
      break;
    }
  }
  e1 = (e1 - e1.dot(n) * n).normalized();
  e2 = n.cross(e1);
}

// A box's 8 corners and 12 outward triangles.
void box_mesh(const Vec3& center, const Vec3& half, const Mat3& rotation, std::vector<Vec3>& v,
              std::vector<std::array<int, 3>>& t) {
  v.clear();
  for (int c = 0; c < 8; ++c) {
    const Vec3 local((c & 1) ? half.x() : -half.x(), (c & 2) ? half.y() : -half.y(), (c & 4) ? half.z() : -half.z());
    v.push_back(center + rotation * local);
  }
  t = {{0, 2, 1}, {1, 2, 3}, {4, 5, 6}, {5, 7, 6}, {0, 1, 4}, {1, 5, 4},
       {2, 6, 3}, {3, 6, 7}, {0, 4, 2}, {2, 4, 6}, {1, 3, 5}, {3, 7, 5}};
}

// A plane collider as the renderer sees it: where its drawn square lies and its grid.
struct PlaneDraw {
  Vec3 origin, e1, e2;
  double step = 0.0;
  bool edge_on = false;  // drawn as a slab face (2D scenes)
};

// A rod segment as the coverage rays see it: its true tube [m], and its neighbours along the
// rod (indices into FrameScene::segments; -1 at the rod's ends or beside a left-out segment).
// Also what the candidate test of trace_ray reuses for every ray: e = b - a, |e|^2, rb - ra,
// and the depths of a and along e.
struct RodSegment {
  Vec3 a, b;
  double ra = 0.0, rb = 0.0;
  int rod = 0;
  int before = -1, after = -1;
  Vec3 e = Vec3::Zero();
  double e2 = 0.0, dr = 0.0, depth_a = 0.0, depth_e = 0.0;
  // A rod with twist: its material director m1 at a and at b (frame_directors.hpp); zero
  // for a rod without twist, which has no stripe.
  Vec3 director_a = Vec3::Zero(), director_b = Vec3::Zero();
};

// The columns of one row of the view a rod segment's coverage may reach: [x0, x1] where a
// sample anywhere in the pixel may meet it, [c0, c1] (inside, possibly empty) where the ray
// through the pixel's centre may.
struct RowSpan {
  int x0 = 0, x1 = -1, c0 = 0, c1 = -1;
  int seg = 0;
};

// Every row's spans, sorted by x0: row y's are spans[row_start[y] .. row_start[y + 1]).
struct SpanTable {
  std::vector<std::size_t> row_start;
  std::vector<RowSpan> spans;
};

// Everything a sample needs.
struct FrameScene {
  explicit FrameScene(const Vec3& origin, double scale) : rays(origin, scale) {}
  RayScene rays;
  std::vector<RodSegment> segments;  // the rods' segments
  SpanTable spans;                   // where each may be seen
  std::vector<Color> rod_colors;
  std::vector<Collider> colliders;
  std::vector<PlaneDraw> planes;  // per collider (used for planes)
  std::vector<BrushPart> parts;
  bool has_solids = false;  // colliders other than capsules: traced outside the rod mask
  double bias = 0.0;        // shadow rays start this far off the surface [m]
};

// Half a pixel's width in world units at p, for widening rods to min_line_width.
std::vector<double> widened_radii(const std::vector<Vec3>& points, double radius, const Projector& proj,
                                  const RenderOptions& opt) {
  std::vector<double> radii(points.size(), radius);
  if (opt.min_line_width > 0.0) {
    for (std::size_t i = 0; i < points.size(); ++i)
      radii[i] = std::max(radius, 0.5 * opt.min_line_width * proj.pixel_size_at(proj.depth(points[i])));
  }
  return radii;
}

void add_colliders(FrameScene& fs, const Projector& proj) {
  const double extent = view_extent(proj);
  fs.planes.resize(fs.colliders.size());
  for (std::size_t k = 0; k < fs.colliders.size(); ++k) {
    const Collider& c = fs.colliders[k];
    const int ki = static_cast<int>(k);
    switch (c.type) {
      case ColliderType::Sphere:
        if (c.radius > 0.0) {
          fs.rays.add_sphere(ki, c.center, c.radius);
          fs.has_solids = true;
        }
        break;
      case ColliderType::Capsule:
        if (c.radius > 0.0) fs.rays.add_tube(SurfaceKind::Collider, ki, {c.a, c.b}, {c.radius, c.radius}, false);
        break;
      case ColliderType::Box: {
        std::vector<Vec3> v;
        std::vector<std::array<int, 3>> t;
        box_mesh(c.center, c.half_extents, c.rotation, v, t);
        fs.rays.add_triangles(ki, v, t);
        fs.has_solids = true;
        break;
      }
      case ColliderType::Plane: {
        const Vec3 n = c.normal.norm() > 0.0 ? Vec3(c.normal.normalized()) : Vec3(Vec3::UnitY());
        const Vec3& target = proj.camera().target;
        const Vec3 center = target - (target - c.point).dot(n) * n;
        PlaneDraw& pd = fs.planes[k];
        pd.edge_on = std::abs(n.dot(proj.forward())) < 0.05;
        if (pd.edge_on) {
          // Seen edge-on (every 2D scene): the solid half plane, as the face of a slab turned to
          // the eye at the depth of the target.
          const Vec3 along = n.cross(proj.forward()).normalized();
          const double big = 4.0 * extent;
          Mat3 rot;
          rot.col(0) = along;
          rot.col(1) = n;
          rot.col(2) = along.cross(n);
          std::vector<Vec3> v;
          std::vector<std::array<int, 3>> t;
          box_mesh(center - big * n, Vec3(big, big, big), rot, v, t);
          // Move the slab so its face towards the eye passes through the target.
          const double front = proj.depth(target) - std::min({proj.depth(v[0]), proj.depth(v[7]), proj.depth(v[1]),
                                                              proj.depth(v[6])});
          for (Vec3& p : v) p += front * proj.forward();
          fs.rays.add_triangles(ki, v, t);
        } else {
          // A square around the view's centre, three times the view across: it reaches past
          // the picture's edges except towards a horizon.
          plane_axes(n, pd.e1, pd.e2);
          pd.step = nice_step(extent / 3.0);
          const double half = 3.0 * extent;
          const double u0 = std::round((center - c.point).dot(pd.e1) / pd.step) * pd.step;
          const double v0 = std::round((center - c.point).dot(pd.e2) / pd.step) * pd.step;
          pd.origin = c.point + u0 * pd.e1 + v0 * pd.e2;
          const std::vector<Vec3> quad = {pd.origin - half * pd.e1 - half * pd.e2, pd.origin + half * pd.e1 - half * pd.e2,
                                          pd.origin + half * pd.e1 + half * pd.e2, pd.origin - half * pd.e1 + half * pd.e2};
          fs.rays.add_triangles(ki, quad, {{0, 1, 2}, {0, 2, 3}});
        }
        fs.has_solids = true;
        break;
      }
    }
  }
}

// The pixels of row y (centre py) whose centres may lie within `reach` of the screen segment
// [a, b]: the capsule around it meets the row's line in one interval (it is convex), the
// union of what its two end discs and its straight band cut from the line. Returns the
// pixel columns [x0, x1] (x0 > x1 when none), grown by a hair so a centre on the boundary is
// never lost to rounding: callers test each pixel exactly.
void capsule_row(const Vec2& a, const Vec2& b, double reach, double py, int w, int& x0, int& x1) {
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (const Vec2* c : {&a, &b}) {
    const double dy = py - c->y();
    if (std::abs(dy) <= reach) {
      const double half = std::sqrt(reach * reach - dy * dy);
      lo = std::min(lo, c->x() - half);
      hi = std::max(hi, c->x() + half);
    }
  }
  const Vec2 d = b - a;
  const double len2 = d.squaredNorm();
  if (len2 > 0.0) {
    // The band: 0 <= (p - a).d <= |d|^2 and |(p - a) x d| <= reach |d|, each linear in x.
    double blo = -std::numeric_limits<double>::infinity(), bhi = -blo;
    bool empty = false;
    const auto limit = [&](double k, double c_lo, double c_hi) {  // k (x - a.x) in [c_lo, c_hi]
      if (k == 0.0) {
        if (!(c_lo <= 0.0 && 0.0 <= c_hi)) empty = true;
        return;
      }
      const double u = a.x() + c_lo / k, v = a.x() + c_hi / k;
      blo = std::max(blo, std::min(u, v));
      bhi = std::min(bhi, std::max(u, v));
    };
    const double ry = py - a.y();
    limit(d.x(), -ry * d.y(), len2 - ry * d.y());
    const double band = reach * std::sqrt(len2);
    limit(d.y(), ry * d.x() - band, ry * d.x() + band);
    if (!empty && blo <= bhi) {
      lo = std::min(lo, blo);
      hi = std::max(hi, bhi);
    }
  }
  if (!(lo <= hi)) {
    x0 = 0;
    x1 = -1;
    return;
  }
  const double slack = 1e-6 * (1.0 + std::abs(lo) + std::abs(hi));
  const double first = std::max(0.0, std::ceil(lo - slack - 0.5));
  const double last = std::min(w - 1.0, std::floor(hi + slack - 0.5));
  if (!(first <= last)) {  // also keeps far-off columns out of the int conversion
    x0 = 0;
    x1 = -1;
    return;
  }
  x0 = static_cast<int>(first);
  x1 = static_cast<int>(last);
}

// A tube segment [a, b] (radii ra, rb [m]) as the mask sees it on the screen: its projected
// axis, and the projected radius grown by the perspective stretch of a sphere's outline off
// the axis (1 + tan^2 of the angle from the view axis, bounding the ellipse's long axis) and
// 2%. `ok` is false when the segment lies behind the eye or does not project to finite pixels.
struct ScreenSegment {
  Vec2 a = Vec2::Zero(), b = Vec2::Zero();
  double half = 0.0;
  bool ok = false;
};

ScreenSegment screen_segment(const Projector& proj, Vec3 a, Vec3 b, double ra, double rb) {
  ScreenSegment out;
  const int w = proj.width(), h = proj.height(), top = proj.top();
  const double near = proj.near_depth() * 1.0001;
  if (!a.allFinite() || !b.allFinite()) return out;
  const double da = proj.depth(a), db = proj.depth(b);
  if (da < near && db < near) return out;
  if (da < near) a += (near - da) / (db - da) * (b - a);
  if (db < near) b += (near - db) / (da - db) * (a - b);
  const ScreenPoint sa = proj.project(a), sb = proj.project(b);
  double stretch = 1.0;
  if (proj.camera().type == ProjectionType::Perspective) {
    const Vec2 centre(0.5 * w, top + 0.5 * h);
    const double f = 0.5 * h / std::tan(proj.camera().fov_deg * kPi / 360.0);
    const double off = std::max((sa.pixel - centre).norm(), (sb.pixel - centre).norm()) / f;
    stretch = 1.0 + std::min(off * off, 100.0);
  }
  out.half = stretch * std::max(ra * sa.pixels_per_meter, rb * sb.pixels_per_meter) * 1.02;
  out.a = sa.pixel;
  out.b = sb.pixel;
  out.ok = std::isfinite(out.half) && sa.pixel.allFinite() && sb.pixel.allFinite();
  return out;
}

// Calls visit(x, y, d2) for every pixel of the view whose centre lies within `reach` of the
// screen segment [a, b] (image coordinates), d2 its squared distance [px^2]. Row by row over
// the capsule's exact span, rather than every pixel of its bounding box (a long diagonal
// segment's box is mostly empty).
template <typename Visit>
void for_each_capsule_pixel(const Projector& proj, const Vec2& a, const Vec2& b, double reach, Visit&& visit) {
  const int w = proj.width(), h = proj.height(), top = proj.top();
  if (!std::isfinite(reach)) return;
  const double y0 = std::max(0.0, std::floor(std::min(a.y(), b.y()) - top - reach));
  const double y1 = std::min(h - 1.0, std::ceil(std::max(a.y(), b.y()) - top + reach));
  if (y0 > y1) return;
  const Vec2 d = b - a;
  const double len2 = d.squaredNorm();
  for (int y = static_cast<int>(y0); y <= static_cast<int>(y1); ++y) {
    const double py = y + top + 0.5;
    int x0 = 0, x1 = -1;
    capsule_row(a, b, reach, py, w, x0, x1);
    for (int x = x0; x <= x1; ++x) {
      const Vec2 p(x + 0.5, py);
      const double u = len2 > 0.0 ? std::clamp((p - a).dot(d) / len2, 0.0, 1.0) : 0.0;
      const double d2 = (a + u * d - p).squaredNorm();
      if (d2 <= reach * reach) visit(x, y, d2);
    }
  }
}

// The mask of pixels a tube may cover, marked `level` unless higher already: its projected
// segments (screen_segment) grown by the farthest sample's distance from the pixel centre
// (`pad`: 0.75 px covers the rotated grid's 0.53 and a margin).
void mark_tube(std::vector<std::uint8_t>& mask, const Projector& proj, const std::vector<Vec3>& points,
               const std::vector<double>& radii, std::uint8_t level, double pad) {
  const int w = proj.width();
  for (std::size_t i = 0; i + 1 < points.size() && i + 1 < radii.size(); ++i) {
    const ScreenSegment s = screen_segment(proj, points[i], points[i + 1], radii[i], radii[i + 1]);
    if (!s.ok) continue;
    for_each_capsule_pixel(proj, s.a, s.b, s.half + pad, [&](int x, int y, double) {
      std::uint8_t& m = mask[static_cast<std::size_t>(y) * w + x];
      m = std::max(m, level);
    });
  }
}

// What the mask asks of a pixel: nothing (0: background, or one ray when there are solids),
// one coverage ray through its centre (only rods may cover it: set while drawing, from the
// spans of list_rod_spans), or supersampling (a brush part or capsule may: their edges are
// antialiased by the samples).
constexpr std::uint8_t kCoverage = 1, kSupersampled = 2;

// The colour of one sample and what it shows (for the edge test): kind, object, shadowed.
struct Sample {
  Color color;
  std::uint32_t key = 0;
};

// How much darker the stripe of a rod with twist is at its centre (docs/rendering.md).
constexpr double kStripeDarkening = 0.55;

Sample shade_hit(const FrameScene& fs, const SurfaceHit& hit, const Vec3& direction, const Projector& proj,
                 const WorldLights& lights, const RenderOptions& opt) {
  Sample out;
  if (!hit.hit()) {
    out.color = opt.background;
    return out;
  }
  const Vec3 v = -direction;
  // The shadow ray leaves the surface a little off it (a fraction of the view's size). On a
  // tube it leaves from the side of the tube facing the light, at the same cross-section: the
  // tube's own shading already darkens its far side (shading.hpp), and a ray from there through
  // the tube itself would darken it twice, in a pattern that crawls with the sample positions.
  Vec3 from = hit.point + fs.bias * hit.normal;
  if (hit.radius > 0.0) {
    const Vec3 across = lights.key - lights.key.dot(hit.tangent) * hit.tangent;
    if (across.norm() > 1e-6) {
      const Vec3 axis = hit.point - hit.radius * hit.normal;
      from = axis + (1.05 * hit.radius + fs.bias) * across.normalized();
    }
  }
  const bool lit = !fs.rays.occluded(from, lights.key, 0.0, std::numeric_limits<double>::infinity());
  const double vis = lit ? 1.0 : 0.0;
  out.key = (static_cast<std::uint32_t>(hit.kind) << 28) | (static_cast<std::uint32_t>(hit.object & 0x7ffffff) << 1) |
            (lit ? 1u : 0u);
  switch (hit.kind) {
    case SurfaceKind::Rod: {
      Color base = fs.rod_colors[static_cast<std::size_t>(hit.object)];
      // A rod with twist: darker where the surface faces the material director m1, a stripe
      // along the m1 side of the tube. Rods without twist are shaded as they always were.
      if (hit.director != Vec3::Zero())
        base = scale(base, 1.0 - kStripeDarkening * director_stripe(hit.normal, hit.director, hit.tangent));
      out.color = fibre_color(base, hit.tangent, v, hit.normal, lights, opt.lighting, vis);
      break;
    }
    case SurfaceKind::Ferrule:
      out.color = surface_color(opt.ferrule_color, hit.normal, v, lights, opt.lighting, vis, 0.0, 0.5);
      break;
    case SurfaceKind::Handle:
      out.color = surface_color(opt.handle_color, hit.normal, v, lights, opt.lighting, vis, 0.0, 0.15);
      break;
    case SurfaceKind::Collider: {
      const std::size_t k = static_cast<std::size_t>(hit.object);
      const Collider& c = fs.colliders[k];
      const double occlusion = fs.rays.contact_occlusion(hit.point, hit.normal);
      if (c.type != ColliderType::Plane) {
        out.color = surface_color(opt.collider_color, hit.normal, v, lights, opt.lighting, vis, occlusion);
        break;
      }
      // A plane: pale (the paper), with a grid whose lines are filtered over the pixel's
      // footprint on the plane, so they stay thin and smooth towards the horizon.
      Color base = mix(opt.background, opt.collider_color, 0.45);
      const PlaneDraw& pd = fs.planes[k];
      if (!pd.edge_on && pd.step > 0.0) {
        const double footprint =
            proj.pixel_size_at(proj.depth(hit.point)) / std::max(std::abs(hit.normal.dot(v)), 0.1);
        const Vec3 rel = hit.point - pd.origin;
        double line = 0.0;
        for (const Vec3& e : {pd.e1, pd.e2}) {
          const double u = rel.dot(e) / pd.step;
          const double dist = std::abs(u - std::round(u)) * pd.step;
          line = std::max(line, std::clamp(1.0 - dist / footprint, 0.0, 1.0));
        }
        // Fade the grid where a pixel spans several cells (towards the horizon).
        line *= std::clamp(1.5 - 4.0 * footprint / pd.step, 0.0, 1.0);
        base = mix(base, scale(opt.collider_color, 0.8), 0.3 * line);
      }
      out.color = surface_color(base, hit.normal, v, lights, opt.lighting, vis, occlusion);
      break;
    }
    case SurfaceKind::None:
      break;
  }
  return out;
}

// Where the ray o + s d (unit d) passes a straight tube from a (radius ra) to b (rb): the axis
// point nearest the ray, the ray's offset from it, the radius there and the ray's s.
struct TubePass {
  Vec3 axis = Vec3::Zero(), off = Vec3::Zero(), tangent = Vec3::UnitX();
  double radius = 0.0, s = 0.0;
  double u = 0.0;  // the axis point's parameter from a (0) to b (1)
};

TubePass pass_tube(const Vec3& origin, const Vec3& dir, const Vec3& a, const Vec3& b, double ra, double rb) {
  TubePass p;
  const Vec3 e = b - a, w0 = origin - a;
  const double B = dir.dot(e), C = e.squaredNorm(), D = dir.dot(w0), E = e.dot(w0);
  const double denom = C - B * B;
  const double u = std::clamp(denom > 1e-12 * C && C > 0.0 ? (E - B * D) / denom : 0.0, 0.0, 1.0);
  p.axis = a + u * e;
  p.s = dir.dot(p.axis - origin);
  p.off = origin + p.s * dir - p.axis;
  p.radius = ra + u * (rb - ra);
  p.u = u;
  if (C > 0.0) p.tangent = e / std::sqrt(C);
  return p;
}

TubePass pass_segment(const FrameScene& fs, int seg, const CameraRay& ray) {
  const RodSegment& g = fs.segments[static_cast<std::size_t>(seg)];
  return pass_tube(ray.origin, ray.direction, g.a, g.b, g.ra, g.rb);
}

// A rod as one ray through a pixel's centre sees it (the coverage rays of the design note in
// render_frame.hpp): the share `coverage` of the pixel's width that the true tube covers, and
// the surface point and normal at the middle of the covered part. `seg` is the rod's segment
// nearest the eye among those the ray passes within their reach. Across the tube the pixel
// is a box one pixel wide at the depth of the axis, so a tube R px in radius whose axis passes
// d px from the centre covers the overlap of [-R, R] and [d - 1/2, d + 1/2]: a fibre of 0.2 px
// covers 0.2 of each pixel it crosses, a wide one 1 in its interior, and a pixel at its edge
// what lies inside. This is the hair renderers' "thin curves widened to a footprint, made
// transparent by their true share of it"; the shade is that of the true tube (Kajiya-Kay on
// its normal at that point).
SurfaceHit rod_hit(const FrameScene& fs, int seg, const CameraRay& ray, const Projector& proj, double& coverage) {
  coverage = 0.0;
  const Vec3& dir = ray.direction;
  // The segment and its neighbours (at a joint the ray may pass nearer the next one, and the
  // pixel sees the joint's round side): the one the ray passes closest to its surface.
  const RodSegment& g = fs.segments[static_cast<std::size_t>(seg)];
  TubePass best = pass_segment(fs, seg, ray);
  int best_seg = seg;
  for (const int n : {g.before, g.after}) {
    if (n < 0) continue;
    const TubePass p = pass_segment(fs, n, ray);
    if (p.off.norm() - p.radius < best.off.norm() - best.radius) {
      best = p;
      best_seg = n;
    }
  }
  const Vec3& axis = best.axis;
  const Vec3& off = best.off;
  const double r = best.radius;
  const double pixel = proj.pixel_size_at(proj.depth(axis));
  SurfaceHit out;
  if (!(r > 0.0) || !(pixel > 0.0) || !std::isfinite(pixel)) return out;
  const double R = r / pixel, d = off.norm() / pixel;
  const double lo = std::max(-R, d - 0.5), hi = std::min(R, d + 0.5);
  // The normal of the true tube at the covered part's middle: sideways by sin = m / R, the rest
  // towards the eye.
  const Vec3& t = best.tangent;
  Vec3 side = off - off.dot(t) * t;
  if (side.norm() < 1e-12 * r) side = t.cross(dir);
  Vec3 view = -dir - (-dir).dot(t) * t;
  if (side.norm() == 0.0 || view.norm() == 0.0) return out;
  side.normalize();
  view.normalize();
  const double sine = std::clamp(0.5 * (lo + hi) / R, -1.0, 1.0);
  out.kind = SurfaceKind::Rod;
  out.object = g.rod;
  out.tangent = t;
  out.normal = (sine * side + std::sqrt(1.0 - sine * sine) * view).normalized();
  out.point = axis + r * out.normal;
  out.radius = r;
  out.distance = best.s;
  // The stripe of a rod with twist (shade_hit): the director at the axis point, between the
  // segment's two vertex directors.
  const RodSegment& hit_segment = fs.segments[static_cast<std::size_t>(best_seg)];
  if (hit_segment.director_a != Vec3::Zero())
    out.director = (1.0 - best.u) * hit_segment.director_a + best.u * hit_segment.director_b;
  coverage = std::clamp(hi - lo, 0.0, 1.0);
  return out;
}

// At most this many rods are composited along one ray; the eighth is taken as opaque (in the
// demo 0.03% of the coverage rays get that far, counted over 30 frames).
constexpr int kMaxLayers = 8;

// A rod a ray passes within its coverage reach: at its segment nearest the eye, at s.
struct Layer {
  double s = 0.0;
  int rod = 0, seg = 0;
};

// The colour one ray sees, front to back. The rods come from `near` (the spans of the ray's
// pixel, RowSpan): each rod whose true tube passes within half a pixel of the ray, at its
// segment nearest the eye, is a layer; a rod that covers a share c of the pixel adds c of its
// colour and lets 1 - c through, and the ray goes on past it (a rod is counted once, so its far
// side and the next segment's cap are not counted again). The first solid surface (anything
// but rods, found by Embree), and the background, are opaque. The key (for the edge test) is
// that of the first surface. `layers` is scratch space.
Sample trace_ray(const FrameScene& fs, const CameraRay& ray, const std::vector<RowSpan>& near,
                 const Projector& proj, const WorldLights& lights, const RenderOptions& opt,
                 std::vector<Layer>& layers) {
  SurfaceHit solid;
  if (fs.rays.has_solids()) solid = fs.rays.intersect(ray.origin, ray.direction);
  const double limit = solid.hit() ? solid.distance : std::numeric_limits<double>::infinity();
  layers.clear();
  const Vec3& o = ray.origin;
  const Vec3& dir = ray.direction;
  for (const RowSpan& span : near) {
    // pass_tube's closest approach in scalars: with w = o - a and u the axis parameter, the
    // ray passes the axis point a + u e at s = u (d.e) - d.w, at a squared distance
    // |w - u e|^2 - s^2. It meets the rod when that is under (radius + half a pixel)^2.
    const RodSegment& g = fs.segments[static_cast<std::size_t>(span.seg)];
    const Vec3 w0 = o - g.a;
    const double B = dir.dot(g.e), D = dir.dot(w0), E = g.e.dot(w0);
    const double denom = g.e2 - B * B;
    const double u = std::clamp(denom > 1e-12 * g.e2 && g.e2 > 0.0 ? (E - B * D) / denom : 0.0, 0.0, 1.0);
    const double s = u * B - D;
    if (!(s > 0.0) || !(s < limit)) continue;
    const double off2 = w0.squaredNorm() - 2.0 * u * E + u * u * g.e2 - s * s;
    const double reach = g.ra + u * g.dr + 0.5 * proj.pixel_size_at(g.depth_a + u * g.depth_e);
    if (!(off2 < reach * reach)) continue;
    auto it = std::find_if(layers.begin(), layers.end(), [&](const Layer& l) { return l.rod == g.rod; });
    if (it == layers.end()) {
      layers.push_back(Layer{s, g.rod, span.seg});
    } else if (s < it->s) {
      it->s = s;
      it->seg = span.seg;
    }
  }
  std::sort(layers.begin(), layers.end(),
            [](const Layer& a, const Layer& b) { return a.s < b.s || (a.s == b.s && a.rod < b.rod); });

  Sample out;
  double r = 0.0, g = 0.0, b = 0.0, through = 1.0;
  int layer = 0;
  for (const Layer& l : layers) {
    if (layer == kMaxLayers || !(through > 0.0)) break;
    double share = 0.0;
    const SurfaceHit hit = rod_hit(fs, l.seg, ray, proj, share);
    if (!(share > 0.0)) continue;
    if (layer + 1 == kMaxLayers) share = 1.0;
    const Sample s = shade_hit(fs, hit, ray.direction, proj, lights, opt);
    if (layer == 0) out.key = s.key;
    r += through * share * s.color.r;
    g += through * share * s.color.g;
    b += through * share * s.color.b;
    through *= 1.0 - share;
    ++layer;
  }
  if (through > 0.0) {
    const Sample s = shade_hit(fs, solid, ray.direction, proj, lights, opt);  // the background when no hit
    if (layer == 0) out.key = s.key;
    r += through * s.color.r;
    g += through * s.color.g;
    b += through * s.color.b;
  }
  out.color = Color{r, g, b};
  return out;
}

// Fixed sample positions inside a pixel: a rotated grid for 2 x 2 (no two samples share a
// row or column, so near-horizontal and near-vertical edges get four distinct offsets), a
// regular n x n grid otherwise.
std::vector<Vec2> sample_offsets(int n) {
  if (n <= 1) return {Vec2(0.5, 0.5)};
  if (n == 2) return {Vec2(0.375, 0.125), Vec2(0.875, 0.375), Vec2(0.125, 0.625), Vec2(0.625, 0.875)};
  std::vector<Vec2> out;
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) out.emplace_back((i + 0.5) / n, (j + 0.5) / n);
  return out;
}

// The mean colour of a pixel's samples (each a trace_ray).
Color average(const FrameScene& fs, const Projector& proj, int x, int y, const std::vector<Vec2>& offsets,
              const std::vector<RowSpan>& near, const WorldLights& lights, const RenderOptions& opt,
              std::vector<Layer>& layers) {
  double r = 0.0, g = 0.0, b = 0.0;
  for (const Vec2& o : offsets) {
    const Color c = trace_ray(fs, proj.ray(x + o.x(), proj.top() + y + o.y()), near, proj, lights, opt, layers).color;
    r += c.r;
    g += c.g;
    b += c.b;
  }
  const double k = 1.0 / static_cast<double>(offsets.size());
  return Color{r * k, g * k, b * k};
}

// Adds the rods' segments to fs.segments and lists, row by row, the columns where each may be
// seen (fs.spans): the screen capsule of its tube grown by the coverage margin (half a pixel at
// its depth, and 1%), plus 0.1 px for the centre ray, or plus `pad` for any sample in the pixel.
// This rasterisation of a thousand segments replaces a ray per coverage layer: a pixel's rods
// are found among the spans covering it.
void list_rod_spans(FrameScene& fs, const Manifest& manifest, const Frame& frame, const Projector& proj,
                    const RenderOptions& opt, double pad) {
  const int w = proj.width(), h = proj.height(), top = proj.top();
  std::vector<std::pair<int, RowSpan>> raw;  // (row, span)
  const int rod_count = static_cast<int>(frame.rods.size());
  for (int r = 0; r < rod_count; ++r) {
    const RodFrame& rod = frame.rods[static_cast<std::size_t>(r)];
    const std::vector<double> radii =
        widened_radii(rod.positions, manifest.rods[static_cast<std::size_t>(r)].radius, proj, opt);
    fs.rays.add_occluder_tube(SurfaceKind::Rod, r, rod.positions, radii);
    const std::vector<Vec3> directors = vertex_directors(rod.positions, rod.directors);  // empty without twist
    int previous = -1;  // the rod's segment before, when kept
    for (std::size_t i = 0; i + 1 < rod.positions.size() && i + 1 < radii.size(); ++i) {
      const Vec3& a = rod.positions[i];
      const Vec3& b = rod.positions[i + 1];
      if (!a.allFinite() || !b.allFinite() || !(radii[i] >= 0.0) || !(radii[i + 1] >= 0.0) ||
          !std::isfinite(radii[i]) || !std::isfinite(radii[i + 1])) {
        previous = -1;
        continue;
      }
      const int seg = static_cast<int>(fs.segments.size());
      fs.segments.push_back(RodSegment{a, b, radii[i], radii[i + 1], r, previous, -1, b - a, (b - a).squaredNorm(),
                                       radii[i + 1] - radii[i], proj.depth(a), (b - a).dot(proj.forward())});
      if (!directors.empty()) {
        fs.segments.back().director_a = directors[i];
        fs.segments.back().director_b = directors[i + 1];
      }
      if (previous >= 0) fs.segments[static_cast<std::size_t>(previous)].after = seg;
      previous = seg;
      // The coverage margin: half a pixel at the vertex's depth and a little.
      const double ga = radii[i] + 0.505 * proj.pixel_size_at(proj.depth(a));
      const double gb = radii[i + 1] + 0.505 * proj.pixel_size_at(proj.depth(b));
      const ScreenSegment ss = screen_segment(proj, a, b, ga, gb);
      if (!ss.ok) continue;
      const double centre = ss.half + 0.1, reach = ss.half + std::max(pad, 0.1);
      const double y0 = std::max(0.0, std::floor(std::min(ss.a.y(), ss.b.y()) - top - reach));
      const double y1 = std::min(h - 1.0, std::ceil(std::max(ss.a.y(), ss.b.y()) - top + reach));
      if (!(y0 <= y1)) continue;
      for (int y = static_cast<int>(y0); y <= static_cast<int>(y1); ++y) {
        RowSpan span;
        span.seg = seg;
        capsule_row(ss.a, ss.b, reach, y + top + 0.5, w, span.x0, span.x1);
        if (span.x0 > span.x1) continue;
        capsule_row(ss.a, ss.b, centre, y + top + 0.5, w, span.c0, span.c1);
        raw.emplace_back(y, span);
      }
    }
  }
  // By row (a counting sort), then by first column.
  SpanTable& t = fs.spans;
  t.row_start.assign(static_cast<std::size_t>(h) + 1, 0);
  for (const auto& e : raw) ++t.row_start[static_cast<std::size_t>(e.first) + 1];
  for (int y = 0; y < h; ++y) t.row_start[static_cast<std::size_t>(y) + 1] += t.row_start[static_cast<std::size_t>(y)];
  t.spans.resize(raw.size());
  std::vector<std::size_t> fill(t.row_start.begin(), t.row_start.end() - 1);
  for (const auto& e : raw) t.spans[fill[static_cast<std::size_t>(e.first)]++] = e.second;
  for (int y = 0; y < h; ++y) {
    std::sort(t.spans.begin() + static_cast<std::ptrdiff_t>(t.row_start[static_cast<std::size_t>(y)]),
              t.spans.begin() + static_cast<std::ptrdiff_t>(t.row_start[static_cast<std::size_t>(y) + 1]),
              [](const RowSpan& a, const RowSpan& b) { return a.x0 < b.x0 || (a.x0 == b.x0 && a.seg < b.seg); });
  }
}

// Walks one row of the span table left to right, keeping the spans that cover the column.
class RowSweep {
 public:
  explicit RowSweep(const SpanTable& table) : table_(table) {}
  void start(int y) {
    next_ = table_.row_start[static_cast<std::size_t>(y)];
    end_ = table_.row_start[static_cast<std::size_t>(y) + 1];
    active_.clear();
  }
  // Moves to column x (never left of the last one).
  void advance(int x) {
    std::size_t k = 0;
    for (const RowSpan& s : active_)
      if (s.x1 >= x) active_[k++] = s;
    active_.resize(k);
    for (; next_ < end_ && table_.spans[next_].x0 <= x; ++next_)
      if (table_.spans[next_].x1 >= x) active_.push_back(table_.spans[next_]);
  }
  // The spans covering the column.
  const std::vector<RowSpan>& near() const { return active_; }
  // Whether a ray through the column's centre may meet a rod.
  bool centre_covered(int x) const {
    for (const RowSpan& s : active_)
      if (s.c0 <= x && x <= s.c1) return true;
    return false;
  }
  // The first column right of the current one where a span starts, when none is active.
  int next_start() const { return next_ < end_ ? table_.spans[next_].x0 : std::numeric_limits<int>::max(); }

 private:
  const SpanTable& table_;
  std::size_t next_ = 0, end_ = 0;
  std::vector<RowSpan> active_;
};

// Traces the picture (below the band) into `pixels` (W x view height, row-major).
void trace(const Manifest& manifest, const Frame& frame, const std::vector<Collider>& colliders,
           const Camera& camera, const RenderOptions& opt, const std::vector<RenderHandle>& handles,
           std::vector<Rgb8>& pixels) {
  const Projector proj = view_projector(camera, opt);
  const int w = proj.width(), h = proj.height();
  pixels.assign(static_cast<std::size_t>(w) * h, to_rgb8(opt.background));

  // The float frame: centred on the target, in units of the view's size.
  const double extent = view_extent(proj);
  FrameScene fs(camera.target, extent > 0.0 && std::isfinite(extent) ? extent : 1.0);
  fs.bias = 1e-5 * (extent > 0.0 && std::isfinite(extent) ? extent : 1.0);
  std::vector<std::uint8_t> mask(pixels.size(), 0);

  fs.parts = brush_parts(manifest, frame, handles);
  fs.colliders = colliders_at(colliders, handles, frame.time);
  const bool off_centre = !fs.parts.empty() || !fs.colliders.empty();  // some pixels may take samples off centre

  const int rod_count = static_cast<int>(frame.rods.size());
  for (int r = 0; r < rod_count; ++r) fs.rod_colors.push_back(rod_color(r, rod_count, opt.palette));
  list_rod_spans(fs, manifest, frame, proj, opt, off_centre ? 0.75 : 0.1);
  for (std::size_t i = 0; i < fs.parts.size(); ++i) {
    const BrushPart& part = fs.parts[i];
    const SurfaceKind kind = part.kind == BrushPart::Kind::Ferrule ? SurfaceKind::Ferrule : SurfaceKind::Handle;
    fs.rays.add_tube(kind, static_cast<int>(i), part.points, part.radii, false);
    mark_tube(mask, proj, part.points, part.radii, kSupersampled, 0.75);
  }
  add_colliders(fs, proj);
  for (const Collider& c : fs.colliders)
    if (c.type == ColliderType::Capsule && c.radius > 0.0) mark_tube(mask, proj, {c.a, c.b}, {c.radius, c.radius}, kSupersampled, 0.75);
  if (fs.rays.empty()) return;
  // Rods darken a collider within ten radii of their surface (occlusion.hpp: beyond that
  // they hide under a tenth of the sky). Without colliders nothing asks, and the grid that
  // finds the segments near a point is not built.
  fs.rays.commit(fs.colliders.empty() ? 0.0 : 10.0 * fs.rays.max_occluder_radius());

  const WorldLights lights = world_lights(opt.lighting, proj.right(), proj.up(), proj.forward());
  const std::vector<Vec2> many = sample_offsets(std::max(1, opt.supersampling));
  std::vector<std::uint32_t> keys(fs.has_solids ? pixels.size() : 0, 0);
  std::vector<Layer> layers;
  RowSweep sweep(fs.spans);
  for (int y = 0; y < h; ++y) {
    sweep.start(y);
    for (int x = 0; x < w; ++x) {
      sweep.advance(x);
      const std::size_t i = static_cast<std::size_t>(y) * w + x;
      if (mask[i] == kSupersampled) {
        pixels[i] = to_rgb8(average(fs, proj, x, y, many, sweep.near(), lights, opt, layers));
      } else if (sweep.centre_covered(x)) {
        mask[i] = kCoverage;
        pixels[i] = to_rgb8(trace_ray(fs, proj.ray(x + 0.5, proj.top() + y + 0.5), sweep.near(), proj, lights, opt,
                                      layers).color);
      } else if (fs.has_solids) {
        const Sample s = trace_ray(fs, proj.ray(x + 0.5, proj.top() + y + 0.5), sweep.near(), proj, lights, opt,
                                   layers);
        pixels[i] = to_rgb8(s.color);
        keys[i] = s.key;
      } else if (!off_centre && sweep.near().empty()) {
        x = std::min(w, sweep.next_start()) - 1;  // background up to the next span
      }
    }
  }
  if (!fs.has_solids || many.size() <= 1) return;
  // Edges: a single-sampled pixel whose surface or shadow differs from a neighbour's.
  for (int y = 0; y < h; ++y) {
    sweep.start(y);
    for (int x = 0; x < w; ++x) {
      const std::size_t i = static_cast<std::size_t>(y) * w + x;
      if (mask[i]) continue;
      const std::uint32_t k = keys[i];
      const bool edge = (x > 0 && !mask[i - 1] && keys[i - 1] != k) || (x + 1 < w && !mask[i + 1] && keys[i + 1] != k) ||
                        (y > 0 && !mask[i - w] && keys[i - w] != k) || (y + 1 < h && !mask[i + w] && keys[i + w] != k);
      if (!edge) continue;
      sweep.advance(x);
      pixels[i] = to_rgb8(average(fs, proj, x, y, many, sweep.near(), lights, opt, layers));
    }
  }
}

Color band_color(const RenderOptions& opt) {
  const Color& bg = opt.background;
  const double luminance = 0.2126 * bg.r + 0.7152 * bg.g + 0.0722 * bg.b;
  return luminance > 0.5 ? scale(bg, 0.93) : mix(bg, Color{1.0, 1.0, 1.0}, 0.08);
}

void draw_time_stamp(cairo_surface_t* surface, const std::string& text, const RenderOptions& opt, int band) {
  cairo_t* cr = cairo_create(surface);
  const Color bc = band_color(opt);
  cairo_set_source_rgb(cr, bc.r, bc.g, bc.b);
  cairo_rectangle(cr, 0, 0, opt.width, band);
  cairo_fill(cr);
  const double size = 0.55 * band;
  cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
  cairo_set_font_size(cr, size);
  cairo_font_extents_t fe;
  cairo_font_extents(cr, &fe);
  const Color& bg = opt.background;
  const double luminance = 0.2126 * bg.r + 0.7152 * bg.g + 0.0722 * bg.b;
  const Color ink = luminance > 0.5 ? Color{0.18, 0.18, 0.2} : Color{0.9, 0.9, 0.9};
  cairo_set_source_rgb(cr, ink.r, ink.g, ink.b);
  cairo_move_to(cr, 0.6 * size, 0.5 * band + 0.5 * (fe.ascent - fe.descent));
  cairo_show_text(cr, text.c_str());
  const cairo_status_t status = cairo_status(cr);
  cairo_destroy(cr);
  if (status != CAIRO_STATUS_SUCCESS) throw RenderError(std::string("cairo failed: ") + cairo_status_to_string(status));
}

void check_options(const RenderOptions& opt) {
  if (opt.width <= 0 || opt.height <= 0 || opt.width > 32767 || opt.height > 32767) {
    throw RenderError("image size must be between 1 and 32767 pixels, got " +
                      std::to_string(opt.width) + "x" + std::to_string(opt.height));
  }
}

// The whole image on a cairo surface: the traced picture below the band, the time stamp in it.
void draw(Canvas& canvas, const Manifest& manifest, const Frame& frame, const std::vector<Collider>& colliders,
          const Camera& camera, const RenderOptions& opt, const std::vector<RenderHandle>& handles) {
  if (frame.rods.size() != manifest.rods.size()) {
    throw RenderError("frame " + std::to_string(frame.index) + " has " +
                      std::to_string(frame.rods.size()) + " rods, the manifest " +
                      std::to_string(manifest.rods.size()));
  }
  const int band = time_stamp_band(opt);
  std::vector<Rgb8> pixels;
  trace(manifest, frame, colliders, camera, opt, handles, pixels);
  cairo_surface_flush(canvas.surface);
  const int stride = cairo_image_surface_get_stride(canvas.surface);
  unsigned char* data = cairo_image_surface_get_data(canvas.surface);
  const int h = opt.height - band;
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < opt.width; ++x) {
      const Rgb8& c = pixels[static_cast<std::size_t>(y) * opt.width + x];
      const std::uint32_t p = 0xff000000u | (std::uint32_t{c.r} << 16) | (std::uint32_t{c.g} << 8) | std::uint32_t{c.b};
      std::memcpy(data + static_cast<std::ptrdiff_t>(y + band) * stride + 4 * x, &p, 4);
    }
  }
  cairo_surface_mark_dirty(canvas.surface);
  if (band > 0) draw_time_stamp(canvas.surface, time_stamp_text(frame.time, manifest.frame_dt), opt, band);
  cairo_surface_flush(canvas.surface);
}

// The canvas as an RGB image.
Image surface_image(const Canvas& canvas) {
  Image image;
  image.width = cairo_image_surface_get_width(canvas.surface);
  image.height = cairo_image_surface_get_height(canvas.surface);
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

}  // namespace

int time_stamp_band(const RenderOptions& options) {
  if (!options.time_stamp) return 0;
  const int band = static_cast<int>(std::lround(1.7 * std::max(11.0, options.height / 30.0)));
  return 3 * band <= options.height ? band : 0;
}

double view_aspect(const RenderOptions& options) {
  return static_cast<double>(options.width) / std::max(1, options.height - time_stamp_band(options));
}

Projector view_projector(const Camera& camera, const RenderOptions& options) {
  const int band = time_stamp_band(options);
  return Projector(camera, options.width, std::max(1, options.height - band), band);
}

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

Image render_image(const Manifest& manifest, const Frame& frame, const std::vector<Collider>& colliders,
                   const Camera& camera, const RenderOptions& options, const std::vector<RenderHandle>& handles) {
  check_options(options);
  Canvas canvas(options.width, options.height);
  draw(canvas, manifest, frame, colliders, camera, options, handles);
  return surface_image(canvas);
}

void render_frame(const Manifest& manifest, const Frame& frame, const std::vector<Collider>& colliders,
                  const Camera& camera, const RenderOptions& options, const std::string& png_path,
                  const std::vector<RenderHandle>& handles) {
  check_options(options);
  Canvas canvas(options.width, options.height);
  draw(canvas, manifest, frame, colliders, camera, options, handles);
  // Written whole: a temporary file in the same folder (the ".name.tmp" form io/ readers and
  // `bristle render --force` recognise), then renamed over the target, so an interrupted
  // render never leaves a truncated PNG behind.
  const std::filesystem::path target(png_path);
  const std::filesystem::path temporary =
      target.parent_path() / ("." + target.filename().string() + ".tmp");
  std::error_code error;
  try {
    write_png(surface_image(canvas), temporary.string());
  } catch (const RenderError& e) {
    std::filesystem::remove(temporary, error);
    throw RenderError("cannot write PNG '" + png_path + "' (" + e.what() + ")");
  }
  std::filesystem::rename(temporary, target, error);
  if (error) {
    std::error_code ignored;
    std::filesystem::remove(temporary, ignored);
    throw RenderError("cannot write PNG '" + png_path + "': " + error.message());
  }
}

}  // namespace bristle

#include "bristle/render/ray_scene.hpp"

#include <embree3/rtcore.h>

#include <algorithm>
#include <cmath>
#include <mutex>
#include <string>

#include "bristle/render/occlusion.hpp"
#include "bristle/render/render_error.hpp"

namespace bristle {

namespace {

// Geometry ids: attached in this order, by id, so they never depend on attachment history.
constexpr unsigned kCurves = 0, kSpheres = 1, kTriangles = 2, kFlat = 3;

// Tube segments are cut into pieces at most this many radii long (see add_tube).
constexpr double kPieceRadii = 8.0;

// Coordinates beyond this (after the shift and scale) do not fit single precision usefully.
constexpr double kMaxLocal = 1e18;

// The process's Embree device. One build thread: the BVH of a frame is then built by one
// sequence of operations whichever thread asks, and builds of different frames on different
// threads do not share Embree's worker pool.
RTCDevice device() {
  static std::once_flag once;
  static RTCDevice dev = nullptr;
  std::call_once(once, [] { dev = rtcNewDevice("threads=1"); });
  if (!dev) throw RenderError("cannot start Embree (rtcNewDevice failed: " + std::to_string(rtcGetDeviceError(nullptr)) + ")");
  return dev;
}

void check(const char* what) {
  const RTCError e = rtcGetDeviceError(device());
  if (e != RTC_ERROR_NONE) throw RenderError(std::string("Embree failed to ") + what + " (error " + std::to_string(e) + ")");
}

bool fits(const Vec3& local) { return local.allFinite() && local.cwiseAbs().maxCoeff() < kMaxLocal; }


}  // namespace

// Round or flat linear curves for Embree: float4 (x, y, z, radius) vertices, two per piece.
struct CurveSet {
  std::vector<float> vertices;
  std::vector<unsigned> indices;  // the first vertex of each piece
  std::vector<int> segment;       // primID -> index into segments_
  std::vector<int> rod;           // primID -> rod index, -1 for other tubes

  void add(const Vec3& p0, double r0, const Vec3& p1, double r1, int seg, int rod_index) {
    indices.push_back(static_cast<unsigned>(vertices.size() / 4));
    vertices.insert(vertices.end(), {static_cast<float>(p0.x()), static_cast<float>(p0.y()), static_cast<float>(p0.z()),
                                     static_cast<float>(r0), static_cast<float>(p1.x()), static_cast<float>(p1.y()),
                                     static_cast<float>(p1.z()), static_cast<float>(r1)});
    segment.push_back(seg);
    rod.push_back(rod_index);
  }
};

struct RayScene::Impl {
  RTCScene scene = nullptr;
  CurveSet curves;  // the tubes of add_tube, round at their radius
  // The shadow scene (occluded): the same, and the occluder tubes as flat (ray-facing) curves
  // at their true radii. Seen along a shadow ray, a ray-facing ribbon as wide as the tube is
  // the tube's outline, which is all a shadow ray asks; it is cheaper to intersect than a
  // round curve. Without occluder tubes it is `scene`.
  RTCScene shadow = nullptr;
  CurveSet flat_true;
  std::vector<float> sphere_vertices;
  std::vector<int> sphere_object;
  std::vector<float> mesh_vertices;
  std::vector<unsigned> mesh_indices;
  std::vector<int> mesh_object;  // primID -> collider
  bool committed = false;
  RTCScene build(const CurveSet* flat_curves) const;
};

RayScene::RayScene(const Vec3& origin, double scale)
    : impl_(new Impl), origin_(origin), scale_(scale > 0.0 && std::isfinite(scale) ? scale : 1.0) {}

RayScene::~RayScene() {
  if (impl_->shadow && impl_->shadow != impl_->scene) rtcReleaseScene(impl_->shadow);
  if (impl_->scene) rtcReleaseScene(impl_->scene);
}

bool RayScene::has_solids() const { return impl_->scene != nullptr; }

bool RayScene::empty() const {
  return impl_->curves.indices.empty() && impl_->flat_true.indices.empty() && impl_->sphere_object.empty() &&
         impl_->mesh_object.empty();
}

void RayScene::add_tube(SurfaceKind kind, int object, const std::vector<Vec3>& points,
                        const std::vector<double>& radii, bool occludes_contact) {
  add_segments(kind, object, points, radii, occludes_contact, false);
}

void RayScene::add_occluder_tube(SurfaceKind kind, int object, const std::vector<Vec3>& points,
                                 const std::vector<double>& radii) {
  add_segments(kind, object, points, radii, true, true);
}

void RayScene::add_segments(SurfaceKind kind, int object, const std::vector<Vec3>& points,
                            const std::vector<double>& radii, bool occludes_contact, bool occluder_only) {
  Impl& m = *impl_;
  const std::size_t n = std::min(points.size(), radii.size());
  for (std::size_t i = 0; i + 1 < n; ++i) {
    const Vec3 a = (points[i] - origin_) / scale_, b = (points[i + 1] - origin_) / scale_;
    const double ra = radii[i] / scale_, rb = radii[i + 1] / scale_;
    if (!fits(a) || !fits(b) || !(ra >= 0.0) || !(rb >= 0.0) || !std::isfinite(ra) || !std::isfinite(rb)) continue;
    const int seg = static_cast<int>(segments_.size());
    const int rod = kind == SurfaceKind::Rod ? object : -1;
    if (occluder_only) {
      // One ray-facing ribbon per segment, reaching its radius past both ends, so the outer
      // side of a bend (the true tube's round joint) casts its shadow too.
      const Vec3 dir = (b - a).norm() > 0.0 ? Vec3((b - a).normalized()) : Vec3(Vec3::UnitX());
      m.flat_true.add(a - ra * dir, ra, b + rb * dir, rb, seg, rod);
    } else {
      // Each segment gets its own two vertices and no neighbour flags: a round linear segment
      // is then a cone capped by the spheres of its end vertices, the tube's joints included,
      // and a left-out segment never joins its neighbours.
      // Long thin segments are cut into pieces no longer than a few radii: the BVH's boxes
      // then hug the tube instead of enclosing a long diagonal box of empty space, which a
      // dense brush would otherwise make every ray test many times over.
      const double piece = kPieceRadii * std::max({ra, rb, 1e-12});
      const int pieces = static_cast<int>(std::clamp(std::ceil((b - a).norm() / piece), 1.0, 64.0));
      for (int k = 0; k < pieces; ++k) {
        const double u0 = static_cast<double>(k) / pieces, u1 = static_cast<double>(k + 1) / pieces;
        m.curves.add(a + u0 * (b - a), ra + u0 * (rb - ra), a + u1 * (b - a), ra + u1 * (rb - ra), seg, rod);
      }
    }
    segments_.push_back(Segment{kind, object, static_cast<int>(i), points[i], points[i + 1], radii[i], radii[i + 1],
                                occludes_contact});
    if (occludes_contact) max_occluder_radius_ = std::max({max_occluder_radius_, radii[i], radii[i + 1]});
  }
}

void RayScene::add_sphere(int object, const Vec3& center, double radius) {
  const Vec3 c = (center - origin_) / scale_;
  const double r = radius / scale_;
  if (!fits(c) || !(r > 0.0) || !std::isfinite(r)) return;
  impl_->sphere_vertices.insert(impl_->sphere_vertices.end(), {static_cast<float>(c.x()), static_cast<float>(c.y()),
                                                               static_cast<float>(c.z()), static_cast<float>(r)});
  impl_->sphere_object.push_back(object);
}

void RayScene::add_triangles(int object, const std::vector<Vec3>& vertices,
                             const std::vector<std::array<int, 3>>& triangles) {
  Impl& m = *impl_;
  const unsigned base = static_cast<unsigned>(m.mesh_vertices.size() / 3);
  for (const Vec3& v : vertices) {
    const Vec3 l = (v - origin_) / scale_;
    if (!fits(l)) return;  // a mesh beyond single precision is left out whole
  }
  for (const Vec3& v : vertices) {
    const Vec3 l = (v - origin_) / scale_;
    m.mesh_vertices.insert(m.mesh_vertices.end(),
                           {static_cast<float>(l.x()), static_cast<float>(l.y()), static_cast<float>(l.z())});
  }
  for (const auto& t : triangles) {
    for (int k : t) m.mesh_indices.push_back(base + static_cast<unsigned>(k));
    m.mesh_object.push_back(object);
  }
}

// One Embree scene of the round curves, spheres and triangles, and `flat_curves` when given;
// nullptr when that is nothing.
RTCScene RayScene::Impl::build(const CurveSet* flat_curves) const {
  const Impl& m = *this;
  if (curves.indices.empty() && (!flat_curves || flat_curves->indices.empty()) && sphere_object.empty() &&
      mesh_object.empty())
    return nullptr;
  RTCDevice dev = device();
  RTCScene scene = rtcNewScene(dev);
  rtcSetSceneFlags(scene, RTC_SCENE_FLAG_NONE);
  rtcSetSceneBuildQuality(scene, RTC_BUILD_QUALITY_MEDIUM);
  const auto add_curves = [&](const CurveSet& set, RTCGeometryType type, unsigned id) {
    if (set.indices.empty()) return;
    RTCGeometry g = rtcNewGeometry(dev, type);
    auto* v = static_cast<float*>(rtcSetNewGeometryBuffer(g, RTC_BUFFER_TYPE_VERTEX, 0, RTC_FORMAT_FLOAT4,
                                                          4 * sizeof(float), set.vertices.size() / 4));
    std::copy(set.vertices.begin(), set.vertices.end(), v);
    auto* i = static_cast<unsigned*>(rtcSetNewGeometryBuffer(g, RTC_BUFFER_TYPE_INDEX, 0, RTC_FORMAT_UINT,
                                                             sizeof(unsigned), set.indices.size()));
    std::copy(set.indices.begin(), set.indices.end(), i);
    rtcCommitGeometry(g);
    rtcAttachGeometryByID(scene, g, id);
    rtcReleaseGeometry(g);
  };
  add_curves(curves, RTC_GEOMETRY_TYPE_ROUND_LINEAR_CURVE, kCurves);
  if (flat_curves) add_curves(*flat_curves, RTC_GEOMETRY_TYPE_FLAT_LINEAR_CURVE, kFlat);
  if (!m.sphere_object.empty()) {
    RTCGeometry g = rtcNewGeometry(dev, RTC_GEOMETRY_TYPE_SPHERE_POINT);
    auto* v = static_cast<float*>(rtcSetNewGeometryBuffer(g, RTC_BUFFER_TYPE_VERTEX, 0, RTC_FORMAT_FLOAT4,
                                                          4 * sizeof(float), m.sphere_object.size()));
    std::copy(m.sphere_vertices.begin(), m.sphere_vertices.end(), v);
    rtcCommitGeometry(g);
    rtcAttachGeometryByID(scene, g, kSpheres);
    rtcReleaseGeometry(g);
  }
  if (!m.mesh_object.empty()) {
    RTCGeometry g = rtcNewGeometry(dev, RTC_GEOMETRY_TYPE_TRIANGLE);
    auto* v = static_cast<float*>(rtcSetNewGeometryBuffer(g, RTC_BUFFER_TYPE_VERTEX, 0, RTC_FORMAT_FLOAT3,
                                                          3 * sizeof(float), m.mesh_vertices.size() / 3));
    std::copy(m.mesh_vertices.begin(), m.mesh_vertices.end(), v);
    auto* i = static_cast<unsigned*>(rtcSetNewGeometryBuffer(g, RTC_BUFFER_TYPE_INDEX, 0, RTC_FORMAT_UINT3,
                                                             3 * sizeof(unsigned), m.mesh_object.size()));
    std::copy(m.mesh_indices.begin(), m.mesh_indices.end(), i);
    rtcCommitGeometry(g);
    rtcAttachGeometryByID(scene, g, kTriangles);
    rtcReleaseGeometry(g);
  }
  rtcCommitScene(scene);
  check("build the scene");
  return scene;
}

std::int64_t RayScene::cell_key(const Vec3& p) const {
  // 21 bits per axis, wrapping: distant cells may share a key, which only adds candidates.
  // The index is wrapped in floating point before the cast: a rod placed 1e29 m away has cell
  // indices beyond any integer type (a cast would be undefined); fmod is exact, and for
  // indices an int64 holds it gives the same bits as the integer mask.
  const auto c = [&](double x) {
    constexpr double kWrap = 2097152.0;  // 2^21
    const double index = std::floor(x / cell_);
    if (!std::isfinite(index)) return std::int64_t{0};
    double wrapped = std::fmod(index, kWrap);
    if (wrapped < 0.0) wrapped += kWrap;
    return static_cast<std::int64_t>(wrapped) & 0x1fffff;
  };
  return (c(p.x()) << 42) | (c(p.y()) << 21) | c(p.z());
}

void RayScene::commit(double contact_reach) {
  Impl& m = *impl_;
  if (m.committed) return;
  m.committed = true;
  m.scene = m.build(nullptr);
  m.shadow = m.flat_true.indices.empty() ? m.scene : m.build(&m.flat_true);

  // The contact-shadow grid, in metres: cells twice the reach, each segment listed in every
  // cell its box (grown by the reach) meets, unless that is very many cells (a long segment:
  // then it is listed nowhere and casts no contact shadow; contact happens at the scale of
  // the reach, i.e. of the rods' radii).
  reach_ = contact_reach > 0.0 && std::isfinite(contact_reach) ? contact_reach : 0.0;
  if (reach_ > 0.0) {
    cell_ = 2.0 * reach_;
    for (std::size_t s = 0; s < segments_.size(); ++s) {
      const Segment& seg = segments_[s];
      if (!seg.occludes) continue;
      const Vec3 lo = seg.a.cwiseMin(seg.b).array() - (reach_ + std::max(seg.ra, seg.rb));
      const Vec3 hi = seg.a.cwiseMax(seg.b).array() + (reach_ + std::max(seg.ra, seg.rb));
      const Vec3 n = ((hi - lo) / cell_).array().floor() + 2.0;
      if (!(n.prod() <= 512.0)) continue;
      const Vec3 first = (lo / cell_).array().floor();
      const Vec3 last = (hi / cell_).array().floor();
      // Counted in steps from the first cell, at most n per axis: far from the origin (a rod
      // placed 1e29 m away) adding 1 to a cell index changes nothing, and a loop on the index
      // itself would never end.
      for (double i = 0.0; i < n.x() && first.x() + i <= last.x(); i += 1.0)
        for (double j = 0.0; j < n.y() && first.y() + j <= last.y(); j += 1.0)
          for (double k = 0.0; k < n.z() && first.z() + k <= last.z(); k += 1.0)
            grid_.emplace_back(cell_key(Vec3((first.x() + i + 0.5) * cell_, (first.y() + j + 0.5) * cell_,
                                             (first.z() + k + 0.5) * cell_)),
                               static_cast<int>(s));
    }
    std::sort(grid_.begin(), grid_.end());
  }
}

namespace {
/// An Embree ray query from o along direction (scene units), starting at t_near, with no far
/// limit and no hit yet.
RTCRayHit unbounded_ray(const Vec3& o, const Vec3& direction, double t_near) {
  RTCRayHit rh;
  rh.ray.org_x = static_cast<float>(o.x());
  rh.ray.org_y = static_cast<float>(o.y());
  rh.ray.org_z = static_cast<float>(o.z());
  rh.ray.dir_x = static_cast<float>(direction.x());
  rh.ray.dir_y = static_cast<float>(direction.y());
  rh.ray.dir_z = static_cast<float>(direction.z());
  rh.ray.tnear = static_cast<float>(t_near);
  rh.ray.tfar = std::numeric_limits<float>::infinity();
  rh.ray.mask = 0xffffffffu;
  rh.ray.time = 0.0f;
  rh.ray.flags = 0;
  rh.hit.geomID = RTC_INVALID_GEOMETRY_ID;
  rh.hit.instID[0] = RTC_INVALID_GEOMETRY_ID;
  return rh;
}
}  // namespace

SurfaceHit RayScene::intersect(const Vec3& origin, const Vec3& direction, double t_near) const {
  const Impl& m = *impl_;
  if (!m.scene) return {};
  const Vec3 o = (origin - origin_) / scale_;
  if (!fits(o)) return {};
  RTCIntersectContext context;
  rtcInitIntersectContext(&context);
  RTCRayHit rh = unbounded_ray(o, direction, t_near / scale_);
  rtcIntersect1(m.scene, &context, &rh);
  return make_hit(origin, direction, rh.hit.geomID, rh.hit.primID, rh.ray.tfar,
                  Vec3(rh.hit.Ng_x, rh.hit.Ng_y, rh.hit.Ng_z));
}

SurfaceHit RayScene::make_hit(const Vec3& origin, const Vec3& direction, unsigned geom, unsigned prim, float t,
                              const Vec3& ng) const {
  SurfaceHit out;
  const Impl& m = *impl_;
  if (geom == RTC_INVALID_GEOMETRY_ID) return out;
  out.distance = static_cast<double>(t) * scale_;
  out.point = origin + out.distance * direction;
  Vec3 n = ng.norm() > 0.0 ? Vec3(ng.normalized()) : Vec3(-direction);
  if (n.dot(direction) > 0.0) n = -n;
  out.normal = n;
  if (geom == kCurves) {
    const std::size_t id = static_cast<std::size_t>(m.curves.segment[prim]);
    const Segment& seg = segments_[id];
    out.kind = seg.kind;
    out.object = seg.object;
    out.segment = seg.index;
    const Vec3 tangent = seg.b - seg.a;
    out.tangent = tangent.norm() > 0.0 ? Vec3(tangent.normalized()) : Vec3(Vec3::UnitX());
    out.radius = 0.5 * (seg.ra + seg.rb);
    out.axis_a = seg.a;
    out.axis_b = seg.b;
    out.radius_a = seg.ra;
    out.radius_b = seg.rb;
    // The neighbouring segments of the same tube (or the ends themselves).
    out.axis_before = seg.a;
    out.axis_after = seg.b;
    out.radius_before = seg.ra;
    out.radius_after = seg.rb;
    if (id > 0 && segments_[id - 1].object == seg.object && segments_[id - 1].kind == seg.kind &&
        segments_[id - 1].index + 1 == seg.index) {
      out.axis_before = segments_[id - 1].a;
      out.radius_before = segments_[id - 1].ra;
    }
    if (id + 1 < segments_.size() && segments_[id + 1].object == seg.object && segments_[id + 1].kind == seg.kind &&
        segments_[id + 1].index == seg.index + 1) {
      out.axis_after = segments_[id + 1].b;
      out.radius_after = segments_[id + 1].rb;
    }
  } else if (geom == kSpheres) {
    out.kind = SurfaceKind::Collider;
    out.object = m.sphere_object[prim];
  } else {
    out.kind = SurfaceKind::Collider;
    out.object = m.mesh_object[prim];
  }
  return out;
}

std::array<SurfaceHit, 4> RayScene::intersect4(const std::array<Vec3, 4>& origins,
                                               const std::array<Vec3, 4>& directions) const {
  std::array<SurfaceHit, 4> out;
  const Impl& m = *impl_;
  if (!m.scene) return out;
  alignas(16) int valid[4];
  alignas(16) RTCRayHit4 rh;
  for (int i = 0; i < 4; ++i) {
    const Vec3 o = (origins[static_cast<std::size_t>(i)] - origin_) / scale_;
    const Vec3& d = directions[static_cast<std::size_t>(i)];
    valid[i] = fits(o) ? -1 : 0;
    rh.ray.org_x[i] = static_cast<float>(o.x());
    rh.ray.org_y[i] = static_cast<float>(o.y());
    rh.ray.org_z[i] = static_cast<float>(o.z());
    rh.ray.dir_x[i] = static_cast<float>(d.x());
    rh.ray.dir_y[i] = static_cast<float>(d.y());
    rh.ray.dir_z[i] = static_cast<float>(d.z());
    rh.ray.tnear[i] = 0.0f;
    rh.ray.tfar[i] = std::numeric_limits<float>::infinity();
    rh.ray.mask[i] = 0xffffffffu;
    rh.ray.time[i] = 0.0f;
    rh.ray.flags[i] = 0;
    rh.ray.id[i] = static_cast<unsigned>(i);
    rh.hit.geomID[i] = RTC_INVALID_GEOMETRY_ID;
    rh.hit.instID[0][i] = RTC_INVALID_GEOMETRY_ID;
  }
  RTCIntersectContext context;
  rtcInitIntersectContext(&context);
  context.flags = RTC_INTERSECT_CONTEXT_FLAG_COHERENT;
  rtcIntersect4(valid, m.scene, &context, &rh);
  for (int i = 0; i < 4; ++i) {
    if (!valid[i]) continue;
    out[static_cast<std::size_t>(i)] =
        make_hit(origins[static_cast<std::size_t>(i)], directions[static_cast<std::size_t>(i)], rh.hit.geomID[i],
                 rh.hit.primID[i], rh.ray.tfar[i], Vec3(rh.hit.Ng_x[i], rh.hit.Ng_y[i], rh.hit.Ng_z[i]));
  }
  return out;
}

bool RayScene::occluded(const Vec3& origin, const Vec3& direction, double t_near, double t_far) const {
  const Impl& m = *impl_;
  if (!m.shadow) return false;
  const Vec3 o = (origin - origin_) / scale_;
  if (!fits(o)) return false;
  RTCIntersectContext context;
  rtcInitIntersectContext(&context);
  RTCRay ray;
  ray.org_x = static_cast<float>(o.x());
  ray.org_y = static_cast<float>(o.y());
  ray.org_z = static_cast<float>(o.z());
  ray.dir_x = static_cast<float>(direction.x());
  ray.dir_y = static_cast<float>(direction.y());
  ray.dir_z = static_cast<float>(direction.z());
  ray.tnear = static_cast<float>(t_near / scale_);
  ray.tfar = std::isfinite(t_far) ? static_cast<float>(t_far / scale_) : std::numeric_limits<float>::infinity();
  ray.mask = 0xffffffffu;
  ray.time = 0.0f;
  ray.flags = 0;
  rtcOccluded1(m.shadow, &context, &ray);
  return ray.tfar < 0.0f;  // Embree marks an occluded ray with tfar = -inf
}

double RayScene::contact_occlusion(const Vec3& p, const Vec3& n) const {
  if (grid_.empty()) return 0.0;
  const std::int64_t key = cell_key(p);
  auto it = std::lower_bound(grid_.begin(), grid_.end(), std::make_pair(key, -1));
  double open = 1.0;
  for (; it != grid_.end() && it->first == key; ++it) {
    const Segment& seg = segments_[static_cast<std::size_t>(it->second)];
    // Within the reach of the segment's surface (a box test first, then the distance).
    const Vec3 ab = seg.b - seg.a;
    const double len2 = ab.squaredNorm();
    const double u = len2 > 0.0 ? std::clamp((p - seg.a).dot(ab) / len2, 0.0, 1.0) : 0.0;
    const double r = seg.ra + u * (seg.rb - seg.ra);
    if ((seg.a + u * ab - p).norm() > reach_ + r) continue;
    open *= 1.0 - segment_occlusion(p, n, seg.a, seg.b, r);
  }
  return 1.0 - open;
}

}  // namespace bristle

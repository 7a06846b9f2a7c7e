#pragma once
/// The geometry of one frame in Embree (Intel's ray tracing kernels, Debian's libembree-dev),
/// and the three questions the renderer asks of it: what solid surface does a ray hit first,
/// is a point lit by the key light (shadow ray), how much of the sky do rods hide from a
/// collider point (contact shadow, occlusion.hpp).
///
/// Design note.
///   - Rods, the brush's ferrule and handle, and capsules are round linear curves: cones
///     between consecutive vertices joined by spheres, the vertex radius being the rod's
///     (Embree's RTC_GEOMETRY_TYPE_ROUND_LINEAR_CURVE, made for hair). Spheres are sphere
///     points; boxes and planes triangle meshes (a plane is a finite square around the view,
///     or a slab seen edge-on in 2D).
///   - The renderer finds the rods a pixel sees itself, from their projected segments
///     (render_frame.cpp), so rods are added as occluder tubes: `intersect` does not see them;
///     for `occluded` they are flat ray-facing curves of their true radius (Embree's
///     RTC_GEOMETRY_TYPE_FLAT_LINEAR_CURVE, faster to intersect than round ones; along a ray
///     a tube's outline is that wide), each reaching its radius past both ends of its
///     segment, so the outside of a bend casts its shadow too. Two Embree scenes: one of the
///     round tubes, spheres and triangles (`intersect`), and the same with the occluder tubes
///     (`occluded`).
///   - Embree works in single precision. Every point is stored relative to `origin` and
///     divided by `scale` (the renderer passes the camera target and the view's size), so
///     the frame's numbers stay near 1 wherever the scene sits; results come back in metres.
///   - Determinism: one Embree device for the process, configured with one build thread, so
///     a frame's BVH is built the same way whatever thread builds it; a ray's answer depends
///     only on the BVH and the ray. Several threads may each build and query their own
///     RayScene at once.

#include <array>
#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

#include "bristle/math/types.hpp"

namespace bristle {

/// What a surface belongs to.
enum class SurfaceKind : std::uint8_t { None, Rod, Ferrule, Handle, Collider };

struct SurfaceHit {
  SurfaceKind kind = SurfaceKind::None;
  int object = -1;   ///< rod index (Rod), collider index (Collider), brush part index
  int segment = -1;  ///< curves: the segment (vertices segment, segment + 1)
  double distance = std::numeric_limits<double>::infinity();  ///< along the ray [m]
  Vec3 point = Vec3::Zero();    ///< [m]
  Vec3 normal = Vec3::UnitZ();  ///< unit, on the side the ray came from
  Vec3 tangent = Vec3::UnitX(); ///< curves: unit direction of the segment
  double radius = 0.0;          ///< curves: the tube's mean radius on the segment [m]
  Vec3 axis_a = Vec3::Zero(), axis_b = Vec3::Zero();  ///< curves: the segment's ends [m]
  double radius_a = 0.0, radius_b = 0.0;              ///< curves: the true radii there [m]
  /// curves: the neighbouring segments of the tube, axis_before -> axis_a and
  /// axis_b -> axis_after (the ends themselves where there is none) [m]
  Vec3 axis_before = Vec3::Zero(), axis_after = Vec3::Zero();
  double radius_before = 0.0, radius_after = 0.0;  ///< [m]
  /// rods with twist (set by the renderer, not by Embree): the material director m1 at the
  /// hit, between the segment's vertex directors; zero for a rod without twist
  Vec3 director = Vec3::Zero();

  bool hit() const { return kind != SurfaceKind::None; }
};

class RayScene {
 public:
  /// An empty scene whose single-precision coordinates are (x - origin) / scale.
  RayScene(const Vec3& origin, double scale);
  ~RayScene();
  RayScene(const RayScene&) = delete;
  RayScene& operator=(const RayScene&) = delete;

  /// A tube through `points` with a radius per point [m] (a round linear curve). Segments
  /// with a non-finite end, or beyond single precision, are left out.
  /// `occludes_contact`: the tube darkens colliders it lies close to (contact shadow).
  void add_tube(SurfaceKind kind, int object, const std::vector<Vec3>& points, const std::vector<double>& radii,
                bool occludes_contact);
  /// A tube that only occludes: shadow rays (`occluded`) meet it and it darkens colliders it
  /// lies close to (contact shadow), but `intersect` does not see it (the renderer finds the
  /// rods a pixel sees from their projected segments).
  void add_occluder_tube(SurfaceKind kind, int object, const std::vector<Vec3>& points,
                         const std::vector<double>& radii);
  void add_sphere(int object, const Vec3& center, double radius);
  void add_triangles(int object, const std::vector<Vec3>& vertices, const std::vector<std::array<int, 3>>& triangles);
  /// Builds the BVH, and the grid that finds the tube segments within `contact_reach` [m] of
  /// a point; call once, after every add and before any query. Throws RenderError when
  /// Embree fails.
  void commit(double contact_reach = 0.0);

  /// The first surface along the ray (unit direction) beyond `t_near` [m], occluder tubes
  /// left out.
  SurfaceHit intersect(const Vec3& origin, const Vec3& direction, double t_near = 0.0) const;
  /// True, once committed, when `intersect` has something to hit (a tube of add_tube, a
  /// sphere or a triangle).
  bool has_solids() const;
  /// intersect for four rays at once from t = 0 (Embree's packet traversal: faster for
  /// neighbouring rays such as the samples of one pixel). Embree computes packets on another
  /// code path, so an answer may differ from intersect's in the last bits; a caller that must
  /// be reproducible uses the same call for the same ray every time.
  std::array<SurfaceHit, 4> intersect4(const std::array<Vec3, 4>& origins, const std::array<Vec3, 4>& directions) const;
  /// True when something lies on the ray between t_near and t_far [m] (occluder tubes as
  /// ribbons of their true radius facing the ray).
  bool occluded(const Vec3& origin, const Vec3& direction, double t_near, double t_far) const;
  /// 1 - prod(1 - F) over the contact-occluding tube segments within the contact reach of p
  /// (segment_occlusion, occlusion.hpp), for a surface point p with unit normal n.
  double contact_occlusion(const Vec3& p, const Vec3& n) const;

  bool empty() const;
  /// The largest radius of a contact-occluding tube [m] (0 when none).
  double max_occluder_radius() const { return max_occluder_radius_; }

 private:
  struct Segment {
    SurfaceKind kind;
    int object, index;
    Vec3 a, b;
    double ra, rb;
    bool occludes;
  };
  struct Impl;
  void add_segments(SurfaceKind kind, int object, const std::vector<Vec3>& points, const std::vector<double>& radii,
                    bool occludes_contact, bool occluder_only);
  SurfaceHit make_hit(const Vec3& origin, const Vec3& direction, unsigned geom, unsigned prim, float t,
                      const Vec3& ng) const;
  std::unique_ptr<Impl> impl_;
  Vec3 origin_;
  double scale_;
  std::vector<Segment> segments_;
  double max_occluder_radius_ = 0.0;
  // The contact-shadow grid: (cell key, segment) for every cell the segment's box, grown by
  // the reach, meets; sorted, so a cell's segments are a contiguous run in a fixed order.
  double reach_ = 0.0;
  double cell_ = 0.0;
  std::vector<std::pair<std::int64_t, int>> grid_;
  std::int64_t cell_key(const Vec3& p) const;
};

}  // namespace bristle

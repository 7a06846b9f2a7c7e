#pragma once
/// The renderer's camera: where the eye is, what it looks at, and how world points map to
/// pixels.
///
/// Conventions (docs/rendering.md): a right-handed camera frame built from the view
/// direction f = normalize(target - position), right = normalize(f x up), and the true up
/// u = right x f. A point p has camera coordinates (x, y, z) = ((p - position).right,
/// (p - position).u, (p - position).f); z is its depth, positive in front of the eye.
/// Pixels: x to the right, y down, origin at the top-left corner of the image, pixel centres
/// at half-integers (cairo's convention).
///   perspective:  px = W/2 + F x / z,  py = H/2 - F y / z,  F = (H/2) / tan(fov/2)
///   orthographic: px = W/2 + S x,      py = H/2 - S y,      S = H / ortho_height

#include <limits>
#include <vector>

#include "bristle/io/frame.hpp"
#include "bristle/math/types.hpp"

namespace bristle {

enum class ProjectionType { Perspective, Orthographic };

struct Camera {
  ProjectionType type = ProjectionType::Perspective;
  Vec3 position = Vec3(0.0, 0.0, 1.0);  ///< the eye [m]
  Vec3 target = Vec3::Zero();           ///< the point looked at, drawn at the image centre [m]
  Vec3 up = Vec3::UnitY();              ///< world direction drawn upwards (need not be unit)
  double fov_deg = 30.0;                ///< vertical field of view [deg], perspective only
  double ortho_height = 1.0;            ///< height of the visible window [m], orthographic only
};

/// An axis-aligned box; empty until something is added.
struct Bounds {
  Vec3 min = Vec3::Constant(std::numeric_limits<double>::infinity());
  Vec3 max = Vec3::Constant(-std::numeric_limits<double>::infinity());

  bool empty() const { return !(min.array() <= max.array()).all(); }
  /// Grow to hold the ball of radius `pad` [m] around p.
  void extend(const Vec3& p, double pad = 0.0);
  void extend(const Bounds& other);
  Vec3 center() const { return 0.5 * (min + max); }
  Vec3 size() const { return max - min; }
};

/// A point the camera must keep in view, with the distance around it that must stay visible
/// too (a vertex and its rod's radius) [m].
struct PaddedPoint {
  Vec3 point = Vec3::Zero();
  double pad = 0.0;
};

/// The box holding every rod of `frame`, each vertex padded by its rod's radius.
Bounds frame_bounds(const Manifest& manifest, const Frame& frame);

/// Every finite vertex of `frame` with its rod's radius, appended to `out`.
void append_frame_points(const Manifest& manifest, const Frame& frame, std::vector<PaddedPoint>& out);

/// The default "up" of a scene: against gravity (scene["gravity"]) when it is non-zero, else
/// +y. Only the direction is used.
Vec3 scene_up(const nlohmann::json& scene);

/// A camera framing `bounds` in an image of the given aspect (width / height), with a margin.
/// dimension 2: orthographic, looking down -z at the xy plane, y up.
/// dimension 3: perspective, fov 30 deg, from a 3/4 view: 35 deg around `up` from the +z
/// side towards +x, 25 deg above the horizon, at the distance that fits every corner of the
/// box.
///
/// When `points` are given (the vertices inside `bounds`), the distance or window is fitted to
/// them instead of to the box's corners: a slanted brush then fills the picture instead of
/// leaving room for the empty corners of its box. The camera still looks at the box centre.
Camera fit_camera(const Bounds& bounds, int dimension, double aspect = 16.0 / 9.0,
                  const Vec3& up = Vec3::UnitY(), const std::vector<PaddedPoint>& points = {});

/// The general fit: look along `view_dir` (from the eye towards the scene) with the given
/// projection, target the box centre, and choose the distance (perspective, fov_deg kept) or
/// the window height (orthographic) so every corner of the box lies inside the image with a
/// margin of `margin` (a fraction of the half-size of the image, e.g. 0.08); with `points`,
/// every point (grown by its pad) instead of every corner.
Camera fit_camera_along(const Bounds& bounds, const Vec3& view_dir, const Vec3& up,
                        ProjectionType type, double fov_deg, double aspect,
                        double margin = 0.08, const std::vector<PaddedPoint>& points = {});

/// A world point seen by the camera.
struct ScreenPoint {
  Vec2 pixel = Vec2::Zero();     ///< [px], y down
  double depth = 0.0;            ///< distance along the view direction [m]
  double pixels_per_meter = 0.0; ///< the scale of a small length at this depth, across the view
};

/// A ray from the camera: origin and unit direction [m].
struct CameraRay {
  Vec3 origin = Vec3::Zero();
  Vec3 direction = Vec3::UnitZ();
};

/// The camera bound to a view of width x height pixels whose top row is row `top` of the
/// image (the rows above hold the time stamp band): projects points to image pixels, and
/// casts the ray through an image point.
class Projector {
 public:
  Projector(const Camera& camera, int width, int height, int top = 0);

  /// The depth below which points are behind the eye (perspective), [m].
  double near_depth() const { return near_; }
  /// Depth of p along the view direction [m] (may be negative: behind the eye).
  double depth(const Vec3& p) const { return (p - camera_.position).dot(forward_); }
  /// The pixel of p. Requires depth(p) >= near_depth() for a perspective camera.
  ScreenPoint project(const Vec3& p) const;
  /// Unit vector from p towards the eye (orthographic: -forward everywhere).
  Vec3 to_eye(const Vec3& p) const;
  /// The ray through the image point (px, py) [px, y down]: the inverse of project. A
  /// perspective ray starts at the eye, an orthographic one on the plane through the eye.
  CameraRay ray(double px, double py) const;
  /// World size of one pixel at depth z, across the view [m].
  double pixel_size_at(double depth) const;
  /// The world direction of a screen direction (dx right, dy down).
  Vec3 screen_to_world_direction(double dx, double dy) const { return dx * right_ - dy * up_; }

  const Camera& camera() const { return camera_; }
  const Vec3& right() const { return right_; }
  const Vec3& up() const { return up_; }
  const Vec3& forward() const { return forward_; }
  int width() const { return width_; }
  int height() const { return height_; }  ///< of the view, not counting the rows above it
  int top() const { return top_; }

 private:
  Camera camera_;
  int width_ = 0, height_ = 0, top_ = 0;
  Vec3 right_, up_, forward_;
  double focal_px_ = 0.0;  ///< F (perspective) or S (orthographic)
  double near_ = 0.0;
};

}  // namespace bristle

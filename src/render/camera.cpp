#include "bristle/render/camera.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>

namespace bristle {

namespace {

constexpr double kPi = 3.14159265358979323846;

double deg_to_rad(double deg) { return deg * kPi / 180.0; }

// A camera frame (right, true up, forward) for a view direction and a requested up; when up
// is parallel to the view, another axis stands in for it.
void camera_basis(const Vec3& view_dir, const Vec3& up_hint, Vec3& right, Vec3& up, Vec3& fwd) {
  fwd = view_dir.normalized();
  Vec3 hint = up_hint.norm() > 0.0 ? up_hint.normalized() : Vec3::UnitY();
  if (std::abs(hint.dot(fwd)) > 0.999) {
    hint = std::abs(fwd.y()) < 0.9 ? Vec3::UnitY() : Vec3::UnitZ();
  }
  right = fwd.cross(hint).normalized();
  up = right.cross(fwd);
}

// A box worth framing: never empty, never flat in every direction.
Bounds usable(const Bounds& bounds) {
  Bounds b = bounds;
  if (b.empty()) {
    b.min = Vec3::Constant(-0.5);
    b.max = Vec3::Constant(0.5);
  }
  const double scale = std::max(b.size().maxCoeff(), 1e-12);
  if (b.size().maxCoeff() <= 1e-12) {
    b.min.array() -= 1e-3;
    b.max.array() += 1e-3;
  } else {
    // Give a degenerate axis a sliver of thickness so the view stays well defined.
    for (int i = 0; i < 3; ++i) {
      if (b.max[i] - b.min[i] < 1e-9 * scale) {
        b.min[i] -= 0.5e-9 * scale;
        b.max[i] += 0.5e-9 * scale;
      }
    }
  }
  return b;
}

}  // namespace

void Bounds::extend(const Vec3& p, double pad) {
  min = min.cwiseMin(p - Vec3::Constant(pad));
  max = max.cwiseMax(p + Vec3::Constant(pad));
}

void Bounds::extend(const Bounds& other) {
  if (other.empty()) return;
  min = min.cwiseMin(other.min);
  max = max.cwiseMax(other.max);
}

Bounds frame_bounds(const Manifest& manifest, const Frame& frame) {
  Bounds b;
  for (std::size_t i = 0; i < frame.rods.size(); ++i) {
    const double r = i < manifest.rods.size() ? manifest.rods[i].radius : 0.0;
    for (const Vec3& p : frame.rods[i].positions) {
      if (p.allFinite()) b.extend(p, r);
    }
  }
  return b;
}

void append_frame_points(const Manifest& manifest, const Frame& frame, std::vector<PaddedPoint>& out) {
  for (std::size_t i = 0; i < frame.rods.size(); ++i) {
    const double r = i < manifest.rods.size() ? manifest.rods[i].radius : 0.0;
    for (const Vec3& p : frame.rods[i].positions) {
      if (p.allFinite()) out.push_back(PaddedPoint{p, r});
    }
  }
}

Vec3 scene_up(const nlohmann::json& scene) {
  if (scene.is_object() && scene.contains("gravity") && scene["gravity"].is_array()) {
    const auto& g = scene["gravity"];
    Vec3 v = Vec3::Zero();
    bool ok = g.size() == 2 || g.size() == 3;
    for (std::size_t i = 0; ok && i < g.size(); ++i) {
      ok = g[i].is_number();
      if (ok) v[static_cast<int>(i)] = g[i].get<double>();
    }
    if (ok && v.allFinite() && v.norm() > 0.0) return -v.normalized();
  }
  return Vec3::UnitY();
}

Camera fit_camera_along(const Bounds& bounds_in, const Vec3& view_dir, const Vec3& up_hint,
                        ProjectionType type, double fov_deg, double aspect, double margin,
                        const std::vector<PaddedPoint>& points) {
  assert(aspect > 0.0 && margin >= 0.0 && margin < 1.0);
  const Bounds bounds = usable(bounds_in);
  Vec3 right, up, fwd;
  camera_basis(view_dir, up_hint, right, up, fwd);

  Camera cam;
  cam.type = type;
  cam.target = bounds.center();
  cam.up = up;
  cam.fov_deg = fov_deg;
  const double diag = bounds.size().norm();

  const double fill = 1.0 - margin;
  double need_half_height = 0.0;  // orthographic
  double distance = 0.0;          // perspective
  const double tan_v = std::tan(deg_to_rad(fov_deg) / 2.0) * fill;
  const double tan_h = tan_v * aspect;
  double max_front = -std::numeric_limits<double>::infinity();
  // Each probe (a box corner, or a vertex grown by its pad) must land inside the image.
  auto keep_in_view = [&](const Vec3& p, double pad) {
    const Vec3 rel = p - cam.target;
    const double x = std::abs(rel.dot(right)) + pad, y = std::abs(rel.dot(up)) + pad;
    const double z = rel.dot(fwd) - pad;
    need_half_height = std::max({need_half_height, y / fill, x / (fill * aspect)});
    // Depth of the probe is distance + z; it must satisfy |x| <= tan_h (distance + z).
    distance = std::max({distance, x / tan_h - z, y / tan_v - z});
    max_front = std::max(max_front, -z);
  };
  if (points.empty()) {
    for (int c = 0; c < 8; ++c) {
      keep_in_view(Vec3((c & 1) ? bounds.max.x() : bounds.min.x(), (c & 2) ? bounds.max.y() : bounds.min.y(),
                        (c & 4) ? bounds.max.z() : bounds.min.z()),
                   0.0);
    }
  } else {
    for (const PaddedPoint& p : points) keep_in_view(p.point, p.pad);
  }
  if (type == ProjectionType::Orthographic) {
    cam.ortho_height = 2.0 * need_half_height;
    cam.position = cam.target - fwd * (2.0 * diag);
  } else {
    distance = std::max(distance, max_front + 0.05 * diag);
    cam.position = cam.target - fwd * distance;
  }
  return cam;
}

Camera fit_camera(const Bounds& bounds, int dimension, double aspect, const Vec3& up_in,
                  const std::vector<PaddedPoint>& points) {
  if (dimension == 2) {
    Vec3 up(up_in.x(), up_in.y(), 0.0);
    if (up.norm() < 1e-12) up = Vec3::UnitY();
    return fit_camera_along(bounds, -Vec3::UnitZ(), up, ProjectionType::Orthographic, 30.0,
                            aspect, 0.08, points);
  }
  // A 3/4 view: 35 deg around `up` from the front axis towards the side axis, 25 deg above
  // the horizon.
  const Vec3 u = up_in.norm() > 0.0 ? up_in.normalized() : Vec3::UnitY();
  Vec3 front = Vec3::UnitZ();
  if (std::abs(front.dot(u)) > 0.9) front = -Vec3::UnitY();
  front = (front - front.dot(u) * u).normalized();
  const Vec3 side = u.cross(front);
  const double az = deg_to_rad(35.0), el = deg_to_rad(25.0);
  const Vec3 to_eye =
      std::sin(az) * std::cos(el) * side + std::sin(el) * u + std::cos(az) * std::cos(el) * front;
  return fit_camera_along(bounds, -to_eye, u, ProjectionType::Perspective, 30.0, aspect, 0.08, points);
}

Projector::Projector(const Camera& camera, int width, int height, int top)
    : camera_(camera), width_(width), height_(height), top_(top) {
  assert(width > 0 && height > 0);
  Vec3 view = camera.target - camera.position;
  if (view.norm() <= 0.0) view = -Vec3::UnitZ();
  camera_basis(view, camera.up, right_, up_, forward_);
  if (camera.type == ProjectionType::Perspective) {
    focal_px_ = 0.5 * height / std::tan(deg_to_rad(camera.fov_deg) / 2.0);
    near_ = std::max(1e-9, 1e-6 * (camera.target - camera.position).norm());
  } else {
    focal_px_ = height / camera.ortho_height;
    near_ = -std::numeric_limits<double>::infinity();
  }
}

ScreenPoint Projector::project(const Vec3& p) const {
  const Vec3 d = p - camera_.position;
  const double x = d.dot(right_), y = d.dot(up_), z = d.dot(forward_);
  ScreenPoint s;
  s.depth = z;
  if (camera_.type == ProjectionType::Perspective) {
    // Callers clip at the near plane first; a point that still lies behind it (or a NaN from
    // coordinates too large to subtract) is drawn at the near plane rather than aborting the
    // render (asserts stay on in release builds).
    s.pixels_per_meter = focal_px_ / (z >= near_ ? z : near_);
  } else {
    s.pixels_per_meter = focal_px_;
  }
  s.pixel = Vec2(0.5 * width_ + s.pixels_per_meter * x, top_ + 0.5 * height_ - s.pixels_per_meter * y);
  return s;
}

CameraRay Projector::ray(double px, double py) const {
  const double x = px - 0.5 * width_, y = top_ + 0.5 * height_ - py;
  CameraRay r;
  if (camera_.type == ProjectionType::Perspective) {
    r.origin = camera_.position;
    r.direction = (focal_px_ * forward_ + x * right_ + y * up_).normalized();
  } else {
    r.origin = camera_.position + (x / focal_px_) * right_ + (y / focal_px_) * up_;
    r.direction = forward_;
  }
  return r;
}

double Projector::pixel_size_at(double depth) const {
  if (camera_.type == ProjectionType::Orthographic) return 1.0 / focal_px_;
  return std::max(depth, near_) / focal_px_;
}

Vec3 Projector::to_eye(const Vec3& p) const {
  if (camera_.type == ProjectionType::Orthographic) return -forward_;
  const Vec3 d = camera_.position - p;
  const double n = d.norm();
  return n > 0.0 ? Vec3(d / n) : Vec3(-forward_);
}

}  // namespace bristle

#include "bristle/export/collider_mesh.hpp"

#include <cmath>
#include <map>
#include <utility>

namespace bristle {

namespace {

constexpr double kPi = 3.14159265358979323846;

// A right-handed rotation whose third column is the unit vector d. The first column is the
// coordinate axis least aligned with d (the first of equals), made perpendicular to it: the
// same d always gives the same frame, and a 2D plane's square spans z and its line.
Mat3 frame_with_z(const Vec3& d) {
  int least = 0;
  for (int i = 1; i < 3; ++i)
    if (std::abs(d[i]) < std::abs(d[least])) least = i;
  Vec3 u = Vec3::Unit(least) - d[least] * d;
  u.normalize();
  Mat3 r;
  r.col(0) = u;
  r.col(1) = d.cross(u);
  r.col(2) = d;
  return r;
}

// A surface of revolution about z from a list of rings (radius about z, height), closed by a
// pole above the first ring and one below the last. Rings go from top to bottom; each has
// kSphereSegments vertices at longitudes 2 pi i / kSphereSegments.
TriangleMesh revolution(const std::vector<std::pair<double, double>>& rings, double top, double bottom) {
  constexpr int n = kSphereSegments;
  TriangleMesh m;
  m.vertices.emplace_back(0.0, 0.0, top);
  for (const auto& [radius, z] : rings) {
    for (int i = 0; i < n; ++i) {
      const double phi = 2.0 * kPi * i / n;
      m.vertices.emplace_back(radius * std::cos(phi), radius * std::sin(phi), z);
    }
  }
  m.vertices.emplace_back(0.0, 0.0, bottom);
  const int south = static_cast<int>(m.vertices.size()) - 1;
  const auto at = [](int ring, int i) { return 1 + ring * n + (i % n); };
  const int count = static_cast<int>(rings.size());
  // Counter-clockwise about z seen from above is outward for an upper vertex followed by the
  // two lower ones (checked by tests/export/test_collider_mesh.cpp).
  for (int i = 0; i < n; ++i) m.triangles.push_back({0, at(0, i), at(0, i + 1)});
  for (int r = 0; r + 1 < count; ++r) {
    for (int i = 0; i < n; ++i) {
      m.triangles.push_back({at(r, i), at(r + 1, i), at(r + 1, i + 1)});
      m.triangles.push_back({at(r, i), at(r + 1, i + 1), at(r, i + 1)});
    }
  }
  for (int i = 0; i < n; ++i) m.triangles.push_back({at(count - 1, i), south, at(count - 1, i + 1)});
  return m;
}

// A sphere of the given radius whose upper half is raised by half_height and lower half
// lowered by it: a sphere for 0, else a capsule with its cylinder between the two equators.
TriangleMesh capsule(double radius, double half_height) {
  std::vector<std::pair<double, double>> rings;
  for (int j = 1; j < kSphereRings; ++j) {
    const double theta = kPi * j / kSphereRings;  // from the north pole
    const double rxy = radius * std::sin(theta), z = radius * std::cos(theta);
    if (2 * j < kSphereRings) {
      rings.emplace_back(rxy, z + half_height);
    } else if (2 * j > kSphereRings) {
      rings.emplace_back(rxy, z - half_height);
    } else {  // the equator: one ring for a sphere, the cylinder's two ends for a capsule
      rings.emplace_back(rxy, half_height);
      if (half_height > 0.0) rings.emplace_back(rxy, -half_height);
    }
  }
  return revolution(rings, radius + half_height, -radius - half_height);
}

TriangleMesh box(const Vec3& h) {
  TriangleMesh m;
  std::map<int, int> corner_index;  // corner (bit k set: +h_k) -> vertex
  const auto corner = [&](int bits) {
    const auto [it, added] = corner_index.emplace(bits, static_cast<int>(m.vertices.size()));
    if (added) {
      m.vertices.emplace_back((bits & 1) ? h.x() : -h.x(), (bits & 2) ? h.y() : -h.y(),
                              (bits & 4) ? h.z() : -h.z());
    }
    return it->second;
  };
  for (int k = 0; k < 3; ++k) {
    const int k1 = (k + 1) % 3, k2 = (k + 2) % 3;
    if (h[k1] == 0.0 || h[k2] == 0.0) continue;  // no area
    for (const int side : {1, -1}) {
      if (side < 0 && h[k] == 0.0) continue;  // the same rectangle as the + side
      const int base = side > 0 ? (1 << k) : 0;
      // Corners (-,-), (+,-), (+,+), (-,+) along k1, k2: counter-clockwise seen from +k.
      std::array<int, 4> q = {corner(base), corner(base | (1 << k1)), corner(base | (1 << k1) | (1 << k2)),
                              corner(base | (1 << k2))};
      if (side < 0) std::swap(q[1], q[3]);  // seen from -k
      m.triangles.push_back({q[0], q[1], q[2]});
      m.triangles.push_back({q[0], q[2], q[3]});
    }
  }
  return m;
}

TriangleMesh square(double s) {
  TriangleMesh m;
  m.vertices = {Vec3(-s, -s, 0.0), Vec3(s, -s, 0.0), Vec3(s, s, 0.0), Vec3(-s, s, 0.0)};
  m.triangles = {{0, 1, 2}, {0, 2, 3}};
  return m;
}

}  // namespace

const char* collider_type_name(ColliderType type) {
  switch (type) {
    case ColliderType::Plane: return "plane";
    case ColliderType::Sphere: return "sphere";
    case ColliderType::Capsule: return "capsule";
    case ColliderType::Box: return "box";
  }
  return "collider";
}

RigidTransform collider_placement(const Collider& c, const ExportColliders& region) {
  RigidTransform p;
  switch (c.type) {
    case ColliderType::Plane: {
      const Vec3 n = c.normal.norm() > 0.0 ? Vec3(c.normal.normalized()) : Vec3(Vec3::UnitY());
      p.rotation = frame_with_z(n);
      p.translation = region.focus - (region.focus - c.point).dot(n) * n;
      break;
    }
    case ColliderType::Sphere:
      p.translation = c.center;
      break;
    case ColliderType::Capsule: {
      const Vec3 axis = c.b - c.a;
      if (axis.norm() > 0.0) p.rotation = frame_with_z(axis.normalized());
      p.translation = 0.5 * (c.a + c.b);
      break;
    }
    case ColliderType::Box:
      p.rotation = c.rotation;
      p.translation = c.center;
      break;
  }
  return p;
}

TriangleMesh collider_local_mesh(const Collider& c, const ExportColliders& region) {
  switch (c.type) {
    case ColliderType::Plane: return square(region.plane_half_size);
    case ColliderType::Sphere: return c.radius > 0.0 ? capsule(c.radius, 0.0) : TriangleMesh{};
    case ColliderType::Capsule:
      return c.radius > 0.0 ? capsule(c.radius, 0.5 * (c.b - c.a).norm()) : TriangleMesh{};
    case ColliderType::Box: return box(c.half_extents);
  }
  return {};
}

TriangleMesh collider_mesh_at(const ExportColliders& colliders, std::size_t i, double time) {
  const Collider& c = colliders.rest[i];
  TriangleMesh m = collider_local_mesh(c, colliders);
  const RigidTransform world = colliders.pose(i, time) * collider_placement(c, colliders);
  for (Vec3& v : m.vertices) v = world.apply(v);
  return m;
}

}  // namespace bristle

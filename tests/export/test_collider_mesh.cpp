#include <doctest/doctest.h>

#include <cmath>
#include <map>
#include <utility>

#include "bristle/export/collider_mesh.hpp"

using namespace bristle;

namespace {

constexpr double kPi = 3.14159265358979323846;

// Volume enclosed by a closed triangle mesh (divergence theorem): positive when every
// triangle turns counter-clockwise seen from outside.
double signed_volume(const TriangleMesh& m) {
  double v = 0.0;
  for (const auto& t : m.triangles) {
    v += m.vertices[t[0]].dot(m.vertices[t[1]].cross(m.vertices[t[2]])) / 6.0;
  }
  return v;
}

// Every edge is shared by exactly two triangles, traversed once in each direction: a closed,
// consistently oriented surface.
bool closed_and_oriented(const TriangleMesh& m) {
  std::map<std::pair<int, int>, int> directed;
  for (const auto& t : m.triangles) {
    for (int k = 0; k < 3; ++k) ++directed[{t[k], t[(k + 1) % 3]}];
  }
  for (const auto& [edge, count] : directed) {
    if (count != 1) return false;
    const auto back = directed.find({edge.second, edge.first});
    if (back == directed.end() || back->second != 1) return false;
  }
  return !m.triangles.empty();
}

Vec3 normal(const TriangleMesh& m, const std::array<int, 3>& t) {
  return (m.vertices[t[1]] - m.vertices[t[0]]).cross(m.vertices[t[2]] - m.vertices[t[0]]);
}

ExportColliders one(const Collider& c) {
  ExportColliders out;
  out.rest = {c};
  out.handle_of = {-1};
  return out;
}

}  // namespace

TEST_CASE("collider mesh: a sphere is a closed UV sphere of its radius, normals outward") {
  Collider c;
  c.type = ColliderType::Sphere;
  c.center = Vec3(0.3, -0.2, 1.0);
  c.radius = 0.25;
  const TriangleMesh m = collider_mesh_at(one(c), 0, 0.0);
  CHECK(m.vertices.size() == 2u + (kSphereRings - 1) * kSphereSegments);
  CHECK(m.triangles.size() == 2u * kSphereSegments * (kSphereRings - 1));
  for (const Vec3& v : m.vertices) CHECK((v - c.center).norm() == doctest::Approx(c.radius).epsilon(1e-12));
  CHECK(closed_and_oriented(m));
  for (const auto& t : m.triangles) {
    const Vec3 centroid = (m.vertices[t[0]] + m.vertices[t[1]] + m.vertices[t[2]]) / 3.0;
    CHECK(normal(m, t).dot(centroid - c.center) > 0.0);
  }
  // An inscribed polyhedron: a little less than the sphere's volume.
  const double ball = 4.0 / 3.0 * kPi * std::pow(c.radius, 3);
  // Translation does not change the enclosed volume.
  CHECK(signed_volume(m) < ball);
  CHECK(signed_volume(m) > 0.97 * ball);
}

TEST_CASE("collider mesh: a capsule is a closed surface at its radius from the segment") {
  Collider c;
  c.type = ColliderType::Capsule;
  c.a = Vec3(0.0, 0.0, 0.0);
  c.b = Vec3(1.0, 2.0, -0.5);
  c.radius = 0.1;
  const TriangleMesh m = collider_mesh_at(one(c), 0, 0.0);
  CHECK(closed_and_oriented(m));
  const Vec3 ab = c.b - c.a;
  for (const Vec3& v : m.vertices) {
    const double s = std::clamp((v - c.a).dot(ab) / ab.squaredNorm(), 0.0, 1.0);
    CHECK((v - (c.a + s * ab)).norm() == doctest::Approx(c.radius).epsilon(1e-12));
  }
  // The cylinder between the caps' equators: a little less than pi r^2 |ab| + 4/3 pi r^3.
  const double volume = kPi * c.radius * c.radius * ab.norm() + 4.0 / 3.0 * kPi * std::pow(c.radius, 3);
  CHECK(signed_volume(m) < volume);
  CHECK(signed_volume(m) > 0.97 * volume);
  // The poles are the segment's ends pushed out by the radius along it.
  CHECK((m.vertices.front() - (c.b + c.radius * ab.normalized())).norm() < 1e-12);
  CHECK((m.vertices.back() - (c.a - c.radius * ab.normalized())).norm() < 1e-12);
}

TEST_CASE("collider mesh: a box has its 8 corners and its exact volume; a flat box one rectangle") {
  Collider c;
  c.type = ColliderType::Box;
  c.center = Vec3(1.0, 2.0, 3.0);
  c.half_extents = Vec3(0.5, 0.25, 0.125);
  c.rotation = Eigen::AngleAxisd(0.7, Vec3(1.0, 2.0, 3.0).normalized()).toRotationMatrix();
  const TriangleMesh m = collider_mesh_at(one(c), 0, 0.0);
  CHECK(m.vertices.size() == 8);
  CHECK(m.triangles.size() == 12);
  CHECK(closed_and_oriented(m));
  CHECK(signed_volume(m) == doctest::Approx(8.0 * 0.5 * 0.25 * 0.125).epsilon(1e-12));
  for (const Vec3& v : m.vertices) {
    const Vec3 local = c.rotation.transpose() * (v - c.center);
    CHECK(local.cwiseAbs().isApprox(c.half_extents, 1e-12));
  }

  // A 2D box (no z extent): one rectangle facing +z, not two coincident ones.
  Collider flat;
  flat.type = ColliderType::Box;
  flat.center = Vec3(0.0, 1.0, 0.0);
  flat.half_extents = Vec3(0.5, 0.25, 0.0);
  const TriangleMesh r = collider_mesh_at(one(flat), 0, 0.0);
  CHECK(r.vertices.size() == 4);
  REQUIRE(r.triangles.size() == 2);
  for (const auto& t : r.triangles) CHECK(normal(r, t).normalized().isApprox(Vec3::UnitZ(), 1e-12));
}

TEST_CASE("collider mesh: a plane is a square about the focus, facing along its normal") {
  Collider c;  // a plane
  c.point = Vec3(0.0, -0.1, 0.0);
  c.normal = Vec3(0.0, 2.0, 0.0);  // not unit: the scene loader normalises, the mesh must too
  ExportColliders region = one(c);
  fit_planes(region, Vec3(-1.0, 0.0, -0.5), Vec3(1.0, 1.0, 0.5));
  CHECK(region.focus.isApprox(Vec3(0.0, 0.5, 0.0)));
  CHECK(region.plane_half_size == doctest::Approx(std::sqrt(4.0 + 1.0 + 1.0)));
  const TriangleMesh m = collider_mesh_at(region, 0, 0.0);
  REQUIRE(m.vertices.size() == 4);
  REQUIRE(m.triangles.size() == 2);
  Vec3 mean = Vec3::Zero();
  for (const Vec3& v : m.vertices) {
    CHECK(v.y() == doctest::Approx(-0.1));
    mean += v / 4.0;
  }
  CHECK((mean - Vec3(0.0, -0.1, 0.0)).norm() < 1e-12);
  CHECK((m.vertices[2] - m.vertices[0]).norm() == doctest::Approx(2.0 * std::sqrt(2.0) * region.plane_half_size));
  for (const auto& t : m.triangles) CHECK(normal(m, t).normalized().isApprox(Vec3::UnitY(), 1e-12));

  // A 2D plane (normal in xy): the square spans z and the plane's line.
  Collider slope;
  slope.normal = Vec3(-1.0, 1.0, 0.0).normalized();
  const TriangleMesh s = collider_mesh_at(one(slope), 0, 0.0);
  for (const auto& t : s.triangles) CHECK(normal(s, t).normalized().isApprox(slope.normal, 1e-12));
  double z_span = 0.0;
  for (const Vec3& v : s.vertices) z_span = std::max(z_span, std::abs(v.z()));
  CHECK(z_span == doctest::Approx(1.0));  // the default half size
}

TEST_CASE("collider mesh: a handled collider is moved by its handle's pose at the time asked") {
  Collider c;
  c.type = ColliderType::Capsule;
  c.a = Vec3(1.0, 0.0, 0.0);
  c.b = Vec3(2.0, 0.0, 0.0);
  c.radius = 0.1;
  ExportColliders colliders = one(c);
  Handle turn;
  turn.name = "turn";
  turn.keys = {HandleKey{0.0}, HandleKey{1.0, Vec3(0.0, 0.0, 0.5), Vec3::UnitZ(), kPi / 2.0}};
  colliders.handles = {turn};
  colliders.handle_of = {0};
  CHECK(colliders.any_moves());
  const TriangleMesh rest = collider_mesh_at(colliders, 0, 0.0);
  const TriangleMesh end = collider_mesh_at(colliders, 0, 1.0);
  REQUIRE(rest.vertices.size() == end.vertices.size());
  const RigidTransform pose = turn.pose(1.0);
  for (std::size_t v = 0; v < rest.vertices.size(); ++v) {
    CHECK((end.vertices[v] - pose.apply(rest.vertices[v])).norm() < 1e-12);
  }
  // A quarter turn about z and a lift of 0.5: the far pole goes from x = 2.1 to y = 2.1.
  CHECK((end.vertices.front() - Vec3(0.0, 2.1, 0.5)).norm() < 1e-12);
  // A static collider ignores the time.
  colliders.handle_of = {-1};
  CHECK_FALSE(colliders.any_moves());
  CHECK(collider_mesh_at(colliders, 0, 1.0).vertices == rest.vertices);
}

TEST_CASE("collider mesh: a sphere or capsule of radius 0 has no surface") {
  Collider point;
  point.type = ColliderType::Sphere;
  CHECK(collider_mesh_at(one(point), 0, 0.0).triangles.empty());
  point.type = ColliderType::Capsule;
  point.b = Vec3::UnitX();
  CHECK(collider_mesh_at(one(point), 0, 0.0).vertices.empty());
}

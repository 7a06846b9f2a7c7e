#pragma once
/// Models built in code for the model and integrator tests (no JSON: the scene loader is
/// tested on its own). Every builder returns plain data; a test that runs an ImplicitEuler
/// must keep the Model alive and unmoved for as long as the integrator exists, since the
/// integrator holds a reference to it.

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <Eigen/Geometry>

#include "bristle/math/types.hpp"
#include "bristle/model/model.hpp"
#include "bristle/model/rod.hpp"

namespace bristle::test {

inline constexpr double kPi = 3.14159265358979323846;

/// True when a and b hold the same doubles bit for bit (thread-count and rerun determinism).
inline bool bitwise_equal(const VecX& a, const VecX& b) {
  return a.size() == b.size() &&
         std::memcmp(a.data(), b.data(), sizeof(double) * static_cast<std::size_t>(a.size())) == 0;
}

/// A material from density [kg/m^3], radius [m] and Young's modulus [Pa].
inline Material make_material(double density, double radius, double youngs_modulus) {
  Material m;
  m.density = density;
  m.radius = radius;
  m.youngs_modulus = youngs_modulus;
  return m;
}

/// Steel-like: 7850 kg/m^3, radius 1 cm, E = 200 GPa.
inline Material steel() { return make_material(7850.0, 0.01, 2.0e11); }

/// A soft, light material whose stretch and bend stiffnesses are within a few orders of
/// magnitude of each other for edges of about 0.1 m (good for finite differences).
inline Material soft_material() { return make_material(1000.0, 0.02, 1.0e5); }

/// Vertices of a straight polyline from `from` to `to` with `segments` equal edges.
inline std::vector<Vec3> straight_vertices(const Vec3& from, const Vec3& to, int segments) {
  std::vector<Vec3> v;
  for (int i = 0; i <= segments; ++i) v.push_back(from + (to - from) * (double(i) / segments));
  return v;
}

/// Vertices of a circular arc: starts at `origin` heading along +x, turns counter-clockwise
/// in the xy-plane by `turn` [rad] per edge, every edge of length `edge`. The first edge is
/// straight along +x (so a clamped root on vertices 0 and 1 keeps the root horizontal).
inline std::vector<Vec3> arc_vertices(const Vec3& origin, int segments, double edge, double turn) {
  std::vector<Vec3> v{origin};
  double heading = 0.0;
  for (int j = 0; j < segments; ++j) {
    if (j > 0) heading += turn;
    v.push_back(v.back() + edge * Vec3(std::cos(heading), std::sin(heading), 0.0));
  }
  return v;
}

/// Zig-zag in the xy-plane: edges of length `edge` alternately turning by +turn and -turn.
inline std::vector<Vec3> zigzag_vertices(int segments, double edge, double turn) {
  std::vector<Vec3> v{Vec3::Zero()};
  double heading = -0.5 * turn;
  for (int j = 0; j < segments; ++j) {
    v.push_back(v.back() + edge * Vec3(std::cos(heading), std::sin(heading), 0.0));
    heading = (j % 2 == 0) ? heading + turn : heading - turn;
  }
  return v;
}

/// A random polyline: each edge of length in [0.7, 1.3] x `edge`, turning by up to
/// `max_turn` [rad] from the previous one; in the xy-plane when dimension == 2.
inline std::vector<Vec3> random_vertices(int segments, double edge, double max_turn, int dimension,
                                         std::mt19937& rng) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<Vec3> v{Vec3(u(rng), u(rng), dimension == 3 ? u(rng) : 0.0) * edge};
  Vec3 dir(1.0, 0.0, 0.0);
  for (int j = 0; j < segments; ++j) {
    if (j > 0) {
      Vec3 axis = dimension == 3 ? Vec3(u(rng), u(rng), u(rng)) : Vec3::UnitZ();
      if (dimension == 3) axis = (axis - axis.dot(dir) * dir).normalized();
      dir = Eigen::AngleAxisd(max_turn * u(rng), axis) * dir;
    }
    v.push_back(v.back() + edge * (1.0 + 0.3 * u(rng)) * dir);
  }
  return v;
}

inline Rod rod_from_vertices(std::vector<Vec3> vertices, int dimension, std::vector<int> fixed = {},
                             const Material& material = soft_material(),
                             RestShape rest = RestShape::Initial, std::string name = "rod") {
  return make_rod(std::move(name), material, std::move(vertices), std::move(fixed), rest, dimension);
}

/// A straight rod of `segments` equal edges from `from` to `to`.
inline Rod straight_rod(int segments, const Vec3& from, const Vec3& to, int dimension,
                        std::vector<int> fixed = {}, const Material& material = soft_material(),
                        std::string name = "rod") {
  return rod_from_vertices(straight_vertices(from, to, segments), dimension, std::move(fixed), material,
                           RestShape::Initial, std::move(name));
}

/// A horizontal clamped rod (vertices 0 and 1 fixed) along +x from the origin.
inline Rod clamped_rod(int segments, double length, int dimension, const Material& material,
                       std::string name = "rod") {
  return straight_rod(segments, Vec3::Zero(), Vec3(length, 0.0, 0.0), dimension, {0, 1}, material,
                      std::move(name));
}

/// Seed 003's L: three vertices, a horizontal edge then a vertical one, turning by +pi/2.
inline std::vector<Vec3> l_shape_vertices(double edge) {
  return {Vec3(0.0, 0.0, 0.0), Vec3(edge, 0.0, 0.0), Vec3(edge, edge, 0.0)};
}

/// A finalized model of the given rods.
inline Model make_model(int dimension, std::vector<Rod> rods, const Vec3& gravity = Vec3::Zero()) {
  Model model;
  model.dimension = dimension;
  model.rods = std::move(rods);
  model.gravity = gravity;
  model.finalize();
  return model;
}

inline Model single_rod_model(int dimension, Rod rod, const Vec3& gravity = Vec3::Zero()) {
  std::vector<Rod> rods;
  rods.push_back(std::move(rod));
  return make_model(dimension, std::move(rods), gravity);
}

/// Standard gravity along -y.
inline Vec3 earth_gravity() { return Vec3(0.0, -9.81, 0.0); }

/// Sets every vertex of the state to `positions` (a rod's vertex list, in the layout order).
inline void set_rod_positions(const Model& model, VecX& x, int rod, const std::vector<Vec3>& positions) {
  for (int i = 0; i < static_cast<int>(positions.size()); ++i)
    x.segment(model.layout.vertex_dof(rod, i), model.dimension) = positions[i].head(model.dimension);
}

/// All vertices of a rod read back from a state vector.
inline std::vector<Vec3> rod_positions(const Model& model, const VecX& x, int rod) {
  std::vector<Vec3> p;
  for (int i = 0; i < model.rods[rod].vertex_count(); ++i) p.push_back(vertex_position(model, x, rod, i));
  return p;
}

/// Applies the rigid motion p -> R p + t to every vertex of a state vector (R, t in 3D; in
/// 2D only the rotation about z and the xy translation must be used).
inline VecX rigid_motion(const Model& model, const VecX& x, const Mat3& rotation, const Vec3& translation) {
  VecX y = x;
  const int D = model.dimension;
  for (int v = 0; v < model.layout.vertex_count(); ++v) {
    const int dof = model.layout.vertex_dof(v);
    Vec3 p = Vec3::Zero();
    p.head(D) = x.segment(dof, D);
    y.segment(dof, D) = (rotation * p + translation).head(D);
  }
  return y;
}

}  // namespace bristle::test

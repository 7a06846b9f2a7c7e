#pragma once
/// One rod: a polyline of vertices with rest lengths, rest turning angles and fixed vertices.

#include <string>
#include <vector>

#include "bristle/math/types.hpp"
#include "bristle/model/material.hpp"

namespace bristle {

/// What the rod's rest shape is (interface.md section 1, `rods[].rest`).
enum class RestShape {
  Initial,   ///< rest lengths and rest angles from the given vertices
  Straight,  ///< rest lengths from the vertices, rest angles zero
};

struct Rod {
  std::string name;
  Material material;
  /// Initial vertex positions [m]; the third component is 0 in 2D scenes.
  std::vector<Vec3> initial_positions;
  /// Rest length of edge j (between vertices j and j+1) [m].
  std::vector<double> rest_lengths;
  /// Rest turning angle at vertex i [rad]; entries 0 and n-1 are unused (zero).
  /// Signed in 2D, in [0, pi] in 3D.
  std::vector<double> rest_angles;
  /// Indices of vertices held in place, sorted and unique.
  std::vector<int> fixed;
  /// Whether each edge carries a twist DOF (its material frame's angle about the edge,
  /// discrete elastic rods). Which twists are fixed: is_twist_fixed.
  bool twist = false;
  /// A rod with twist: the direction at the root its first material director m1 (the
  /// section's first axis) is laid along (made perpendicular to the first edge); zero: any
  /// perpendicular.
  Vec3 material_normal = Vec3::Zero();
  /// A rod with twist: the rest twist per length [rad/m] on top of the Bishop frames' zero;
  /// interior vertex i's rest twist is rest_twist * l_i. The rod starts in that twisted rest
  /// state (initial_twists).
  double rest_twist = 0.0;
  /// Whether an end edge's twist is fixed: by the default rule, or as a scene's
  /// `twist_fixed` says.
  enum class TwistEnd { Default, Fixed, Free };
  TwistEnd twist_root = TwistEnd::Default, twist_tip = TwistEnd::Default;
  /// The rigid motion of the handle this rod follows over the step under way,
  /// x -> carry_rotation x + carry_translation over carry_duration [s], and the handle's index
  /// (-1 and the identity for a rod without a handle). Set by HandleDriver::prepare_step.
  /// With rod-rod contact Newton starts with the free vertices carried by it, so rods held by
  /// one handle keep their distances exactly (docs/contact.md, "Handles").
  int carry_group = -1;
  Mat3 carry_rotation = Mat3::Identity();
  Vec3 carry_translation = Vec3::Zero();  ///< [m]
  double carry_duration = 0.0;            ///< [s]

  int vertex_count() const { return static_cast<int>(initial_positions.size()); }
  int edge_count() const { return vertex_count() - 1; }
  bool is_fixed(int vertex) const;
  /// Whether edge j's twist DOF is held (false for a rod without twist). Default: iff both of
  /// its vertices are fixed (a clamp holds the frame). `twist_root` (`twist_tip`), when not
  /// Default, decides instead for the root's (tip's) end edges: edge 0 (the last edge) and
  /// every edge whose vertices, and all vertices from it to that end, are fixed. An edge both
  /// ends' settings cover (every vertex fixed, both given) is held if either holds it.
  bool is_twist_fixed(int edge) const;
  /// Twist angle of each edge in the initial state [rad]: theta_0 = 0,
  /// theta_j = theta_{j-1} + rest_twist * l_j, so every interior vertex starts at its rest
  /// twist (empty for a rod without twist).
  std::vector<double> initial_twists() const;

  /// Lumped mass of vertex i: density A (L_{i-1} + L_i) / 2 [kg].
  double vertex_mass(int vertex) const;
  /// Stretch stiffness E A / L_j of edge j [N/m].
  double stretch_stiffness(int edge) const;
  /// Voronoi length l_i = (L_{i-1} + L_i) / 2 of interior vertex i [m].
  double voronoi_length(int vertex) const;
  /// Bending stiffness E I / l_i of interior vertex i [N m].
  double bend_stiffness(int vertex) const;
  /// Total rest length [m].
  double rest_length() const;
};

/// Builds a rod from its vertices. `dimension` decides whether rest angles are signed (2D)
/// or unsigned (3D). Preconditions (checked by the scene loader, asserted here): at least two
/// vertices, no zero-length edge, fixed indices in range.
Rod make_rod(std::string name, const Material& material, std::vector<Vec3> positions,
             std::vector<int> fixed, RestShape rest, int dimension);

}  // namespace bristle

#pragma once
/// The simulated system: rods, external fields, and how their degrees of freedom are laid
/// out in one state vector.
///
/// DOF layout. Every rod owns a contiguous run of DOFs: D per vertex (D = dimension), vertex
/// after vertex, and for a rod with twist (Rod::twist) one twist DOF per edge between its two
/// vertices' DOFs: x0, theta0, x1, theta1, ..., x_{n-1}. Nothing outside DofLayout assumes that
/// a DOF index is D * vertex: code asks `vertex_dof(rod, i)`, `edge_dof(rod, j)`,
/// `rod_dof_range(rod)` and `rod_vertex_range(rod)`. The layout's nodes are the DOF groups in
/// DOF order (a vertex's D DOFs, or an edge's twist DOF): the matrix pattern is built over
/// them. DofLayout is the one owner of these index tables.
///
/// Fixed vertices are eliminated from the linear system: the "free" numbering skips their
/// DOFs, and each rod's free DOFs stay contiguous, which is what the per-rod preconditioner
/// relies on.

#include <string>
#include <utility>
#include <vector>

#include "bristle/math/types.hpp"
#include "bristle/model/collider.hpp"
#include "bristle/model/rod.hpp"

namespace bristle {

/// A point force on one vertex, optionally ramped in linearly over `ramp` seconds.
struct PointLoad {
  int rod = 0;
  int vertex = 0;
  Vec3 force = Vec3::Zero();  ///< [N]
  double ramp = 0.0;          ///< [s]; 0 applies the full force from t = 0

  Vec3 force_at(double time) const;
};

class DofLayout {
 public:
  DofLayout() = default;
  DofLayout(int dimension, const std::vector<Rod>& rods);

  int dimension() const { return dimension_; }
  int dof_count() const { return dof_count_; }
  int free_dof_count() const { return free_dof_count_; }
  int vertex_count() const { return static_cast<int>(vertex_dof_.size()); }

  int rod_count() const { return static_cast<int>(rod_free_range_.size()); }
  /// Global index of a rod's vertex (rods' vertices numbered one after another).
  int global_vertex(int rod, int vertex) const { return rod_first_vertex_[rod] + vertex; }
  /// [begin, end) of a rod's vertices in the global numbering.
  std::pair<int, int> rod_vertex_range(int rod) const { return {rod_first_vertex_[rod], rod_first_vertex_[rod + 1]}; }
  /// [begin, end) of a rod's DOFs, fixed ones included.
  std::pair<int, int> rod_dof_range(int rod) const { return {rod_first_dof_[rod], rod_first_dof_[rod + 1]}; }
  /// The rod a global vertex belongs to.
  int vertex_rod(int global_vertex) const { return vertex_rod_[global_vertex]; }
  /// A global vertex's index within its rod.
  int vertex_in_rod(int global_vertex) const { return global_vertex - rod_first_vertex_[vertex_rod_[global_vertex]]; }
  /// First DOF of a vertex, by global vertex index.
  int vertex_dof(int global_vertex) const { return vertex_dof_[global_vertex]; }
  int vertex_dof(int rod, int vertex) const { return vertex_dof_[global_vertex(rod, vertex)]; }
  /// First (only) DOF of a rod's edge twist, or -1 when the rod has no twist DOFs.
  int edge_dof(int rod, int edge) const {
    return rod_first_twist_[rod] < 0 ? -1 : twist_dof_[rod_first_twist_[rod] + edge];
  }
  /// Twist DOFs in all rods.
  int twist_dof_count() const { return static_cast<int>(twist_dof_.size()); }
  /// Nodes: the DOF groups (vertices and twist edges) in DOF order, `node_count()` of them;
  /// node k's DOFs are [node_dof(k), node_dof(k + 1)).
  int node_count() const { return static_cast<int>(node_dof_.size()) - 1; }
  int node_dof(int node) const { return node_dof_[node]; }
  /// Index of a DOF among the free DOFs, or -1 when the DOF is held fixed.
  int free_index(int dof) const { return free_index_[dof]; }
  /// [begin, end) of a rod's free DOFs in the free numbering.
  std::pair<int, int> rod_free_range(int rod) const { return rod_free_range_[rod]; }
  const std::vector<std::pair<int, int>>& rod_free_ranges() const { return rod_free_range_; }
  /// Which rod and vertex a DOF belongs to.
  std::pair<int, int> dof_owner(int dof) const;

 private:
  int dimension_ = 3;
  int dof_count_ = 0;
  int free_dof_count_ = 0;
  // The only per-rod and per-vertex index tables of the model: the assembler, the contact
  // solver, the length correction and the preconditioner all ask the layout.
  std::vector<int> rod_first_vertex_;  // rod_count() + 1 entries
  std::vector<int> rod_first_dof_;     // rod_count() + 1 entries
  std::vector<int> vertex_rod_;
  std::vector<int> vertex_dof_;
  std::vector<int> free_index_;
  std::vector<std::pair<int, int>> rod_free_range_;
  std::vector<int> rod_first_twist_;  // a rod's first entry in twist_dof_, or -1
  std::vector<int> twist_dof_;
  std::vector<int> node_dof_;         // node_count() + 1 entries
};

/// How rod-rod contact is solved (docs/contact.md).
enum class RodContactMethod {
  /// A log barrier on each pair's gap with CCD-limited line searches (IPC's): "Rod-rod contact".
  Barrier,
  /// Linearised non-penetration constraints with exact Coulomb friction, solved inside each
  /// linear solve (Daviet et al. 2011): "Rod-rod contacts as constraints".
  Constraints,
};

/// Contact between the surfaces of rods (capsules of each rod's radius): docs/contact.md,
/// "Rod-rod contact".
struct RodContactSettings {
  bool enabled = false;   ///< scene key rod_contact.enabled
  double friction = 0.0;  ///< Coulomb coefficient between rods, >= 0 (rod_contact.friction)
  bool self = true;       ///< also non-adjacent segments of one rod (rod_contact.self)
  RodContactMethod method = RodContactMethod::Barrier;  ///< rod_contact.method
};

struct Model {
  int dimension = 3;
  std::vector<Rod> rods;
  Vec3 gravity = Vec3::Zero();   ///< [m/s^2]; only the first `dimension` components are used
  double damping_mass = 0.0;     ///< Rayleigh mass coefficient alpha [1/s]
  double damping_stiffness = 0.0;  ///< Rayleigh stiffness coefficient beta [s]
  std::vector<PointLoad> loads;
  std::vector<Collider> colliders;
  RodContactSettings rod_contact;
  DofLayout layout;

  /// Recomputes `layout` from `rods`; call after rods change.
  void finalize();
  /// Lumped mass of every DOF [kg]; a twist DOF's is the edge's moment of inertia about its
  /// axis, density (I1 + I2) L [kg m^2].
  VecX dof_masses() const;
  int rod_index(const std::string& name) const;  ///< -1 when absent
};

/// Positions, velocities and time: plain copyable data.
struct State {
  VecX positions;   ///< [m], DofLayout order
  VecX velocities;  ///< [m/s]
  double time = 0.0;  ///< [s]
};

/// The state with every rod at its initial positions and at rest.
State initial_state(const Model& model);

/// Position of a rod's vertex, as a 3-vector (z = 0 in 2D).
Vec3 vertex_position(const Model& model, const VecX& positions, int rod, int vertex);

/// The largest strain |l / L - 1| of any edge (l its length at `positions`, L its rest length),
/// on `threads` threads (the same value on any number).
double largest_edge_strain(const Model& model, const VecX& positions, int threads = 1);

/// |g| [m/s^2]: norm() where that is finite (the bits every scene has had), stableNorm() where
/// it overflows (a gravity of [1e300, 1e300, 1e300] has a finite length).
double gravity_magnitude(const Model& model);

/// The largest strain |l / L - 1| of rod `rod`'s edges at `positions`.
double largest_edge_strain_of_rod(const Model& model, const VecX& positions, int rod);

}  // namespace bristle

#include "bristle/model/model.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>

namespace bristle {

Vec3 PointLoad::force_at(double time) const {
  if (ramp <= 0.0 || time >= ramp) return force;
  return force * (std::max(0.0, time) / ramp);
}

DofLayout::DofLayout(int dimension, const std::vector<Rod>& rods) : dimension_(dimension) {
  int vertex = 0;
  for (const Rod& rod : rods) {
    const int rod_index = static_cast<int>(rod_first_vertex_.size());
    rod_first_vertex_.push_back(vertex);
    rod_first_dof_.push_back(dof_count_);
    rod_first_twist_.push_back(rod.twist ? static_cast<int>(twist_dof_.size()) : -1);
    const int free_begin = free_dof_count_;
    for (int i = 0; i < rod.vertex_count(); ++i, ++vertex) {
      vertex_dof_.push_back(dof_count_);
      vertex_rod_.push_back(rod_index);
      node_dof_.push_back(dof_count_);
      const bool fixed = rod.is_fixed(i);
      for (int k = 0; k < dimension; ++k) {
        free_index_.push_back(fixed ? -1 : free_dof_count_++);
        ++dof_count_;
      }
      if (rod.twist && i + 1 < rod.vertex_count()) {
        // The edge's twist: held with its two vertices unless the rod's `twist_fixed` says
        // otherwise (Rod::is_twist_fixed).
        twist_dof_.push_back(dof_count_);
        node_dof_.push_back(dof_count_);
        free_index_.push_back(rod.is_twist_fixed(i) ? -1 : free_dof_count_++);
        ++dof_count_;
      }
    }
    rod_free_range_.emplace_back(free_begin, free_dof_count_);
  }
  rod_first_vertex_.push_back(vertex);
  rod_first_dof_.push_back(dof_count_);
  node_dof_.push_back(dof_count_);
}

// The vertex found by binary search (DOFs and vertices are numbered in the same order) rather
// than stored, which would cost 8 bytes per DOF; its rod from the vertices' table (rod contact's
// CCD asks for every pair's two rods in each Newton iteration).
std::pair<int, int> DofLayout::dof_owner(int dof) const {
  const int vertex = static_cast<int>(std::upper_bound(vertex_dof_.begin(), vertex_dof_.end(), dof) - vertex_dof_.begin()) - 1;
  const int rod = vertex_rod_[vertex];
  return {rod, vertex - rod_first_vertex_[rod]};
}

void Model::finalize() { layout = DofLayout(dimension, rods); }

VecX Model::dof_masses() const {
  VecX mass(layout.dof_count());
  for (int r = 0; r < static_cast<int>(rods.size()); ++r) {
    const Rod& rod = rods[r];
    for (int i = 0; i < rod.vertex_count(); ++i)
      mass.segment(layout.vertex_dof(r, i), dimension).setConstant(rod.vertex_mass(i));
    // A twist DOF's inertia: the edge's moment of inertia about its own axis,
    // density (I1 + I2) L_j (a round section: 2 I), in [kg m^2].
    if (layout.edge_dof(r, 0) >= 0)
      for (int j = 0; j < rod.edge_count(); ++j)
        mass[layout.edge_dof(r, j)] = rod.material.rotational_inertia() * rod.rest_lengths[j];
  }
  return mass;
}

int Model::rod_index(const std::string& name) const {
  for (int r = 0; r < static_cast<int>(rods.size()); ++r)
    if (rods[r].name == name) return r;
  return -1;
}

State initial_state(const Model& model) {
  State state;
  state.positions = VecX::Zero(model.layout.dof_count());
  state.velocities = VecX::Zero(model.layout.dof_count());
  for (int r = 0; r < static_cast<int>(model.rods.size()); ++r) {
    const Rod& rod = model.rods[r];
    for (int i = 0; i < rod.vertex_count(); ++i)
      state.positions.segment(model.layout.vertex_dof(r, i), model.dimension) = rod.initial_positions[i].head(model.dimension);
    // Twist angles start at the rest twist (zero without `rest_twist`).
    const std::vector<double> theta = rod.initial_twists();
    for (int j = 0; j < static_cast<int>(theta.size()); ++j) state.positions[model.layout.edge_dof(r, j)] = theta[j];
  }
  return state;
}

Vec3 vertex_position(const Model& model, const VecX& positions, int rod, int vertex) {
  Vec3 p = Vec3::Zero();
  p.head(model.dimension) = positions.segment(model.layout.vertex_dof(rod, vertex), model.dimension);
  return p;
}

double largest_edge_strain(const Model& model, const VecX& positions, int threads) {
  // A maximum is exact in any order: the same bits on any number of threads.
  double largest = 0.0;
  const int rod_count = static_cast<int>(model.rods.size());
  constexpr int kParallelDofs = 4096;  // below this, waking other threads costs more than the loop
#pragma omp parallel for schedule(static) num_threads(threads) reduction(max : largest) if (threads > 1 && positions.size() >= kParallelDofs && rod_count > 1)
  for (int r = 0; r < rod_count; ++r) largest = std::max(largest, largest_edge_strain_of_rod(model, positions, r));
  return largest;
}

double gravity_magnitude(const Model& model) {
  const auto g = model.gravity.head(model.dimension);
  const double plain = g.norm();
  return std::isfinite(plain) ? plain : g.stableNorm();
}

double largest_edge_strain_of_rod(const Model& model, const VecX& positions, int r) {
  const Rod& rod = model.rods[r];
  double largest = 0.0;
  for (int j = 0; j < rod.edge_count(); ++j) {
    const double length = (vertex_position(model, positions, r, j + 1) - vertex_position(model, positions, r, j)).norm();
    largest = std::max(largest, std::abs(length / rod.rest_lengths[j] - 1.0));
  }
  return largest;
}

}  // namespace bristle

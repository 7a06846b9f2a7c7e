#include "bristle/contact/rod_contact_rows.hpp"

#include <algorithm>

namespace bristle {

namespace {

// Rows of the frame: (normal, tangent1, tangent2)^T, so that F x is x in the contact's frame.
Mat3 frame_rows(const SegmentContactFrame& frame) {
  Mat3 F;
  F.row(0) = frame.normal.transpose();
  F.row(1) = frame.tangent1.transpose();
  F.row(2) = frame.tangent2.transpose();
  return F;
}

// A vertex's part of a free-DOF vector (zero for a fixed vertex), as a 3-vector.
Vec3 free_part(const DofLayout& layout, const VecX& free_vector, int global_vertex) {
  Vec3 x = Vec3::Zero();
  const int f = layout.free_index(layout.vertex_dof(global_vertex));
  if (f < 0) return x;
  for (int c = 0; c < layout.dimension(); ++c) x[c] = free_vector[f + c];
  return x;
}

// A vertex's part of an all-DOF vector, as a 3-vector.
Vec3 dof_part(const DofLayout& layout, const VecX& dof_vector, int global_vertex) {
  Vec3 x = Vec3::Zero();
  const int dof = layout.vertex_dof(global_vertex);
  for (int c = 0; c < layout.dimension(); ++c) x[c] = dof_vector[dof + c];
  return x;
}

// sum_k w_k x_k over a row's four vertices.
template <class Part>
Vec3 weighted_sum(const RodContactRow& row, Part&& part) {
  Vec3 sum = Vec3::Zero();
  for (int k = 0; k < 4; ++k) sum += row.frame.weights[k] * part(row.vertices[k]);
  return sum;
}

}  // namespace

std::vector<Vec3> rod_contact_velocities(const DofLayout& layout, const std::vector<RodContactRow>& rows,
                                         const VecX& v, const VecX& dv_free, double h) {
  std::vector<Vec3> velocities;
  velocities.reserve(rows.size());
  for (const RodContactRow& row : rows) {
    const Vec3 change = weighted_sum(row, [&](int gv) { return free_part(layout, dv_free, gv); });
    const Vec3 start = weighted_sum(row, [&](int gv) { return dof_part(layout, v, gv); });
    const Mat3 F = frame_rows(row.frame);
    Vec3 u = F * (start + change);
    u[0] += row.frame.gap / h;
    u += row.velocity_offset;
    velocities.push_back(u);
  }
  return velocities;
}

namespace {

// Row i's response A^-1 H_i^T on each rod with a free vertex in the row: three solves per rod,
// the impulse along the frame's directions spread over the row's vertices on it.
void form_response(const DofLayout& layout, const RodContactRow& row, const RodBlockSolve& block_solve,
                   std::vector<int>& rods, std::vector<Eigen::MatrixXd>& responses) {
  const int D = layout.dimension();
  const Mat3 F = frame_rows(row.frame);
  for (int k = 0; k < 4; ++k) {
    const int rod = layout.vertex_rod(row.vertices[k]);
    if (layout.free_index(layout.vertex_dof(row.vertices[k])) < 0) continue;
    if (std::find(rods.begin(), rods.end(), rod) == rods.end()) rods.push_back(rod);
  }
  for (const int rod : rods) {
    const auto [begin, end] = layout.rod_free_range(rod);
    Eigen::MatrixXd response = Eigen::MatrixXd::Zero(end - begin, 3);
    for (int k = 0; k < 4; ++k) {
      if (layout.vertex_rod(row.vertices[k]) != rod) continue;
      const int f = layout.free_index(layout.vertex_dof(row.vertices[k]));
      if (f < 0) continue;
      // Column d is H_i^T e_d on this rod: w_k times the frame's direction d.
      for (int d = 0; d < 3; ++d)
        for (int c = 0; c < D; ++c) response(f - begin + c, d) += row.frame.weights[k] * F(d, c);
    }
    for (int d = 0; d < 3; ++d) block_solve(rod, response.col(d));
    responses.push_back(std::move(response));
  }
}

// W_ij = H_i (A^-1 H_j^T): row i's weighted frame applied to row j's response (on `rods`) at
// row i's vertices.
Mat3 delassus_block(const DofLayout& layout, const RodContactRow& row, const std::vector<int>& rods,
                    const std::vector<Eigen::MatrixXd>& responses) {
  const int D = layout.dimension();
  const Mat3 F = frame_rows(row.frame);
  Mat3 block = Mat3::Zero();
  for (int k = 0; k < 4; ++k) {
    const int gv = row.vertices[k];
    const int f = layout.free_index(layout.vertex_dof(gv));
    if (f < 0) continue;
    const int rod = layout.vertex_rod(gv);
    const auto at = std::find(rods.begin(), rods.end(), rod);
    if (at == rods.end()) continue;
    const Eigen::MatrixXd& response = responses[at - rods.begin()];
    const int local = f - layout.rod_free_range(rod).first;
    Mat3 velocity = Mat3::Zero();  // the unit impulses' velocity change at vertex k
    velocity.topRows(D) = response.middleRows(local, D);
    block += row.frame.weights[k] * (F * velocity);
  }
  return block;
}

}  // namespace

RodContactProblem build_rod_contact_problem(const DofLayout& layout, const std::vector<RodContactRow>& rows,
                                            const RodBlockSolve& block_solve, const VecX& v, const VecX& dv_free,
                                            double h, bool off_diagonal_blocks) {
  const int m = static_cast<int>(rows.size());
  RodContactProblem problem;
  problem.rods.resize(m);
  problem.responses.resize(m);
  for (int i = 0; i < m; ++i) form_response(layout, rows[i], block_solve, problem.rods[i], problem.responses[i]);
  // Which rows touch each rod, in row order.
  std::vector<std::vector<int>> rows_of_rod(layout.rod_count());
  for (int i = 0; i < m; ++i)
    for (const int rod : problem.rods[i]) rows_of_rod[rod].push_back(i);
  // Blocks by row, columns ascending (the same order for any thread count).
  CoulombProblem& coulomb = problem.coulomb;
  coulomb.block_offsets.push_back(0);
  for (int i = 0; i < m; ++i) {
    std::vector<int> partners;
    if (off_diagonal_blocks) {
      for (const int rod : problem.rods[i])
        partners.insert(partners.end(), rows_of_rod[rod].begin(), rows_of_rod[rod].end());
    } else {
      partners.push_back(i);
    }
    std::sort(partners.begin(), partners.end());
    partners.erase(std::unique(partners.begin(), partners.end()), partners.end());
    Mat3 diagonal = Mat3::Zero();
    for (const int j : partners) {
      const Mat3 block = delassus_block(layout, rows[i], problem.rods[j], problem.responses[j]);
      if (j == i) {
        diagonal = block;
      } else {
        coulomb.block_columns.push_back(j);
        coulomb.blocks.push_back(block);
      }
    }
    coulomb.diagonal.push_back(diagonal);
    coulomb.friction.push_back(rows[i].friction);
    coulomb.block_offsets.push_back(static_cast<int>(coulomb.blocks.size()));
  }
  coulomb.free_velocity = rod_contact_velocities(layout, rows, v, dv_free, h);
  return problem;
}

RodContactOperator::RodContactOperator(const DofLayout& layout, const std::vector<RodContactRow>& rows,
                                       RodBlockSolve block_solve, const VecX& v, const VecX& dv_free, double h)
    : layout_(layout),
      rows_(rows),
      block_solve_(std::move(block_solve)),
      free_velocity_(rod_contact_velocities(layout, rows, v, dv_free, h)),
      formed_(rows.size(), 0),
      diagonal_(rows.size(), Mat3::Zero()),
      rods_(rows.size()),
      responses_(rows.size()),
      change_(VecX::Zero(layout.free_dof_count())) {
  free_index_.reserve(rows.size());
  frames_.reserve(rows.size());
  for (const RodContactRow& row : rows) {
    std::array<int, 4> free{};
    for (int k = 0; k < 4; ++k) free[k] = layout.free_index(layout.vertex_dof(row.vertices[k]));
    free_index_.push_back(free);
    frames_.push_back(frame_rows(row.frame));
  }
}

const Mat3& RodContactOperator::diagonal(int i) {
  if (!formed_[i]) {
    form_response(layout_, rows_[i], block_solve_, rods_[i], responses_[i]);
    diagonal_[i] = delassus_block(layout_, rows_[i], rods_[i], responses_[i]);
    formed_[i] = 1;
    ++responses_formed_;
  }
  return diagonal_[i];
}

void RodContactOperator::reset(const std::vector<Vec3>& impulses) {
  change_.setZero(layout_.free_dof_count());
  for (int i = 0; i < contact_count(); ++i)
    if (impulses[i] != Vec3::Zero()) changed(i, impulses[i]);
}

Vec3 RodContactOperator::velocity(int i, const std::vector<Vec3>&) const {
  const RodContactRow& row = rows_[i];
  const int D = layout_.dimension();
  Vec3 change = Vec3::Zero();
  for (int k = 0; k < 4; ++k) {
    const int f = free_index_[i][k];
    if (f < 0) continue;
    for (int c = 0; c < D; ++c) change[c] += row.frame.weights[k] * change_[f + c];
  }
  return free_velocity_[i] + frames_[i] * change;
}

void RodContactOperator::changed(int i, const Vec3& delta) {
  diagonal(i);  // an impulse set from outside the solve (a warm start) has its response formed here
  for (std::size_t k = 0; k < rods_[i].size(); ++k) {
    const auto [begin, end] = layout_.rod_free_range(rods_[i][k]);
    change_.segment(begin, end - begin) += responses_[i][k] * delta;
  }
}

void apply_rod_contact_impulses(const DofLayout& layout, const RodContactProblem& problem,
                                const std::vector<Vec3>& impulses, VecX& dv_free) {
  for (std::size_t i = 0; i < problem.rods.size(); ++i)
    for (std::size_t k = 0; k < problem.rods[i].size(); ++k) {
      const auto [begin, end] = layout.rod_free_range(problem.rods[i][k]);
      dv_free.segment(begin, end - begin) += problem.responses[i][k] * impulses[i];
    }
}

}  // namespace bristle

#pragma once
/// Rod-rod contacts as constraints in one linear solve: the third unit of the plan in
/// docs/contact.md ("A plan for the pressed brush: rod-rod contacts as constraints"), after the
/// rows (segment_contact_frame.hpp) and the impulse solve (coulomb_solver.hpp).
///
/// A Newton iteration's unconstrained solve gives the velocity change dv of the free DOFs,
/// A dv = r, A the system matrix (per rod blocks: rods apart, with the colliders' filter if
/// any, which is the caller's; [kg]) and r the right-hand side [N s]. Contact impulses p_i
/// [N s] at the rows add H^T p to r:
///
///   dv(p) = dv + A^-1 H^T p,    u = H dv(p) + c = W p + b,   W = H A^-1 H^T,   b = H dv + c,
///
/// row i's H_i = [n t1 t2]^T (w_0 I, w_1 I, w_2 I, w_3 I) on its four vertices' free DOFs
/// (a fixed vertex: none). The rows are linearised at the step's start x0 (where the pairs are
/// apart and each normal is defined, as in Daviet et al.; a pair's normal at predicted
/// positions that crossed would point the wrong way), and the offset c makes u what Coulomb's
/// law speaks of, with v the Newton iterate's velocity (all DOFs) and g the gap at x0:
///
///   u = [n t1 t2]^T sum_k w_k (v_k + dv_k) + (g / h, 0, 0)
///
/// u_n the end-of-step gap over h to first order (g + h n . sum_k w_k v1_k, v1 = v + dv),
/// u_t the relative tangential velocity over the step. W's 3 x 3 blocks are nonzero only for rows sharing a rod; each row's response
/// A^-1 H_i^T lives on its one or two rods, formed by three solves with each rod's block.

#include <array>
#include <functional>
#include <vector>

#include "bristle/contact/coulomb_solver.hpp"
#include "bristle/contact/segment_contact_frame.hpp"
#include "bristle/math/types.hpp"
#include "bristle/model/model.hpp"

namespace bristle {

/// One contact between segment p0-p1 and segment q0-q1 (of two rods, or non-adjacent of one),
/// linearised at the step's start.
struct RodContactRow {
  std::array<int, 4> vertices{};  ///< global vertices p0, p1, q0, q1
  SegmentContactFrame frame;      ///< at the step's start x0 (or relinearised: RodContact::linearise_rows)
  double friction = 0.0;          ///< mu between the two surfaces
  std::array<int, 2> segments{};  ///< the segments' indices in the RodContact that made the row
  Vec3 start_normal = Vec3::UnitX();  ///< the normal at the step's start: the side P is on
  /// A vertex's contact with a collider (contact/collider_contact_rows.hpp): the collider's
  /// index (-1: a pair of segments), the row's vertices all the vertex, weights (1, 0, 0, 0).
  int collider = -1;
  /// Added to u in the contact's frame: minus the collider surface's velocity along the
  /// tangents, so that u_t is the slip against a moving surface [m/s].
  Vec3 velocity_offset = Vec3::Zero();
};

/// Solves A_r x = rhs for rod r's free DOFs in place (`segment` holds rhs on entry, x on
/// return; rod_free_range(r) long). Must be linear in rhs: the system dv came from.
using RodBlockSolve = std::function<void(int rod, Eigen::Ref<VecX> segment)>;

/// The Delassus problem of `rows` (coulomb_solver.hpp) for the unconstrained change `dv_free`,
/// with each row's response kept for apply_rod_contact_impulses.
struct RodContactProblem {
  CoulombProblem coulomb;
  /// Row i's response to a unit impulse along its normal, tangent1 and tangent2, on each rod
  /// it moves (rods[i]: those with a free vertex in the row): responses[i][k] is a (rod's free
  /// DOFs) x 3 matrix.
  std::vector<std::vector<int>> rods;
  std::vector<std::vector<Eigen::MatrixXd>> responses;
};

/// Builds W and b for the Newton iterate's velocities `v` (all DOFs) and the step h. Without
/// `off_diagonal_blocks`, only W's diagonal blocks (W's blocks between rows on one rod grow as
/// the square of the rows: 4.8 million for 10^4 rows on 24 hair strands; RodContactOperator
/// applies them through the responses instead).
RodContactProblem build_rod_contact_problem(const DofLayout& layout, const std::vector<RodContactRow>& rows,
                                            const RodBlockSolve& block_solve, const VecX& v, const VecX& dv_free,
                                            double h, bool off_diagonal_blocks = true);

/// The rows' Coulomb problem with W applied through the responses (velocity form): it keeps
/// A^-1 H^T p on the free DOFs, so a contact's velocity reads its four vertices there and a
/// changed impulse adds its response on its one or two rods. The same u = W p + b as
/// build_rod_contact_problem, up to rounding.
///
/// A row's response (three solves with each of its rods' blocks) and W_ii are formed the
/// first time the solve asks for W_ii, which it does only for a row that pushes or
/// approaches: on a hair pile most rows are pairs near each other that never touch (12000
/// rows, 1500 pressed), and their solves were 40% of the step.
class RodContactOperator final : public CoulombOperator {
 public:
  RodContactOperator(const DofLayout& layout, const std::vector<RodContactRow>& rows, RodBlockSolve block_solve,
                     const VecX& v, const VecX& dv_free, double h);
  int contact_count() const override { return static_cast<int>(rows_.size()); }
  double friction(int i) const override { return rows_[i].friction; }
  const Mat3& diagonal(int i) override;
  void reset(const std::vector<Vec3>& impulses) override;
  Vec3 velocity(int i, const std::vector<Vec3>& impulses) const override;
  void changed(int i, const Vec3& delta) override;
  /// A^-1 H^T p for the current impulses, on the free DOFs.
  const VecX& velocity_change() const { return change_; }
  /// How many rows' responses were formed.
  int responses_formed() const { return responses_formed_; }

 private:
  const DofLayout& layout_;
  const std::vector<RodContactRow>& rows_;
  RodBlockSolve block_solve_;
  std::vector<Vec3> free_velocity_;              ///< b_i
  std::vector<std::array<int, 4>> free_index_;   ///< each row vertex's first free DOF (-1: fixed)
  std::vector<Mat3> frames_;                     ///< each row's (normal, tangent1, tangent2)^T
  std::vector<char> formed_;
  std::vector<Mat3> diagonal_;
  std::vector<std::vector<int>> rods_;
  std::vector<std::vector<Eigen::MatrixXd>> responses_;
  int responses_formed_ = 0;
  VecX change_;
};

/// dv_free += A^-1 H^T p: the velocity change the impulses make.
void apply_rod_contact_impulses(const DofLayout& layout, const RodContactProblem& problem,
                                const std::vector<Vec3>& impulses, VecX& dv_free);

/// The contacts' velocities u (normal: the end-of-step gap over h, to first order; tangential:
/// the slip) for the velocity v + dv_free, computed from the rows directly (not through W).
std::vector<Vec3> rod_contact_velocities(const DofLayout& layout, const std::vector<RodContactRow>& rows,
                                         const VecX& v, const VecX& dv_free, double h);

}  // namespace bristle

#include "bristle/integrator/length_correction.hpp"

#include <algorithm>
#include <cmath>

namespace bristle {
namespace {
// Relative violation | |e|^2 - L^2 | / L^2 at which an edge counts as corrected: a length
// error of 5e-11 of the edge, far below the strain of any tension a rod bears (hair under
// its own weight: about 1e-6). Hair at dt = 1/240 s takes three iterations (about 1e-2,
// 1e-3, 1e-6, then below 1e-10); what is left after kMaxIterations stays (and is reported).
constexpr int kMaxIterations = 4;
constexpr double kTolerance = 1e-10;
// A pivot of the tridiagonal elimination this much smaller than its diagonal means the
// constraints are (nearly) dependent, e.g. a straight run of free vertices between two
// fixed ones: that rod is left as the solve made it.
constexpr double kSingularPivot = 1e-12;
}  // namespace

LengthCorrection::LengthCorrection(const Model& model) : model_(model) {
  const DofLayout& layout = model.layout;
  const int rods = static_cast<int>(model.rods.size());
  inverse_mass_.resize(layout.vertex_count());
  for (int r = 0; r < rods; ++r) {
    const Rod& rod = model.rods[r];
    const int n = rod.vertex_count();
    std::vector<char> fixed(n);
    for (int i = 0; i < n; ++i) {
      const int g = layout.global_vertex(r, i);
      fixed[i] = layout.free_index(layout.vertex_dof(g)) < 0;
      inverse_mass_[g] = fixed[i] ? 0.0 : 1.0 / rod.vertex_mass(i);
    }
    // A run of free vertices with a fixed vertex at both ends is not corrected (its inverse
    // masses are 0 here): it can sag only by stretching (a taut string), and that second-order
    // stretch is then the physics, not an artefact of the linear solve.
    for (int a = 0; a < n;) {
      if (fixed[a]) {
        ++a;
        continue;
      }
      int b = a;
      while (b + 1 < n && !fixed[b + 1]) ++b;
      if (a > 0 && b + 1 < n)
        for (int i = a; i <= b; ++i) inverse_mass_[layout.global_vertex(r, i)] = 0.0;
      a = b + 1;
    }
  }
}

template <int D>
int LengthCorrection::correct_rod(int rod, const VecX& x_lin, VecX& x, std::vector<double>& s) const {
  const DofLayout& layout = model_.layout;
  // Plain ints, not a structured binding: the lambdas below capture them (C++17).
  const int first = layout.rod_vertex_range(rod).first;
  const int edges = layout.rod_vertex_range(rod).second - first - 1;
  const double* inverse_mass = inverse_mass_.data() + first;
  s.resize((6 + D) * static_cast<std::size_t>(edges) + D * static_cast<std::size_t>(edges + 1));
  double* target2 = s.data();               // L_j^2
  double* allowed = target2 + edges;        // kTolerance L_j^2: the violation that counts as corrected
  double* inverse_pivot = allowed + edges;  // Thomas: 1 / modified diagonal
  double* upper = inverse_pivot + edges;    // A_{j, j+1}
  double* lambda = upper + edges;           // right-hand side, then solution
  double* edge_weight = lambda + edges;     // w_j + w_{j+1}; 0 for an edge that cannot move
  double* edge = edge_weight + edges;       // e_j, D values each
  double* original = edge + D * edges;      // the rod's vertices as the solve left them
  auto vertex = [&](int i) { return x.template segment<D>(layout.vertex_dof(first + i)); };
  for (int i = 0; i <= edges; ++i) Eigen::Map<Vec<D>>(original + D * i) = vertex(i);
  auto edge_at = [&](int j) { return Eigen::Map<Vec<D>>(edge + D * j); };
  // C_j = |e_j|^2 - L_j^2 (in lambda until the solve), e_j in `edge`; whether a movable
  // edge's relative violation |C_j| / L_j^2 is above kTolerance (compared without a division).
  bool violated = false;
  auto set_violation = [&](int j, const Vec<D>& e) {
    edge_at(j) = e;
    const double violation = edge_weight[j] > 0.0 ? e.squaredNorm() - target2[j] : 0.0;
    violated |= !(std::abs(violation) <= allowed[j]);
    lambda[j] = violation;
  };
  for (int j = 0; j < edges; ++j) {
    const Vec<D> e_lin = x_lin.template segment<D>(layout.vertex_dof(first + j + 1)) -
                         x_lin.template segment<D>(layout.vertex_dof(first + j));
    const Vec<D> e = vertex(j + 1) - vertex(j);
    const double target = e_lin.dot(e) / e_lin.norm();
    // An edge the solve turned by more than a right angle has no sensible linearised length.
    target2[j] = target > 0.0 ? target * target : e.squaredNorm();
    allowed[j] = kTolerance * target2[j];
    edge_weight[j] = inverse_mass[j] + inverse_mass[j + 1];
    set_violation(j, e);
  }
  int iteration = 0;
  for (; iteration < kMaxIterations && violated; ++iteration) {
    // (grad C M^-1 grad C^T) lambda = C, grad C_j = 2 e_j at vertex j + 1 and -2 e_j at vertex
    // j: symmetric tridiagonal, SPD on the movable edges, solved by the Thomas algorithm.
    // A_jj = 4 |e_j|^2 (w_j + w_{j+1}), A_{j,j+1} = -4 (e_j . e_{j+1}) w_{j+1}; an edge that
    // cannot move gets the row of 1 (and C_j = 0).
    for (int j = 0; j < edges; ++j) {
      const double own = edge_weight[j] > 0.0 ? 4.0 * edge_at(j).squaredNorm() * edge_weight[j] : 1.0;
      double diagonal = own;
      if (j > 0) {
        diagonal -= upper[j - 1] * upper[j - 1] * inverse_pivot[j - 1];
        lambda[j] -= upper[j - 1] * inverse_pivot[j - 1] * lambda[j - 1];
      }
      if (!(diagonal > kSingularPivot * own)) {  // dependent constraints (or NaN): give up
        for (int i = 0; i <= edges; ++i) vertex(i) = Eigen::Map<const Vec<D>>(original + D * i);
        return -1;
      }
      inverse_pivot[j] = 1.0 / diagonal;
      if (j + 1 < edges)
        upper[j] = edge_weight[j] > 0.0 && edge_weight[j + 1] > 0.0
                       ? -4.0 * edge_at(j).dot(edge_at(j + 1)) * inverse_mass[j + 1]
                       : 0.0;
    }
    lambda[edges - 1] *= inverse_pivot[edges - 1];
    for (int j = edges - 2; j >= 0; --j) lambda[j] = (lambda[j] - upper[j] * lambda[j + 1]) * inverse_pivot[j];
    // x_i -= w_i sum_j lambda_j grad_i C_j = 2 w_i (lambda_i e_i - lambda_{i-1} e_{i-1}), with
    // this iteration's edges. Edge i - 1 is final once vertex i has moved, and its new
    // violation is taken in the same pass (vertex i + 1 needs only the old e_i).
    double lambda_previous = 0.0;  // lambda_{i-1} of this solve (lambda[i - 1] is overwritten)
    violated = false;
    for (int i = 0; i <= edges; ++i) {
      const double lambda_i = i < edges ? lambda[i] : 0.0;
      if (inverse_mass[i] != 0.0) {
        Vec<D> move = Vec<D>::Zero();
        if (i < edges) move += lambda_i * edge_at(i);
        if (i > 0) move -= lambda_previous * edge_at(i - 1);
        x.template segment<D>(layout.vertex_dof(first + i)) += (2.0 * inverse_mass[i]) * move;
      }
      if (i > 0) set_violation(i - 1, vertex(i) - vertex(i - 1));
      lambda_previous = lambda_i;
    }
  }
  return iteration;
}

LengthCorrection::Outcome LengthCorrection::apply(const VecX& x_lin, VecX& x) const {
  const int rods = static_cast<int>(model_.rods.size());
  int slowest = 0, uncorrected = 0;
  const int threads = threads_;
#pragma omp parallel num_threads(threads) if (threads > 1)
  {
    std::vector<double> scratch;  // this thread's, for one rod at a time
    // Rods in chunks handed out as threads finish (see SystemAssembler::assemble).
#pragma omp for schedule(dynamic, 8) reduction(max : slowest) reduction(+ : uncorrected)
    for (int r = 0; r < rods; ++r) {
      const int iterations =
          model_.dimension == 2 ? correct_rod<2>(r, x_lin, x, scratch) : correct_rod<3>(r, x_lin, x, scratch);
      if (iterations < 0) ++uncorrected;
      slowest = std::max(slowest, iterations);
    }
  }
  return {slowest, uncorrected};
}

}  // namespace bristle

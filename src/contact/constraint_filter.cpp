#include "bristle/contact/constraint_filter.hpp"

#include <algorithm>
#include <cassert>

namespace bristle {
namespace {

/// Q^T v or Q v on the leading D x D block; components beyond D stay zero.
Vec3 times_frame_transpose(const Mat3& frame, const Vec3& v, int D) {
  Vec3 r = Vec3::Zero();
  r.head(D) = frame.topLeftCorner(D, D).transpose() * v.head(D);
  return r;
}
Vec3 times_frame(const Mat3& frame, const Vec3& v, int D) {
  Vec3 r = Vec3::Zero();
  r.head(D) = frame.topLeftCorner(D, D) * v.head(D);
  return r;
}

}  // namespace

void filter_system(SparseMatrix& matrix, VecX& rhs, const std::vector<VelocityConstraint>& constraints,
                   int dimension, std::vector<int>* scratch, std::vector<int>* changed_columns, bool columns_given) {
  assert(!columns_given || changed_columns != nullptr);
  if (changed_columns != nullptr && !columns_given) changed_columns->clear();
  if (constraints.empty()) return;
  const int D = dimension;
  const int n = static_cast<int>(matrix.cols());
  assert(matrix.isCompressed() && rhs.size() == n);
  const int* outer = matrix.outerIndexPtr();
  const int* inner = matrix.innerIndexPtr();
  double* values = matrix.valuePtr();

  // Which constraint owns each free index, and which component of y it is (-1: none). The
  // caller's scratch holds -1 everywhere between calls; it is reset on the way out.
  std::vector<int> local_owner;
  if (scratch == nullptr) scratch = &local_owner;
  if (static_cast<int>(scratch->size()) != n) scratch->assign(n, -1);
  std::vector<int>& owner = *scratch;
  struct ResetOwner {
    std::vector<int>& owner;
    const std::vector<VelocityConstraint>& constraints;
    int D;
    ~ResetOwner() {
      for (const VelocityConstraint& c : constraints)
        for (int j = 0; j < D; ++j) owner[c.free + j] = -1;
    }
  } reset_owner{owner, constraints, D};
  for (int c = 0; c < static_cast<int>(constraints.size()); ++c)
    for (int j = 0; j < D; ++j) {
      assert(owner[constraints[c].free + j] < 0 && "two constraints on one vertex");
      owner[constraints[c].free + j] = c;
    }
  auto prescribed = [&](int index) {
    const int c = owner[index];
    return c >= 0 && index - constraints[c].free < constraints[c].count;
  };
  auto prescribed_value = [&](int index) {
    const VelocityConstraint& c = constraints[owner[index]];
    return c.value[index - c.free];
  };

  // 1. b' = Q^T b on constrained vertices.
  for (const VelocityConstraint& c : constraints) {
    Vec3 local = Vec3::Zero();
    local.head(D) = rhs.segment(c.free, D);
    rhs.segment(c.free, D) = times_frame_transpose(c.frame, local, D).head(D);
  }

  // 2. Columns: J <- J Q. The D columns of a vertex share one row pattern (full blocks), so
  //    entry k of each of them is the same row.
  for (const VelocityConstraint& c : constraints) {
    const int count = outer[c.free + 1] - outer[c.free];
    for (int k = 0; k < count; ++k) {
      Vec3 row = Vec3::Zero();
      for (int j = 0; j < D; ++j) {
        assert(outer[c.free + j + 1] - outer[c.free + j] == count);
        assert(inner[outer[c.free + j] + k] == inner[outer[c.free] + k]);
        row[j] = values[outer[c.free + j] + k];
      }
      const Vec3 rotated = times_frame_transpose(c.frame, row, D);
      for (int j = 0; j < D; ++j) values[outer[c.free + j] + k] = rotated[j];
    }
  }

  // Only the columns of the constrained vertices and of their neighbours hold entries in a
  // constrained row (the pattern is symmetric): the rows of a constrained vertex's columns.
  // Steps 3 and 4 visit those columns in increasing order, so each right-hand side entry
  // takes its updates in the order a sweep over every column would give it (the same bits),
  // at a cost that grows with the contacts, not the rods. (An interval of columns per vertex
  // was the same where rods are apart, but where rod contact couples a vertex to a rod far
  // down the numbering it spanned every rod between: a twentieth of a pressed brush's step.)
  std::vector<int> own_columns;
  if (!columns_given) {
    filtered_columns(matrix, constraints, D, own_columns);
    // Steps 2 to 4 write only these columns: the constrained ones (2, 4) and the others'
    // entries in constrained rows (3, 4).
    if (changed_columns != nullptr) *changed_columns = own_columns;
  }
  const std::vector<int>& columns = columns_given ? *changed_columns : own_columns;

  // 3. Rows: J <- Q^T J. In every column the D rows of a vertex are consecutive entries.
  for (const int col : columns)
    for (int k = outer[col]; k < outer[col + 1]; ++k) {
      const int c = owner[inner[k]];
      if (c < 0 || inner[k] != constraints[c].free) continue;
      Vec3 column = Vec3::Zero();
      for (int i = 0; i < D; ++i) {
        assert(inner[k + i] == constraints[c].free + i);
        column[i] = values[k + i];
      }
      const Vec3 rotated = times_frame_transpose(constraints[c].frame, column, D);
      for (int i = 0; i < D; ++i) values[k + i] = rotated[i];
    }

  // 4. Eliminate the prescribed components: move their columns to the right-hand side and
  //    clear their rows and columns off the diagonal.
  for (const int col : columns) {
    const bool col_prescribed = prescribed(col);
    for (int k = outer[col]; k < outer[col + 1]; ++k) {
      const int row = inner[k];
      if (row == col) continue;
      const bool row_prescribed = prescribed(row);
      if (!col_prescribed && !row_prescribed) continue;
      if (col_prescribed && !row_prescribed) rhs[row] -= values[k] * prescribed_value(col);
      values[k] = 0.0;
    }
  }
  for (const VelocityConstraint& c : constraints)
    for (int col = c.free; col < c.free + c.count; ++col)
      for (int k = outer[col]; k < outer[col + 1]; ++k)
        if (inner[k] == col) rhs[col] = values[k] * prescribed_value(col);
}

void filtered_columns(const SparseMatrix& matrix, const std::vector<VelocityConstraint>& constraints, int dimension,
                      std::vector<int>& columns) {
  // Step 2 changes a vertex's columns without changing the pattern: the rows read here are
  // the same before and after it.
  const int* outer = matrix.outerIndexPtr();
  const int* inner = matrix.innerIndexPtr();
  columns.clear();
  for (const VelocityConstraint& c : constraints) {
    for (int j = 0; j < dimension; ++j) columns.push_back(c.free + j);
    columns.insert(columns.end(), inner + outer[c.free], inner + outer[c.free + 1]);
  }
  std::sort(columns.begin(), columns.end());
  columns.erase(std::unique(columns.begin(), columns.end()), columns.end());
}

void filter_guess(const VecX& dv, const std::vector<VelocityConstraint>& constraints, int dimension, VecX& y) {
  const int D = dimension;
  y = dv;
  for (const VelocityConstraint& c : constraints) {
    Vec3 local = Vec3::Zero();
    local.head(D) = dv.segment(c.free, D);
    Vec3 rotated = times_frame_transpose(c.frame, local, D);
    for (int k = 0; k < c.count; ++k) rotated[k] = c.value[k];
    y.segment(c.free, D) = rotated.head(D);
  }
}

void unfilter_solution(VecX& solution, const std::vector<VelocityConstraint>& constraints, int dimension) {
  const int D = dimension;
  for (const VelocityConstraint& c : constraints) {
    Vec3 y = Vec3::Zero();
    y.head(D) = solution.segment(c.free, D);
    for (int k = 0; k < c.count; ++k) y[k] = c.value[k];
    solution.segment(c.free, D) = times_frame(c.frame, y, D).head(D);
  }
}

}  // namespace bristle

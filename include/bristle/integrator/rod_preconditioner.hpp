#pragma once
/// A preconditioner for Eigen::ConjugateGradient that solves each rod's block exactly.
///
/// Without contact between rods, the system matrix is block diagonal with one block per rod,
/// and each block is banded: a vertex couples to its neighbours up to two vertices away
/// (bending), so the half-bandwidth is at most 3D - 1. A banded Cholesky factorisation costs
/// O(n w^2) per rod and makes CG converge in one iteration on an uncoupled system; coupling
/// terms outside the blocks are left to CG unless their blocks are grouped (below; the
/// integrator groups every block that rod contact couples). In CG's iterations any
/// DOF outside the configured blocks, or in a block whose factorisation fails, falls back to
/// Jacobi.
///
/// Blocks tied by coupling terms (rods pressed against each other) can be named as groups
/// (set_groups): each group's rows and columns are then factored together by a sparse LDL^T
/// (Eigen's SimplicialLDLT, AMD ordering) and solved exactly, so that a stiff contact between
/// rods does not leave CG to resolve it through per-rod factors that cannot see it.
///
/// It follows Eigen's preconditioner concept (analyzePattern, factorize, compute, solve, info).

#include <memory>
#include <utility>
#include <vector>

#include <Eigen/SparseCholesky>

#include "bristle/math/band_storage.hpp"
#include "bristle/math/types.hpp"

namespace bristle {

class RodBlockPreconditioner {
 public:
  using StorageIndex = int;
  enum { ColsAtCompileTime = Eigen::Dynamic, MaxColsAtCompileTime = Eigen::Dynamic };

  RodBlockPreconditioner() = default;
  template <typename MatrixType>
  explicit RodBlockPreconditioner(const MatrixType& m) { compute(m); }

  /// Contiguous [begin, end) index ranges, one per rod; set before compute().
  void set_blocks(std::vector<std::pair<int, int>> blocks) {
    blocks_ = std::move(blocks);
    analyzed_n_ = -1;
    solved_in_place_ = false;
    factors_kept_ = false;
    factorization_pending_ = false;
  }
  /// Groups of blocks (each a list of block indices) factored together from the next
  /// factorize() on; an empty list for none. Blocks in no group stay on their own. The same
  /// groups again keep their symbolic analysis (the AMD ordering and the pattern) while the
  /// matrix's pattern stays, and factorize() factors their values only.
  void set_groups(std::vector<std::vector<int>> groups) {
    if (groups == group_blocks_) return;
    group_blocks_ = std::move(groups);
    retire_groups();
    failed_groups_ = 0;
  }
  void clear_groups() {
    group_blocks_.clear();
    retire_groups();
    failed_groups_ = 0;
  }
  int group_count() const { return static_cast<int>(group_blocks_.size()); }
  /// Groups whose factorisation failed at the last factorize() (their blocks then act alone).
  int failed_groups() const { return failed_groups_; }
  /// Symbolic analyses and numeric factorisations of groups so far (for tests: what was
  /// reused).
  long group_analyses() const { return group_analyses_; }
  /// Blocks analysed anew (not recognised as a pattern analysed before), over all analyses.
  long block_analyses() const { return block_analyses_; }
  long group_factorizations() const { return group_factorizations_; }

  /// Restricts factorize() and the application to the blocks marked in `active` (one entry
  /// per block): the caller's vectors are zero on the other blocks' rows, which the
  /// application then leaves as they are (a block solve of zeros is zeros), and no group
  /// holds an inactive block. The other blocks keep their factors for later.
  void set_active_blocks(std::vector<char> active) { active_blocks_ = std::move(active); }
  void clear_active_blocks() { active_blocks_.clear(); }
  bool block_active(int b) const { return active_blocks_.empty() || active_blocks_[b] != 0; }
  /// For the next factorize() only: the caller's word that the marked blocks' values are
  /// bitwise those of the factorize() before it, which then keeps their factors without
  /// comparing the values (a block not factored or compared in that one is compared as usual).
  /// The contact solver knows which rods its pass left alone (LinearSolve's same_rods); the
  /// comparison was a tenth of the pressed brush's solve.
  void set_unchanged_blocks(std::vector<char> unchanged) { unchanged_blocks_ = std::move(unchanged); }

  /// Threads over blocks (each block is factored and solved by one thread, as serially).
  void set_threads(int threads) { threads_ = threads < 1 ? 1 : threads; }

  /// Analyses the sparsity pattern (each block's bandwidth and where its entries go). Like
  /// Eigen's own factorisations, factorize() then assumes the same pattern; compute() and
  /// factorize() re-analyse by themselves only when the matrix's index arrays have moved or
  /// changed size, so a caller that rewrites a pattern in place must call this again.
  template <typename MatrixType>
  RodBlockPreconditioner& analyzePattern(const MatrixType& m) {
    analyze_compressed(static_cast<int>(m.cols()), m.outerIndexPtr(), m.innerIndexPtr());
    return *this;
  }

  /// analyzePattern for a matrix whose blocks outside `blocks` (marked per block) are left
  /// out of it (their columns empty: an iteration over some rods only). Those blocks keep the
  /// analysis they had, for a later analyzePattern of the whole pattern to recognise; they
  /// must be held out of the factorisations and solves until then (set_active_blocks).
  template <typename MatrixType>
  RodBlockPreconditioner& analyze_blocks(const MatrixType& m, const std::vector<char>& blocks) {
    analyze_compressed(static_cast<int>(m.cols()), m.outerIndexPtr(), m.innerIndexPtr(), &blocks);
    return *this;
  }

  template <typename MatrixType>
  RodBlockPreconditioner& factorize(const MatrixType& m) {
    const bool solved = solved_in_place_ && solved_values_ == m.valuePtr();
    const bool kept = factors_kept_ && solved_values_ == m.valuePtr();
    solved_in_place_ = false;
    factors_kept_ = false;
    factorization_pending_ = false;
    if (kept || solved) unchanged_blocks_.clear();  // a word for factorize_compressed only
    if (kept) return *this;  // the blocks' factors were kept where they were made
    if (solved) {
      // Every block was solved where it was made (solve_block_in_place): the factors are
      // formed only if a solve() asks for them.
      factorization_pending_ = true;
      return *this;
    }
    factorize_compressed(static_cast<int>(m.cols()), m.outerIndexPtr(), m.innerIndexPtr(), m.valuePtr());
    return *this;
  }

  /// Solving block by block where each block is made, without keeping its factor (unless
  /// asked: solve_block_in_place's keep_factor, for a later solve() with them). A caller
  /// that fills the matrix one rod at a time hands each rod's block over in band storage (the
  /// assembler's RodCallback), with the block's entries of a vector x, and gets
  /// x <- A_b^-1 x there, factored and solved while the band is in cache (the band is
  /// overwritten with the factor).
  /// Call prepare_blocks(m) with the matrix (pattern) first, then solve_block_in_place for
  /// every block (from any thread; blocks are independent), then declare_blocks_solved(values)
  /// with the matrix's values, which counts as one application. The next factorize(m)
  /// (Eigen's compute) of a matrix with those values then factors nothing: CG needs the
  /// factors only if the blocks' solution, its start, is not within its tolerance, and the
  /// first solve() forms them then (from m, the same bits). Without coupling between the
  /// blocks that never happens, and no factor is written to memory.
  template <typename MatrixType>
  void prepare_blocks(const MatrixType& m) {
    unchanged_blocks_.clear();
    solved_in_place_ = false;
    factors_kept_ = false;
    factorization_pending_ = false;
    const int n = static_cast<int>(m.cols());
    if (m.outerIndexPtr() != analyzed_outer_ || m.innerIndexPtr() != analyzed_inner_ || n != analyzed_n_ ||
        m.outerIndexPtr()[n] != analyzed_nonzeros_)
      analyze_compressed(n, m.outerIndexPtr(), m.innerIndexPtr());
  }
  /// False when `lower` is not the block's shape (size and half-bandwidth; x is then left as
  /// it was) or the block is not positive definite (x is then partly solved: the caller
  /// restores it).
  /// With `keep_factor`, the factor is also copied into the preconditioner, so that
  /// solve() can use it later (the converged solver's convergence test) without factoring
  /// again; declare_blocks_solved must then be told so. With `keep_factor` and `keep_lower`,
  /// the block is factored there instead (copied first), and `lower` is left as it was.
  bool solve_block_in_place(int b, const BandView& lower, double* x, bool keep_factor = false,
                            bool keep_lower = false);
  /// `factors_kept`: every block's factor was kept (solve_block_in_place's keep_factor), so
  /// solve() applies them as they are.
  void declare_blocks_solved(const double* values, bool factors_kept = false);
  int block_count() const { return static_cast<int>(factors_.size()); }

  /// Eigen's compute: a matrix whose pattern may be new, so analysed afresh. factorize() alone
  /// takes a matrix in the arrays last analysed (same addresses and sizes) as the same pattern,
  /// which only a caller that keeps its pattern can promise: a freed matrix's successor can
  /// take its arrays with another pattern of the same size (a test's temporaries did, and the
  /// stale analysis failed a block). The integrator's solves call factorize()
  /// (ConjugateGradient::compute): their matrices keep their pattern, or are analysed when it
  /// changes (the coupled system).
  template <typename MatrixType>
  RodBlockPreconditioner& compute(const MatrixType& m) {
    analyzePattern(m);
    return factorize(m);
  }

  /// Solves the listed blocks of `m` each on its own: x's entries of block b become
  /// A_b^-1 times rhs's (the same bits as solve() there), A_b factored again only where its
  /// values changed (factorize_block). The exact solution of a system whose blocks do not
  /// couple (the caller's to know: no entry between blocks) for just the blocks whose rows
  /// changed, as the contact solver's passes need. False, x's listed entries then undefined,
  /// where that is not exact: the pattern has entries between blocks or DOFs in none, groups
  /// are set, a listed block has entries left out of its band, or is not positive definite. Not a preconditioner application (not a CG iteration);
  /// compute() must come before the next solve().
  bool solve_blocks(const SparseMatrix& m, const std::vector<int>& blocks, const VecX& rhs, VecX& x);
  /// Whether block b's own factor, as the last factorize() left it, solves the block's rows
  /// exactly: factored (not pending, not failed), no entry left out of its band, and no entry
  /// of its columns in another block's rows. Then solve_block(b, ...) is the system's solution
  /// on those rows, whatever the others hold.
  bool block_exact(int b) const {
    const Block& block = factors_[b];
    return !factorization_pending_ && block.size > 0 && block.factored && block.dropped.empty() &&
           !block.pattern_between;
  }
  /// x's entries of block b become A_b^-1 times rhs's, by the block's factor (the bits of an
  /// application there); for a block_exact block.
  void solve_block(int b, const VecX& rhs, VecX& x) const;
  /// After solve_blocks returned false: where block b's factorisation failed, the column
  /// within the block whose pivot was not positive and finite; -1 if it was factored or failed
  /// for another reason (solve_blocks' list).
  int failed_pivot(int b) const {
    if (!pivots_reported_) return -1;
    const Block& block = factors_[b];
    return block.factored || block.failed_pivot >= block.size ? -1 : block.failed_pivot;
  }

  template <typename Rhs>
  VecX solve(const Eigen::MatrixBase<Rhs>& b) const {
    VecX x = b;
    apply_in_place(x);
    return x;
  }
  /// x <- M^-1 x, without a new vector (counted as an application, as solve()).
  void solve_in_place(VecX& x) const { apply_in_place(x); }

  Eigen::ComputationInfo info() const { return Eigen::Success; }
  Eigen::Index rows() const { return size_; }
  Eigen::Index cols() const { return size_; }

  /// How many times solve() ran since the last reset: CG's preconditioned iterations.
  long applications() const { return applications_; }
  void reset_applications() { applications_ = 0; }
  /// Blocks whose banded Cholesky failed (not positive definite; in solve_block_in_place also
  /// a band of the wrong shape): CG's iterations use Jacobi there.
  int failed_blocks() const { return failed_blocks_; }
  /// DOFs in no block (after the analysis of the last matrix): CG's Jacobi on them.
  int dofs_outside_blocks() const { return static_cast<int>(outside_blocks_.size()); }
  /// Whether the factors are still to be formed: the blocks were solved in place and no
  /// solve() has asked for them since (see prepare_blocks).
  bool factorization_pending() const { return factorization_pending_; }

 private:
  /// `count` values from value_source on go to band[band_target + r * w], r < count (w the
  /// block's half-bandwidth).
  struct CopyRun {
    int value_source, band_target, count;
  };
  struct Block {
    int begin = 0, size = 0, half_bandwidth = 0;
    bool factored = false;
    std::vector<double> band;  // L in band storage (math/band_storage.hpp), the diagonal as 1 / L(i, i);
                               // allocated when first factored
    // The block's lower-triangle entries, as runs: a column's entries on consecutive rows sit
    // side by side in the matrix's value array and w apart in the band (row i of column j is
    // band[i w + j + w]), so each run is copied with no index per entry. band_gaps are the band
    // entries the factorisation reads that no stored entry fills (zeroed before each fill;
    // fill-in makes them nonzero).
    std::vector<CopyRun> runs;
    std::vector<int> band_gaps;
    // Rows below the diagonal of each column of L that can be nonzero (at most w).
    std::vector<unsigned char> column_counts;
    // Entries of the block left out of its band (further than kMaxHalfBandwidth from the
    // diagonal): where each value sits in the matrix, and its row and column in the block.
    // Where the band without them is not positive definite (a stiff stencil straddling the
    // cut), each adds its magnitude to both diagonals, which makes it so whenever the block
    // is (diag(|E|) - E is diagonally dominant).
    struct Dropped {
      int value_source, row, column;
    };
    std::vector<Dropped> dropped;
    // The values `band` was last factored from (runs, then dropped entries, in order) and
    // whether that succeeded: a block whose values have the same bits is not factored again
    // (the contact solver's active-set passes change the blocks of a few rods).
    std::vector<double> factored_from;
    bool factor_matches_input = false;
    bool input_factored = false;
    long factorized_in = -1;  // the factorize_compressed call that last factored or compared it
    /// The column (within the block) whose pivot failed in its last factorisation, or -1; and
    /// that of the factorisation of `factored_from` (restored with input_factored).
    int failed_pivot = -1;
    int input_failed_pivot = -1;
    // The pattern this block was analysed on: its columns' entry counts and rows, and where its
    // first column began in the value array (-1: not analysed). The same counts and rows again
    // give the same analysis, with every value position moved by the same offset
    // (analyze_compressed; rod contact changes the coupling between rods, not a rod's band).
    std::vector<int> pattern_counts, pattern_rows;
    int pattern_offset = -1;
    bool pattern_between = false;  // the block's columns hold rows of other blocks
  };
  bool pivots_reported_ = false;  // the last solve_blocks reached its blocks' factorisations
  /// Whether the block's entries in `values` have the bits the block was last factored from.
  static bool same_bits_as_factored(const Block& block, const double* values);
  /// Keeps the block's entries of `values` as the input of the factorisation that follows.
  static void remember_input(Block& block, const double* values);
  /// The position of column col's diagonal entry in the analysed pattern, or -1 if it has none.
  int diagonal_entry(int col) const;
  /// Whether the block's columns of the pattern (outer, inner) are those it was analysed on.
  static bool keeps_pattern(const Block& block, const int* outer, const int* inner);

  struct Group {
    std::vector<int> index;  // the group's rows, increasing
    SparseMatrix lower;      // its lower triangle in its own numbering
    std::vector<int> source; // where each of lower's values is in the matrix's value array
    // The factor is of `permuted`, the upper triangle of P lower P^T for the AMD ordering P,
    // formed once per pattern as Eigen's SimplicialLDLT forms it at each factorisation
    // (analyze_group): each factorisation then only copies values (`permuted_from`: the
    // position in lower of each of its values). The same arithmetic, the same factor.
    SparseMatrix permuted;
    std::vector<int> permuted_from;
    Eigen::PermutationMatrix<Eigen::Dynamic, Eigen::Dynamic, int> permutation, inverse_permutation;
    std::unique_ptr<Eigen::SimplicialLDLT<SparseMatrix, Eigen::Upper, Eigen::NaturalOrdering<int>>> factor;
    /// Solves with the factor, in the lower triangle's numbering.
    VecX solve(const VecX& rhs) const;
    // Eigen 3.4's SparseMatrix and PermutationMatrix have no move: the implicit one copied
    // both matrices of every group each time the list of groups moved or grew.
    Group() = default;
    Group(Group&& other) noexcept { take(other); }
    Group& operator=(Group&& other) noexcept {
      take(other);
      return *this;
    }
    /// Swaps every member with `other`'s.
    void take(Group& other) noexcept;
    VecX check_rhs, check_solution;  // the factor's test solve (factorize_groups)
    bool factored = false;
    bool values_factored = false;  // lower's values are those factor was last factored from
  };
  /// A new group's ordering, permuted pattern and symbolic analysis (from its `lower`).
  static void analyze_group(Group& group);
  /// The live groups become the retired ones, which the next rebuild of the groups may reuse
  /// (factorize_groups): a group with the same rows and pattern keeps its symbolic analysis,
  /// and with the same values its factor too.
  void retire_groups() {
    if (groups_.empty()) return;
    retired_groups_ = std::move(groups_);
    groups_.clear();
  }
  bool factorize_block(int b, const double* values);
  void factorize_groups(int n, const int* outer, const int* inner, const double* values);
  void analyze_compressed(int n, const int* outer, const int* inner, const std::vector<char>* only_blocks = nullptr);
  void factorize_compressed(int n, const int* outer, const int* inner, const double* values);
  void finish_factorization(const double* values);
  void apply_in_place(VecX& x) const;

  std::vector<std::pair<int, int>> blocks_;
  std::vector<Block> factors_;
  std::vector<char> active_blocks_;  // empty: all
  std::vector<char> unchanged_blocks_;  // set_unchanged_blocks, for the next factorize_compressed
  long factorize_calls_ = 0;
  std::vector<std::vector<int>> group_blocks_;
  std::vector<Group> groups_;
  std::vector<Group> retired_groups_;  // the last groups before set_groups or clear_groups
  mutable std::vector<VecX> group_rhs_;  // apply_in_place's copies of the groups' right-hand sides
  int failed_groups_ = 0;
  long group_analyses_ = 0, group_factorizations_ = 0;
  const int* group_outer_ = nullptr;  // the pattern the groups were built on
  const int* group_inner_ = nullptr;
  int group_n_ = -1, group_nonzeros_ = -1;
  // The pattern the analysis was made for: the system's pattern is built once per model, so
  // its arrays (same addresses, same sizes) mean the same pattern.
  const int* analyzed_outer_ = nullptr;
  const int* analyzed_inner_ = nullptr;
  int analyzed_n_ = -1, analyzed_nonzeros_ = -1;
  std::vector<int> outside_blocks_;  // DOFs in no block
  long block_analyses_ = 0;
  bool entries_between_blocks_ = false;  // the analysed pattern couples two blocks (or a block and the rest)
  std::vector<int> jacobi_dofs_;     // DOFs preconditioned by their diagonal: outside, or failed blocks
  std::vector<double> jacobi_inverse_;
  int size_ = 0;
  int failed_blocks_ = 0;
  int threads_ = 1;
  // Set by declare_blocks_solved; then factorize() only marks the factors as pending (formed
  // from the analysed pattern and solved_values_ by the first solve()).
  bool solved_in_place_ = false;
  bool factors_kept_ = false;  // declare_blocks_solved(values, true): factors ready for those values
  const double* solved_values_ = nullptr;
  bool factorization_pending_ = false;
  mutable long applications_ = 0;
};

}  // namespace bristle

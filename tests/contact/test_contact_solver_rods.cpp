// The collider contact solver's passes rod by rod (ContactSolver::solve with a RodSolve):
// rods that do not couple settle their active sets each on its own, and a pass solves only
// the rods whose constraints changed. Against whole-system passes with a direct solve, the
// same contacts and the same velocity change (to the solves' round-off), with fewer rods
// solved; the same bits on one thread and two.

#include <algorithm>
#include <cstring>
#include <random>
#include <string>

#include <doctest/doctest.h>
#include <Eigen/SparseCholesky>

#include "bristle/contact/contact_solver.hpp"
#include "bristle/integrator/assembly.hpp"
#include "bristle/integrator/rod_preconditioner.hpp"
#include "contact/contact_test_support.hpp"

using namespace bristle;
using namespace bristle::test;

namespace {

struct ContactProblem {
  Model model;
  SparseMatrix system;  // M + h^2 K on the free DOFs
  VecX rhs, x0, v;
  double h = 1.0 / 60.0;
};

/// Fills `p`'s step system at x0: M + h^2 K (projected) on the free DOFs, and the right-hand
/// side -h grad E, the impulse of gravity's and the rods' forces over the step.
void assemble_step(ContactProblem& p) {
  const DofLayout& layout = p.model.layout;
  SystemAssembler assembler(p.model);
  VecX gradient;
  assembler.assemble(p.x0, 0.0, HessianProjection::Projected, p.h * p.h, gradient);
  p.system = assembler.matrix();
  const VecX mass = p.model.dof_masses();
  p.rhs.setZero(layout.free_dof_count());
  for (int dof = 0; dof < layout.dof_count(); ++dof) {
    const int f = layout.free_index(dof);
    if (f < 0) continue;
    p.system.coeffRef(f, f) += mass[dof];
    p.rhs[f] = -p.h * gradient[dof];
  }
  p.system.makeCompressed();
}

/// Rods of 8 edges on the floor y = 0 (mu = 0.5), seven kinds, each given its own velocity:
/// at rest, sliding fast, sliding slowly (it sticks), pressed down, lifting off, turning about
/// its middle; the seventh at rest 1 mm above the floor, which gravity brings down within
/// the step (its contacts are found in a later pass). `copies` sets of the seven: enough
/// rods (over 4096 DOFs) run the contact solver's loops over rods on the threads. The right-hand side is the forces' impulse over the step, -h grad U.
/// `rotation` turns the whole problem (rods, velocities, gravity, floor; about z in 2D);
/// `floors` > 1 gives the floor that many times, so that each vertex on it has that many
/// (equal) contact normals.
ContactProblem rods_on_floor(int dimension, int copies = 1, const Mat3& rotation = Mat3::Identity(), int floors = 1) {
  ContactProblem p;
  const Material nylon = make_material(1140.0, 0.002, 3.0e9);
  std::vector<Rod> rods;
  const int count = 7 * copies;
  for (int r = 0; r < count; ++r) {  // side by side along x, 5 cm apart
    const Vec3 from(0.15 * r, r % 7 == 6 ? 0.003 : 0.002, 0.0);
    rods.push_back(straight_rod(8, rotation * from, rotation * (from + Vec3(0.1, 0.0, 0.0)), dimension, {}, nylon));
    rods.back().name = "rod" + std::to_string(r);
  }
  p.model = make_model(dimension, std::move(rods), rotation * earth_gravity());
  for (int k = 0; k < floors; ++k)
    p.model.colliders.push_back(plane_collider(Vec3::Zero(), rotation * Vec3::UnitY(), 0.5));
  const State state = initial_state(p.model);
  p.x0 = state.positions;
  p.v = VecX::Zero(p.x0.size());
  const DofLayout& layout = p.model.layout;
  const int D = dimension;
  for (int r = 0; r < count; ++r)
    for (int i = 0; i < p.model.rods[r].vertex_count(); ++i) {
      const int dof = layout.vertex_dof(r, i);
      Vec3 velocity = Vec3::Zero();
      switch (r % 7) {
        case 1: velocity = Vec3(0.5, 0.0, 0.0); break;                  // slides
        case 2: velocity = Vec3(0.01, 0.0, 0.0); break;                 // sticks
        case 3: velocity = Vec3(0.0, -0.3, 0.0); break;                 // pressed down
        case 4: velocity = Vec3(0.0, 0.2, 0.0); break;                  // lifts off
        case 5:  // turns about its middle: out of the plane in 3D, in it in 2D (one end lifts)
          velocity = dimension == 3 ? Vec3(0.0, 0.0, 0.4 * (i - 4) / 4.0) : Vec3(0.0, 0.2 * (i - 4) / 4.0, 0.0);
          break;
        default: break;
      }
      p.v.segment(dof, D) = (rotation * velocity).head(D);
    }
  assemble_step(p);
  return p;
}

/// The whole system's direct solve (sparse LDL^T), the reference for rods apart.
ContactSolver::LinearSolve direct_solve() {
  return [](const SparseMatrix& m, const VecX& b, const VecX&, VecX& x, const std::vector<char>*) {
    Eigen::SimplicialLDLT<SparseMatrix> ldlt(m);
    x = ldlt.solve(b);
    return ldlt.info() == Eigen::Success;
  };
}

struct Solved {
  VecX dv;
  ContactReport report;
  std::vector<std::pair<int, int>> contacts;  // (global vertex, sticking) of every contact
};

/// `fail_call` > 0: the rod solve's call of that number fails (the solver must fall back).
Solved solve(const ContactProblem& p, bool per_rod, int threads, ContactSettings settings = {}, int fail_call = 0) {
  ContactSolver solver(p.model, settings);
  solver.set_threads(threads);
  solver.begin_step();
  SparseMatrix system = p.system;
  const ContactSolver::LinearSolve direct = direct_solve();
  RodBlockPreconditioner blocks;
  blocks.set_blocks(p.model.layout.rod_free_ranges());
  blocks.set_threads(threads);
  ContactSolver::RodSolve rod_solve;
  int calls = 0;
  if (per_rod)
    rod_solve = [&](const SparseMatrix& m, const VecX& b, const std::vector<int>& rods, VecX& x) {
      if (++calls == fail_call) return false;
      return blocks.solve_blocks(m, rods, b, x);
    };
  Solved s;
  s.dv.setZero(p.rhs.size());
  REQUIRE(solver.solve(system, p.rhs, p.x0, p.v, p.h, VecX::Zero(p.rhs.size()), direct, s.dv, rod_solve));
  CHECK(Eigen::Map<const VecX>(system.valuePtr(), system.nonZeros()) ==
        Eigen::Map<const VecX>(p.system.valuePtr(), p.system.nonZeros()));  // restored
  VecX x1 = p.x0;
  for (int dof = 0; dof < p.model.layout.dof_count(); ++dof) {
    const int f = p.model.layout.free_index(dof);
    x1[dof] += p.h * (p.v[dof] + (f >= 0 ? s.dv[f] : 0.0));
  }
  solver.report(x1, p.h, s.report);
  for (const VertexContact& vc : solver.contacts())
    s.contacts.push_back({p.model.layout.global_vertex(vc.rod, vc.vertex), vc.state == FrictionState::Stick});
  if (fail_call > 0) CHECK(calls >= fail_call);
  std::sort(s.contacts.begin(), s.contacts.end());
  return s;
}

void check_rods_apart(int dimension, int copies) {
  const ContactProblem p = rods_on_floor(dimension, copies);
  const Solved whole = solve(p, false, 1);
  const Solved apart = solve(p, true, 1);
  CHECK(whole.report.converged);
  CHECK(apart.report.converged);
  REQUIRE(!whole.contacts.empty());
  CHECK(apart.contacts == whole.contacts);
  const double error = (apart.dv - whole.dv).cwiseAbs().maxCoeff();
  INFO("largest difference " << error << " of " << whole.dv.cwiseAbs().maxCoeff());
  CHECK(error <= 1e-9 * whole.dv.cwiseAbs().maxCoeff());
  // Whole-system passes solve every rod in every pass; apart, only the rods that changed.
  const int rods = static_cast<int>(p.model.rods.size());
  CHECK(whole.report.rod_solves == static_cast<long long>(whole.report.solves) * rods);
  CHECK(apart.report.rod_solves < static_cast<long long>(apart.report.solves) * rods);
  CHECK(apart.report.rod_solves >= rods);
  // Some rods settle in the first pass and others take more (the test is not trivial).
  CHECK(apart.report.solves > 1);
  bool late = false;  // the seventh rod touches down
  for (const auto& [vertex, sticking] : apart.contacts) late = late || p.model.layout.vertex_rod(vertex) == 6;
  CHECK(late);
  // Rods (their constraints, filters, block solves, stages) on two threads: the same bits,
  // apart and for the whole system.
  const Solved two = solve(p, true, 2);
  CHECK(two.dv == apart.dv);
  CHECK(two.contacts == apart.contacts);
  CHECK(two.report.rod_solves == apart.report.rod_solves);
  const Solved whole_two = solve(p, false, 2);
  CHECK(whole_two.dv == whole.dv);
  CHECK(whole_two.contacts == whole.contacts);

  // A rod solve that fails turns the rest into whole-system passes: on the first call, the
  // whole system's passes exactly; later, the same contacts and velocity change.
  const Solved fail_first = solve(p, true, 1, {}, 1);
  CHECK(fail_first.dv == whole.dv);
  CHECK(fail_first.contacts == whole.contacts);
  const Solved fail_second = solve(p, true, 1, {}, 2);
  CHECK(fail_second.contacts == whole.contacts);
  CHECK((fail_second.dv - whole.dv).cwiseAbs().maxCoeff() <= 1e-9 * whole.dv.cwiseAbs().maxCoeff());
}

}  // namespace

TEST_CASE("contact solver: the passes each path takes on the seven rods (the stages' gating pinned)") {
  // The counts follow from the gating of the stages (release, then friction, then new
  // contacts): whole-system passes hold a stage back everywhere, rods apart per rod. A change
  // to either gating changes them; recount and justify it when it is meant.
  for (int dimension : {2, 3}) {  // the same counts in 2D and 3D
    CAPTURE(dimension);
    const ContactProblem p = rods_on_floor(dimension);
    const Solved whole = solve(p, false, 1);
    const Solved apart = solve(p, true, 1);
    CHECK(whole.report.solves == 4);
    CHECK(apart.report.solves == 4);
    CHECK(apart.report.rod_solves == 19);  // 7 in the first pass
  }
}

TEST_CASE("contact solver: unsettled at max_iterations, the finish keeps friction near the cone, rods apart and whole") {
  // Two passes allowed: the rods still changing finish (finish_unsettled) with passes that
  // slide what leaves the cone. Until 2026-11-29 the finish stuck every contact of those rods
  // (friction without a bound). On the floor given once and twice (two coincident colliders:
  // a vertex keeps its other contact when one is released, and is held when that one is
  // added again, or the finish's passes could release and add it for ever; these rods do not
  // reach that cycle, the bound on the solves below would catch one that did).
  ContactSettings settings;
  settings.max_iterations = 2;
  for (const int floors : {1, 2}) {
    CAPTURE(floors);
    const ContactProblem p = rods_on_floor(3, 1, Mat3::Identity(), floors);
    const Solved whole = solve(p, false, 1, settings);
    const Solved apart = solve(p, true, 1, settings);
    CHECK_FALSE(whole.report.converged);
    CHECK_FALSE(apart.report.converged);
    auto sticking = [](const Solved& s) {
      int count = 0;
      for (const auto& [vertex, sticks] : s.contacts) count += sticks;
      return count;
    };
    REQUIRE(!whole.contacts.empty());
    // Some contacts slide, as in a settled solve (37 of 54 sticking on one floor): the old
    // finish stuck all 54.
    CHECK(sticking(whole) < static_cast<int>(whole.contacts.size()));
    CHECK(sticking(whole) > 0);
    // The same states rods apart as for the whole system, but for rod 6, which lands in a
    // later pass and whose stick or slide round-off decides (see check_once_as_twice).
    auto without_rod_6 = [&](const Solved& s) {
      std::vector<std::pair<int, int>> kept;
      for (const auto& c : s.contacts)
        if (p.model.layout.dof_owner(p.model.layout.vertex_dof(c.first)).first != 6) kept.push_back(c);
      return kept;
    };
    CHECK(without_rod_6(apart) == without_rod_6(whole));
    for (const Solved* s : {&whole, &apart}) {
      CHECK(s->report.max_friction_ratio <= 1.0 + settings.friction_tolerance);
      CHECK(s->report.max_penetration_fraction <= settings.penetration_tolerance);
      // The finish ends: its four passes, and one more per vertex still switching, released
      // or added, capped at four plus max_iterations.
      CHECK(s->report.solves <= settings.max_iterations + 4 + settings.max_iterations);
    }
  }
}

TEST_CASE("contact solver: rods apart settle their contacts each on its own, as the whole system does, 2D and 3D") {
  SUBCASE("2D") { check_rods_apart(2, 1); }
  SUBCASE("3D") { check_rods_apart(3, 1); }
  SUBCASE("2D, 280 rods: the loops over rods on two threads") { check_rods_apart(2, 40); }
  SUBCASE("3D, 280 rods") { check_rods_apart(3, 40); }
}


namespace {

/// Gives every collider of `p` (the floor of rods_on_floor, each copy of it) a rigid motion
/// over the step, as HandleDriver::prepare_step leaves a handled collider: the floor as built
/// (through the origin, normal rotation * y) is where the motion starts, the model's collider
/// where it ends, and step_rotation, step_translation record the motion. The surface moves
/// along the rods and rises, 0.5 mm each over the step (0.03 m/s, slow enough for friction to
/// hold a rod at rest: mu g h = 0.08 m/s), and tilts by 0.5 mrad about the floor's z axis
/// through the origin (its normal velocity grows along the row of rods, up to 0.03 m/s more).
/// The contacts' surface velocities u and normal velocities b then come from the floor's
/// motion. (A turn about the floor's normal, which sends each rod's slip a different way,
/// left the 3D friction fixed point stopping at its tolerance, 1e-3, at iterates apart by
/// more than round-off for one normal and two: differences up to 4e-9 of the largest velocity
/// change, with the same contacts and states, shrinking as that tolerance was tightened.
/// Slips along the rods keep this comparison to round-off.)
void move_floors(ContactProblem& p, const Mat3& rotation) {
  const Vec3 normal = rotation * Vec3::UnitY();
  const Mat3 turn(Eigen::AngleAxisd(5e-4, rotation * Vec3::UnitZ()));
  const Vec3 shift = rotation * Vec3(0.0005, 0.0005, 0.0);
  for (Collider& c : p.model.colliders) {
    c = plane_collider(shift, turn * normal, c.friction);  // the start's point, the origin, moved
    c.step_rotation = turn;
    c.step_translation = shift;
  }
}

/// Solves `once` (one collider) and `twice` (the same collider given twice): the same contacts
/// and the same velocity change, to the solves' round-off, but for the seventh rod (below).
/// Returns the one collider's solution.
Solved check_once_as_twice(const ContactProblem& once_problem, const ContactProblem& twice_problem) {
  const int dimension = once_problem.model.dimension;
  const Solved once = solve(once_problem, false, 1);
  const Solved twice = solve(twice_problem, false, 1);
  CHECK(once.report.converged);
  REQUIRE(once.contacts.size() > 10);
  CHECK(std::count_if(once.contacts.begin(), once.contacts.end(), [](auto c) { return c.second == 0; }) > 0);
  CHECK(std::count_if(once.contacts.begin(), once.contacts.end(), [](auto c) { return c.second == 1; }) > 0);
  // The seventh rod, which lands in a later pass, is left out: on the floor given twice
  // it ends sliding where on one floor it sticks, with the decompositions as before the
  // closed forms. Traced (2026-11-29): in the pass after it lands it slides without
  // friction yet, its slip is round-off (1e-17 .. 1e-11 m/s), and the friction direction
  // taken from that slip decides whether the next pass sticks or slides; the round-off
  // differs between one normal and two. The other rods do not couple to it.
  const int landing = 6 * 9;  // rod 6's first vertex (rods of 8 edges)
  auto before_landing = [&](const Solved& s) {
    std::vector<std::pair<int, int>> kept;
    for (const auto& c : s.contacts)
      if (c.first < landing) kept.push_back(c);
    return kept;
  };
  CHECK(before_landing(twice) == before_landing(once));
  const int landing_free = landing * dimension;  // every vertex is free: free index = DOF
  const double error = (twice.dv - once.dv).head(landing_free).cwiseAbs().maxCoeff();
  INFO("largest difference " << error << " of " << once.dv.cwiseAbs().maxCoeff());
  CHECK(error <= 1e-9 * once.dv.cwiseAbs().maxCoeff());
  return once;
}

}  // namespace

// A vertex on one collider takes closed forms for its normal's least-squares problems
// (build_constraint, compute_impulse, the friction update); on several, decompositions of the
// normals' matrix. The floor given twice must act as the floor once: the same contacts, the
// same velocity change, sticking and sliding rods alike,
//   - on a static floor, level and tilted in every axis (the constraint frame's tangents are
//     then no coordinate axes; frame_from_normal completes the level floor's normal y with x,
//     the tilted one's with z);
//   - on a moving floor: the surface velocity u and the normal velocity b come from the
//     floor's motion (the static floor's u = 0 leaves every term in u untested);
//   - on a wall whose normal is x exactly (the problem turned by -90 degrees about z, gravity
//     into the wall): frame_from_normal completes it with y, its third choice (static; the
//     moving wall's tilt turns its normal off x, and it takes z as the tilted floor does).
TEST_CASE("contact solver: a rod a whole-system pass marks as the same has the last pass's rows, right-hand side and solution") {
  // LinearSolve's same_rods: between two whole-system passes, the rods whose constraints,
  // friction matrices and right-hand side rows did not change. A rod with no entry coupling it
  // to another then has the last call's columns of the filtered matrix and rows of its
  // right-hand side, and `solution` still holds that call's result there (the contact solver
  // keeps the filtered solution), so a solve may leave it (ImplicitEuler::cg_over_coupled_rods).
  // Each call checks that against its predecessor's copies; rods on the floor, 2D and 3D,
  // still and on a moving floor (sliding contacts).
  for (int dimension : {2, 3})
    for (bool moving : {false, true}) {
      CAPTURE(dimension);
      CAPTURE(moving);
      ContactProblem p = rods_on_floor(dimension);
      if (moving) move_floors(p, Mat3::Identity());
      const DofLayout& layout = p.model.layout;
      const int rods = static_cast<int>(p.model.rods.size());
      VecX last_values, last_rhs, last_solution;
      int calls = 0, marked = 0, unmarked = 0;
      const ContactSolver::LinearSolve checked = [&](const SparseMatrix& m, const VecX& b, const VecX&, VecX& x,
                                                     const std::vector<char>* same_rods) {
        ++calls;
        if (calls == 1) CHECK(same_rods == nullptr);  // nothing to compare with
        if (same_rods != nullptr) {
          REQUIRE(static_cast<int>(same_rods->size()) == rods);
          REQUIRE(x.size() == last_solution.size());
          for (int r = 0; r < rods; ++r) {
            if (!(*same_rods)[r]) {
              ++unmarked;
              continue;
            }
            ++marked;
            CAPTURE(r);
            const auto [begin, end] = layout.rod_free_range(r);
            const int* outer = m.outerIndexPtr();
            const std::size_t entries = static_cast<std::size_t>(outer[end] - outer[begin]);
            CHECK(std::memcmp(m.valuePtr() + outer[begin], last_values.data() + outer[begin],
                              sizeof(double) * entries) == 0);
            CHECK(std::memcmp(b.data() + begin, last_rhs.data() + begin, sizeof(double) * (end - begin)) == 0);
            CHECK(std::memcmp(x.data() + begin, last_solution.data() + begin, sizeof(double) * (end - begin)) == 0);
          }
        }
        Eigen::SimplicialLDLT<SparseMatrix> ldlt(m);
        x = ldlt.solve(b);
        last_values = Eigen::Map<const VecX>(m.valuePtr(), m.nonZeros());
        last_rhs = b;
        last_solution = x;
        return ldlt.info() == Eigen::Success;
      };
      ContactSolver solver(p.model);
      solver.begin_step();
      SparseMatrix system = p.system;
      VecX dv = VecX::Zero(p.rhs.size());
      REQUIRE(solver.solve(system, p.rhs, p.x0, p.v, p.h, VecX::Zero(p.rhs.size()), checked, dv));
      // The solution as the direct solve of solve()'s own passes gives it.
      const Solved reference = solve(p, false, 1);
      CHECK(dv == reference.dv);
      // Passes that change some rods and leave others (the test is not trivial).
      MESSAGE(calls << " passes, rods marked the same " << marked << ", changed " << unmarked);
      CHECK(calls >= 3);
      CHECK(marked >= rods);
      CHECK(unmarked >= 1);
    }
}

TEST_CASE("contact solver: a vertex on one collider settles as on the same collider given twice, 2D and 3D") {
  auto tilt = [](int dimension) {
    return dimension == 3 ? Mat3(Eigen::AngleAxisd(0.4, Vec3(1.0, 2.0, 3.0).normalized()))
                          : Mat3(Eigen::AngleAxisd(0.4, Vec3::UnitZ()));
  };
  SUBCASE("a static floor, level and tilted") {
    for (const int dimension : {2, 3})
      for (const Mat3& rotation : {Mat3(Mat3::Identity()), tilt(dimension)}) {
        CAPTURE(dimension);
        check_once_as_twice(rods_on_floor(dimension, 1, rotation, 1), rods_on_floor(dimension, 1, rotation, 2));
      }
  }
  SUBCASE("a moving floor, level and tilted") {
    for (const int dimension : {2, 3})
      for (const Mat3& rotation : {Mat3(Mat3::Identity()), tilt(dimension)}) {
        CAPTURE(dimension);
        ContactProblem once = rods_on_floor(dimension, 1, rotation, 1), twice = rods_on_floor(dimension, 1, rotation, 2);
        move_floors(once, rotation);
        move_floors(twice, rotation);
        const Solved moving = check_once_as_twice(once, twice);
        // The motion is felt: against the static floor, the velocity change differs by far
        // more than the tolerance above.
        const Solved still = solve(rods_on_floor(dimension, 1, rotation, 1), false, 1);
        CHECK((moving.dv - still.dv).cwiseAbs().maxCoeff() > 1e-3 * still.dv.cwiseAbs().maxCoeff());
      }
  }
  SUBCASE("a wall along x, static and moving") {
    Mat3 to_x;  // y -> x exactly (no round-off in the wall's normal), about z: a 2D turn too
    to_x << 0.0, 1.0, 0.0,  //
        -1.0, 0.0, 0.0,     //
        0.0, 0.0, 1.0;
    REQUIRE(to_x * Vec3::UnitY() == Vec3::UnitX());
    for (const int dimension : {2, 3})
      for (const bool moving : {false, true}) {
        CAPTURE(dimension);
        CAPTURE(moving);
        ContactProblem once = rods_on_floor(dimension, 1, to_x, 1), twice = rods_on_floor(dimension, 1, to_x, 2);
        if (moving) {
          move_floors(once, to_x);
          move_floors(twice, to_x);
        } else {
          REQUIRE(once.model.colliders.front().normal == Vec3::UnitX());
        }
        check_once_as_twice(once, twice);
      }
  }
}

// The solver saves the matrix it is given a rod's columns at a time, as passes first change
// them: a second solve (the next Newton iteration) must save its own matrix, not restore the
// first one's.
TEST_CASE("contact solver: the second solve of a step restores its own matrix, rods apart and whole") {
  for (const bool per_rod : {true, false}) {
    CAPTURE(per_rod);
    const ContactProblem p = rods_on_floor(3);
    ContactSolver solver(p.model, ContactSettings{});
    solver.begin_step();
    RodBlockPreconditioner blocks;
    blocks.set_blocks(p.model.layout.rod_free_ranges());
    ContactSolver::RodSolve rod_solve;
    if (per_rod)
      rod_solve = [&](const SparseMatrix& m, const VecX& b, const std::vector<int>& rods, VecX& x) {
        return blocks.solve_blocks(m, rods, b, x);
      };
    SparseMatrix first = p.system, second = p.system;
    for (int k = 0; k < second.nonZeros(); ++k) second.valuePtr()[k] *= 1.5;  // SPD still
    const SparseMatrix second_given = second;
    VecX dv = VecX::Zero(p.rhs.size());
    REQUIRE(solver.solve(first, p.rhs, p.x0, p.v, p.h, VecX::Zero(p.rhs.size()), direct_solve(), dv, rod_solve));
    REQUIRE(solver.solve(second, p.rhs, p.x0, p.v, p.h, VecX::Zero(p.rhs.size()), direct_solve(), dv, rod_solve));
    CHECK(Eigen::Map<const VecX>(second.valuePtr(), second.nonZeros()) ==
          Eigen::Map<const VecX>(second_given.valuePtr(), second_given.nonZeros()));
  }
}

// The strain limit's scan is a parallel maximum: the same value on any number of threads.
TEST_CASE("largest edge strain: the same on one thread and two, enough rods to go parallel") {
  const ContactProblem p = rods_on_floor(3, 40);  // 280 rods, 7560 DOFs
  REQUIRE(p.x0.size() >= 4096);
  VecX x = p.x0;
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> jitter(-1e-4, 1e-4);
  for (int i = 0; i < x.size(); ++i) x[i] += jitter(rng);
  // The largest strain in the last rod (the second thread's share): its first edge stretched.
  const int last = static_cast<int>(p.model.rods.size()) - 1;
  const int dof = p.model.layout.vertex_dof(last, 1);
  x[dof] += 0.004;  // about a third of the 12.5 mm edge
  double expected = 0.0;
  for (int r = 0; r <= last; ++r)
    for (int j = 0; j < p.model.rods[r].edge_count(); ++j) {
      const double l = (vertex_position(p.model, x, r, j + 1) - vertex_position(p.model, x, r, j)).norm();
      expected = std::max(expected, std::abs(l / p.model.rods[r].rest_lengths[j] - 1.0));
    }
  CHECK(expected > 0.2);
  CHECK(largest_edge_strain(p.model, x, 1) == expected);
  for (int repeat = 0; repeat < 20; ++repeat) CHECK(largest_edge_strain(p.model, x, 2) == expected);
}

TEST_CASE("integrator preconditioner: solve_blocks solves the listed blocks with solve()'s bits and leaves the rest") {
  const ContactProblem p = rods_on_floor(3);
  RodBlockPreconditioner blocks;
  blocks.set_blocks(p.model.layout.rod_free_ranges());
  blocks.compute(p.system);
  const VecX full = blocks.solve(p.rhs);
  VecX x = VecX::Constant(p.rhs.size(), 7.0);
  REQUIRE(blocks.solve_blocks(p.system, {1, 4}, p.rhs, x));
  for (int r = 0; r < static_cast<int>(p.model.rods.size()); ++r) {
    const auto [begin, end] = p.model.layout.rod_free_range(r);
    if (r == 1 || r == 4)
      CHECK(x.segment(begin, end - begin) == full.segment(begin, end - begin));
    else
      CHECK(x.segment(begin, end - begin) == VecX::Constant(end - begin, 7.0));
  }
  SUBCASE("a block that is not positive definite is refused") {
    SparseMatrix indefinite = p.system;
    const int f = p.model.layout.rod_free_range(4).first + 2;
    indefinite.coeffRef(f, f) = -1.0;
    CHECK_FALSE(blocks.solve_blocks(indefinite, {4}, p.rhs, x));
    CHECK(blocks.solve_blocks(indefinite, {1}, p.rhs, x));
  }
  SUBCASE("factors kept for the solver's next compute() are formed again after solve_blocks") {
    // declare_blocks_solved(values, true) says the blocks' factors are those of `values`; a
    // solve_blocks on other values in between must not leave compute() of those values
    // trusting them.
    RodBlockPreconditioner kept;
    kept.set_blocks(p.model.layout.rod_free_ranges());
    kept.compute(p.system);
    kept.declare_blocks_solved(p.system.valuePtr(), true);
    SparseMatrix other = p.system;
    for (int i = 0; i < other.rows(); ++i) other.coeffRef(i, i) *= 2.0;
    VecX y = p.rhs;
    REQUIRE(kept.solve_blocks(other, {0, 1, 2}, p.rhs, y));
    kept.compute(p.system);
    CHECK(kept.solve(p.rhs) == full);
  }
  SUBCASE("blocks marked unchanged keep their factors, unless the call before did not factor them") {
    // set_unchanged_blocks: the caller's word that the values are those of the factorize()
    // before. It is taken as given (no comparison: that is what it saves), but only for a
    // block that call factored or compared; a block factored since by solve_blocks, or held
    // out of that call (set_active_blocks), is compared and factored again.
    SparseMatrix other = p.system;
    for (int i = 0; i < other.rows(); ++i) other.coeffRef(i, i) *= 2.0;
    RodBlockPreconditioner fresh_other;
    fresh_other.set_blocks(p.model.layout.rod_free_ranges());
    fresh_other.compute(other);
    const VecX full_other = fresh_other.solve(p.rhs);
    const std::vector<char> all(p.model.rods.size(), 1);
    RodBlockPreconditioner q;
    q.set_blocks(p.model.layout.rod_free_ranges());
    q.compute(p.system);
    q.set_unchanged_blocks(all);
    q.compute(other);  // not so: the factors of p.system stay
    CHECK(q.solve(p.rhs) == full);
    q.compute(other);  // no word given: compared, factored again
    CHECK(q.solve(p.rhs) == full_other);
    VecX y = p.rhs;
    REQUIRE(q.solve_blocks(p.system, {1}, p.rhs, y));  // block 1 now holds p.system's factor
    q.set_unchanged_blocks(all);
    q.compute(other);  // true of every block's values, but block 1's factor is not theirs
    CHECK(q.solve(p.rhs) == full_other);
    std::vector<char> first_only(p.model.rods.size(), 0);
    first_only[0] = 1;
    q.set_active_blocks(first_only);
    q.compute(p.system);  // block 0 only
    q.clear_active_blocks();
    q.set_unchanged_blocks(all);
    q.compute(p.system);  // true, but the call before factored block 0 only
    CHECK(q.solve(p.rhs) == full);
  }
  SUBCASE("entries between blocks are refused") {
    SparseMatrix coupled = p.system;
    const int a = p.model.layout.rod_free_range(0).first, b = p.model.layout.rod_free_range(1).first;
    coupled.coeffRef(a, b) = 1e-3;
    coupled.coeffRef(b, a) = 1e-3;
    coupled.makeCompressed();
    RodBlockPreconditioner q;
    q.set_blocks(p.model.layout.rod_free_ranges());
    CHECK_FALSE(q.solve_blocks(coupled, {2}, p.rhs, x));
  }
  SUBCASE("groups, or DOFs in no block, are refused") {
    RodBlockPreconditioner grouped;
    grouped.set_blocks(p.model.layout.rod_free_ranges());
    grouped.set_groups({{0, 1}});
    CHECK_FALSE(grouped.solve_blocks(p.system, {2}, p.rhs, x));
    auto ranges = p.model.layout.rod_free_ranges();
    ranges.pop_back();
    RodBlockPreconditioner partial;
    partial.set_blocks(ranges);
    CHECK_FALSE(partial.solve_blocks(p.system, {0}, p.rhs, x));
  }
}

namespace {

/// A rod of 8 edges, 10 cm long, standing at 45 degrees in the corner of a floor (y = 0,
/// mu = 1) and a frictionless wall (x = 0, normal +x): its foot, vertex 0, touches both, the
/// rest is in the air. Every vertex moves at `velocity`. The right-hand side is the forces'
/// impulse over the step (gravity's and the rod's), as in rods_on_floor.
ContactProblem rod_in_corner(int dimension, const Vec3& velocity) {
  ContactProblem p;
  const Material nylon = make_material(1140.0, 0.002, 3.0e9);
  const Vec3 foot(nylon.radius, nylon.radius, 0.0);
  const Vec3 top = foot + 0.1 * Vec3(std::sqrt(0.5), std::sqrt(0.5), 0.0);
  std::vector<Rod> rods;
  rods.push_back(straight_rod(8, foot, top, dimension, {}, nylon));
  p.model = make_model(dimension, std::move(rods), earth_gravity());
  p.model.colliders.push_back(plane_collider(Vec3::Zero(), Vec3::UnitY(), 1.0));  // the floor
  p.model.colliders.push_back(plane_collider(Vec3::Zero(), Vec3::UnitX(), 0.0));  // the wall
  p.x0 = initial_state(p.model).positions;
  p.v = VecX::Zero(p.x0.size());
  const DofLayout& layout = p.model.layout;
  for (int i = 0; i < p.model.rods[0].vertex_count(); ++i)
    p.v.segment(layout.vertex_dof(0, i), dimension) = velocity.head(dimension);
  assemble_step(p);
  return p;
}

}  // namespace

// Anti-cycling in a wedge (ContactSolver::release_pulling, add_or_refresh): a vertex released
// earlier in a solve and added again is held for the rest of it, also when its contact with
// another collider kept it in the list meanwhile. Until 2026-11-29 only a vertex left without
// contacts was held when added again; a vertex on two colliders could have one contact
// released and added on every pass until max_iterations.
//
// The rod's foot slides away from the wall (0.2 m/s) and down onto the floor. With
// max_state_changes = 0 no vertex may stick (as one that used up its switches, or in the
// finish): the floor's friction, lagged, turns the foot's slip back into the wall, so the wall
// is added; there it pulls (the rod carries the foot away), is released, and the friction,
// whose direction flips each pass, brings the foot back into the wall: added again while the
// floor's contact keeps the foot listed. Held, the solve settles in 8 passes with the foot on
// both; not held, it releases and adds the wall every third pass until max_iterations (50),
// and the finish's passes end it unconverged after 54, the foot off the wall. 2D and 3D,
// whole-system passes and rods apart.
TEST_CASE("contact solver: a vertex in a wedge, released from one collider and added again while the other keeps it listed, is held") {
  ContactSettings settings;
  settings.max_state_changes = 0;
  for (const int dimension : {2, 3}) {
    CAPTURE(dimension);
    const ContactProblem p = rod_in_corner(dimension, Vec3(0.2, -0.05, 0.0));
    for (const bool per_rod : {false, true}) {
      CAPTURE(per_rod);
      const Solved s = solve(p, per_rod, 1, settings);
      CHECK(s.report.converged);
      CHECK(s.report.solves <= 10);  // 8
      // Only the foot touches, and it ends on the floor and on the wall.
      CHECK(s.contacts == std::vector<std::pair<int, int>>{{0, 0}});
      REQUIRE(s.report.colliders.size() == 2);
      CHECK(s.report.colliders[0].contacts == 1);
      CHECK(s.report.colliders[1].contacts == 1);
    }
  }
}

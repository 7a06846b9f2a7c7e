// The element table (integrator/element_table.hpp) on a DOF layout with twist DOFs: stencils
// that mix vertex slots (D DOFs) and edge slots (1 twist DOF) are gathered and scattered to
// the right places. A test term with a known energy checks the assembled gradient, band and
// product K w against central finite differences, with dense and spectrum Hessians, in 2D and
// 3D, with a clamped end.

#include <array>
#include <random>

#include <doctest/doctest.h>
#include <Eigen/Eigenvalues>

#include "bristle/energy/discrete_elastic_rod.hpp"
#include "bristle/energy/stretch.hpp"
#include "bristle/integrator/assembly.hpp"
#include "bristle/integrator/element_table.hpp"
#include "bristle/integrator/implicit_euler.hpp"
#include "bristle/scene/generators.hpp"
#include "support/rod_builders.hpp"

using namespace bristle;
using namespace bristle::test;

namespace {

constexpr double kPiForTests = 3.14159265358979323846;

/// A test term on the bend-twist stencil's slots [x0, theta0, x1, theta1, x2]:
///   E = 1/2 (a . u)^2 + 1/12 (b . u)^4,   u the stencil's DOF vector,
/// gradient a (a . u) + b (b . u)^3 / 3, Hessian a a^T + (b . u)^2 b b^T (PSD). The exact
/// request gets the Hessian as a matrix, the others as a two-term spectrum, so both scatters
/// of mixed-size slots are exercised.
struct ProbeTerm {
  static constexpr std::array<SlotKind, 5> kSlots{SlotKind::Vertex, SlotKind::Edge, SlotKind::Vertex,
                                                  SlotKind::Edge, SlotKind::Vertex};
  static constexpr EnergyTerm kEnergyTerm = EnergyTerm::Twist;
  struct Constants {
    std::array<double, 11> a, b;  // the first N entries are used (N = 8 in 2D, 11 in 3D)
  };
  template <int N>
  struct Spectrum {
    static constexpr int kCount = 2;
    double value[kCount];
    Vec<N> vector[kCount];
  };

  inline static std::mt19937 rng{7};

  template <class Emit>
  static void for_each_element(const Rod& rod, Emit&& emit) {
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    for (int i = 1; i + 1 < rod.vertex_count(); ++i) {
      Constants c;
      for (double& v : c.a) v = u(rng);
      for (double& v : c.b) v = u(rng);
      emit(std::array<int, 5>{i - 1, i - 1, i, i, i + 1}, c);
    }
  }

  template <int N>
  static Vec<N> head(const std::array<double, 11>& v) {
    return Eigen::Map<const Vec<11>>(v.data()).template head<N>();
  }

  template <int D>
  static double energy(const Vec<3 * D + 2>& x, const Constants& c) {
    constexpr int N = 3 * D + 2;
    const double au = head<N>(c.a).dot(x), bu = head<N>(c.b).dot(x);
    return 0.5 * au * au + bu * bu * bu * bu / 12.0;
  }

  template <int D, class Sink>
  static void evaluate(const Vec<3 * D + 2>& x, const Constants& c, const LocalRequest& request, Sink&& sink) {
    constexpr int N = 3 * D + 2;
    const Vec<N> a = head<N>(c.a), b = head<N>(c.b);
    const double au = a.dot(x), bu = b.dot(x);
    const Vec<N> gradient = a * au + b * (bu * bu * bu / 3.0);
    if (request.projection == HessianProjection::Exact) {
      const Mat<N, N> h = a * a.transpose() + (bu * bu) * b * b.transpose();
      sink(energy<D>(x, c), gradient, h);
    } else {
      const Spectrum<N> spectrum{{1.0, bu * bu}, {a, b}};
      sink(energy<D>(x, c), gradient, PositiveSpectrum<Spectrum<N>>{spectrum});
    }
  }
};

/// Two twisting rods: rod 0 (6 vertices) clamped at its first two vertices, rod 1 (5 vertices) free.
Model twisting_model(int dimension, std::mt19937& rng) {
  std::vector<Rod> rods;
  rods.push_back(rod_from_vertices(random_vertices(5, 0.1, 0.8, dimension, rng), dimension, {0, 1}, soft_material(),
                                   RestShape::Initial, "clamped"));
  rods.push_back(rod_from_vertices(random_vertices(4, 0.1, 0.8, dimension, rng), dimension, {}, soft_material(),
                                   RestShape::Initial, "free"));
  for (Rod& rod : rods) rod.twist = true;
  return make_model(dimension, std::move(rods));
}

/// A rod's free-free block from its band (both triangles).
Eigen::MatrixXd expand_band(const std::vector<double>& band, int size, int width) {
  Eigen::MatrixXd m = Eigen::MatrixXd::Zero(size, size);
  for (int i = 0; i < size; ++i)
    for (int j = std::max(0, i - width); j <= i; ++j) m(i, j) = m(j, i) = band[band_index(i, j, width)];
  return m;
}

struct Assembled {
  double energy = 0.0;
  VecX gradient, kw;
  std::vector<Eigen::MatrixXd> blocks;  // per rod, free-free
};

/// Assembles `table` rod by rod into full-width bands (matrix_scale 1) and K w.
template <int D, class Term>
Assembled assemble(const Model& model, ElementTable<Term>& table, const VecX& x, const VecX& w,
                   HessianProjection projection) {
  const DofLayout& layout = model.layout;
  table.compute_bases(layout, [&](int free) {
    for (int r = 0; r < layout.rod_count(); ++r) {
      const auto [begin, end] = layout.rod_free_range(r);
      if (free >= begin && free < end) return std::pair<int, int>{begin, end - begin - 1};
    }
    FAIL("free DOF outside every rod");
    return std::pair<int, int>{0, 0};
  });
  Assembled out;
  out.gradient = VecX::Zero(x.size());
  out.kw = VecX::Zero(x.size());
  LocalRequest request;
  request.projection = projection;
  for (int r = 0; r < layout.rod_count(); ++r) {
    const auto [begin, end] = layout.rod_free_range(r);
    const int size = end - begin, width = size - 1;
    std::vector<double> band(band_length(size, width), 0.0);
    RodAssemblyTarget target;
    target.gradient = &out.gradient;
    target.band = band.data();
    target.band_width = width;
    target.matrix_scale = 1.0;
    target.w = &w;
    target.kw = &out.kw;
    table.template assemble_rod<D>(r, x, request, target);
    out.energy += table.last_rod_energy(r);
    out.blocks.push_back(expand_band(band, size, width));
  }
  return out;
}

template <int D, class Term>
double total_energy(const Model& model, const ElementTable<Term>& table, const VecX& x) {
  double sum = 0.0;
  for (int r = 0; r < model.layout.rod_count(); ++r) sum += table.template rod_energy<D>(r, x);
  return sum;
}

/// Positions from the model moved by up to 0.02 (edges of 0.1: stretched and compressed),
/// twist angles random in [-1, 1].
VecX random_state(const Model& model, std::mt19937& rng) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  VecX x = VecX::Zero(model.layout.dof_count());
  for (int r = 0; r < model.layout.rod_count(); ++r) {
    const Rod& rod = model.rods[r];
    for (int i = 0; i < rod.vertex_count(); ++i)
      for (int k = 0; k < model.dimension; ++k)
        x[model.layout.vertex_dof(r, i) + k] = rod.initial_positions[i][k] + 0.02 * u(rng);
    for (int j = 0; j < rod.edge_count(); ++j) x[model.layout.edge_dof(r, j)] = u(rng);
  }
  return x;
}

template <int D, class Term>
void check_against_finite_differences(const Model& model, ElementTable<Term>& table, HessianProjection projection,
                                      std::mt19937& rng) {
  const DofLayout& layout = model.layout;
  const VecX x = random_state(model, rng);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  VecX w(x.size());
  for (int i = 0; i < w.size(); ++i) w[i] = u(rng);
  table.template advance<D>(x);  // terms with reference frames: committed at x, where they are exact
  const Assembled at_x = assemble<D>(model, table, x, w, projection);
  CHECK(at_x.energy == doctest::Approx(total_energy<D>(model, table, x)).epsilon(1e-14));

  const double step = 1e-6;
  // The gradient on every DOF (fixed ones included) against the energy's differences.
  for (int i = 0; i < x.size(); ++i) {
    VecX plus = x, minus = x;
    plus[i] += step;
    minus[i] -= step;
    const double fd = (total_energy<D>(model, table, plus) - total_energy<D>(model, table, minus)) / (2.0 * step);
    INFO("dof " << i);
    CHECK(at_x.gradient[i] == doctest::Approx(fd).epsilon(1e-6).scale(1.0));
  }
  // The Hessian: free-free blocks in the bands, and K w on every DOF, against differences of
  // the gradient (the test term's Hessian is PSD, so every projection returns it exactly).
  Eigen::MatrixXd hessian(x.size(), x.size());
  for (int j = 0; j < x.size(); ++j) {
    VecX plus = x, minus = x;
    plus[j] += step;
    minus[j] -= step;
    hessian.col(j) = (assemble<D>(model, table, plus, w, projection).gradient -
                      assemble<D>(model, table, minus, w, projection).gradient) /
                     (2.0 * step);
  }
  // The differences of a gradient with transported frames are not symmetric (the frames'
  // holonomy); the Hessian is their symmetric part (docs/physics.md, "Discrete elastic rods").
  hessian = (0.5 * (hessian + hessian.transpose())).eval();
  const double scale = hessian.cwiseAbs().maxCoeff();
  CHECK((at_x.kw - hessian * w).norm() <= 1e-6 * scale * w.norm());
  for (int r = 0; r < layout.rod_count(); ++r) {
    const auto [begin, end] = layout.rod_free_range(r);
    Eigen::MatrixXd expected(end - begin, end - begin);
    const auto [dof_begin, dof_end] = layout.rod_dof_range(r);
    for (int a = dof_begin; a < dof_end; ++a)
      for (int b = dof_begin; b < dof_end; ++b)
        if (layout.free_index(a) >= 0 && layout.free_index(b) >= 0)
          expected(layout.free_index(a) - begin, layout.free_index(b) - begin) = hessian(a, b);
    INFO("rod " << r);
    CHECK((at_x.blocks[r] - expected).cwiseAbs().maxCoeff() <= 1e-6 * scale);
  }
}

template <int D>
void check_dimension() {
  std::mt19937 rng(41 + D);
  const Model model = twisting_model(D, rng);
  for (const HessianProjection projection : {HessianProjection::Exact, HessianProjection::Projected}) {
    ElementTable<ProbeTerm> probe;
    probe.build(model);
    CHECK(probe.size() == 4 + 3);
    check_against_finite_differences<D>(model, probe, projection, rng);
  }
  // Springs between vertices whose DOFs are no longer adjacent (twist DOFs between them).
  ElementTable<StretchTerm> stretch;
  stretch.build(model);
  CHECK(stretch.size() == 5 + 4);
  check_against_finite_differences<D>(model, stretch, HessianProjection::Exact, rng);
}

}  // namespace

TEST_CASE("a rod with twist interleaves one twist DOF per edge between its vertices' DOFs") {
  std::mt19937 rng(3);
  for (const int d : {2, 3}) {
    const Model model = twisting_model(d, rng);
    const DofLayout& layout = model.layout;
    CAPTURE(d);
    CHECK(layout.dof_count() == (6 * d + 5) + (5 * d + 4));
    CHECK(layout.twist_dof_count() == 9);
    CHECK(layout.node_count() == 11 + 9);
    for (int r = 0; r < 2; ++r) {
      const auto [first, last] = layout.rod_dof_range(r);
      int expected = first;
      for (int i = 0; i < model.rods[r].vertex_count(); ++i) {
        CHECK(layout.vertex_dof(r, i) == expected);
        expected += d;
        if (i + 1 < model.rods[r].vertex_count()) {
          CHECK(layout.edge_dof(r, i) == expected);
          CHECK(layout.dof_owner(expected) == std::pair<int, int>{r, i});
          ++expected;
        }
      }
      CHECK(expected == last);
    }
    // The clamped first edge: its two vertices and its twist are fixed; the next edge's twist is free.
    CHECK(layout.free_index(layout.edge_dof(0, 0)) == -1);
    CHECK(layout.free_index(layout.edge_dof(0, 1)) == 0);
    CHECK(layout.free_dof_count() == layout.dof_count() - (2 * d + 1));
    // Nodes in DOF order: vertex, edge, vertex, ...
    for (int k = 0; k + 1 <= layout.node_count(); ++k) CHECK(layout.node_dof(k) < layout.node_dof(k + 1));
    CHECK(layout.node_dof(1) - layout.node_dof(0) == d);
    CHECK(layout.node_dof(2) - layout.node_dof(1) == 1);
  }
  // Without twist the layout is as before: no edge DOFs, nodes are vertices.
  Model plain = twisting_model(3, rng);
  for (Rod& rod : plain.rods) rod.twist = false;
  plain.finalize();
  CHECK(plain.layout.edge_dof(0, 0) == -1);
  CHECK(plain.layout.twist_dof_count() == 0);
  CHECK(plain.layout.node_count() == plain.layout.vertex_count());
}

TEST_CASE("twist DOFs have the edges' axial moment of inertia, no gravity, and start at zero") {
  std::mt19937 rng(13);
  Model model = twisting_model(3, rng);
  model.gravity = Vec3(0.0, -9.81, 0.0);
  const VecX mass = model.dof_masses();
  const Rod& rod = model.rods[1];
  const double radius = rod.material.radius;
  for (int j = 0; j < rod.edge_count(); ++j) {
    // A cylinder's moment about its axis: m r^2 / 2, m = density pi r^2 L.
    const double cylinder = rod.material.density * kPiForTests * radius * radius * rod.rest_lengths[j] * radius * radius / 2.0;
    CHECK(mass[model.layout.edge_dof(1, j)] == doctest::Approx(cylinder).epsilon(1e-12));
  }
  CHECK(mass[model.layout.vertex_dof(1, 2)] == doctest::Approx(rod.vertex_mass(2)).epsilon(1e-15));
  const State state = initial_state(model);
  for (int j = 0; j < rod.edge_count(); ++j) CHECK(state.positions[model.layout.edge_dof(1, j)] == 0.0);
  // The gravity force on a twist DOF is zero: with no elastic term, its gradient is zero.
  SystemAssembler assembler(model);
  VecX gradient;
  assembler.assemble(state.positions, 0.0, HessianProjection::Projected, 0.0, gradient);
  for (int j = 0; j < rod.edge_count(); ++j) CHECK(gradient[model.layout.edge_dof(1, j)] == 0.0);
  CHECK(gradient[model.layout.vertex_dof(1, 2) + 1] == doctest::Approx(rod.vertex_mass(2) * 9.81).epsilon(1e-12));
  // The assembler's own pattern, band widths and expansion on a layout with twist nodes: its
  // matrix against finite differences of its gradient, away from rest.
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  VecX x = state.positions;
  for (int i = 0; i < x.size(); ++i) x[i] += 0.01 * u(rng);
  // The bend-twist terms' derivatives are exact where their frames were committed: commit
  // them at x, as the step's "transport frames" stage does.
  assembler.advance(x);
  VecX at_x;
  assembler.assemble(x, 0.0, HessianProjection::Exact, 1.0, at_x);
  const Eigen::MatrixXd matrix(assembler.matrix());
  const DofLayout& layout = model.layout;
  // The analytic gradient at a point the frames were not committed at is not the exact
  // gradient there (the kernels transport the frames, the gradient is exact where they were
  // committed), so its Jacobian is the Hessian only up to an antisymmetric part: compare the
  // matrix with the symmetrised Jacobian (tests/energy/test_bend_twist.cpp checks the
  // kernels against second differences of the energy itself).
  const int n = static_cast<int>(x.size());
  Eigen::MatrixXd jacobian = Eigen::MatrixXd::Zero(n, n);
  for (int j = 0; j < n; ++j) {
    if (layout.free_index(j) < 0) continue;
    VecX plus = x, minus = x, g_plus, g_minus;
    plus[j] += 1e-6;
    minus[j] -= 1e-6;
    assembler.assemble(plus, 0.0, HessianProjection::Exact, 0.0, g_plus);
    assembler.assemble(minus, 0.0, HessianProjection::Exact, 0.0, g_minus);
    jacobian.col(j) = (g_plus - g_minus) / 2e-6;
  }
  const Eigen::MatrixXd symmetric = 0.5 * (jacobian + jacobian.transpose());
  double largest = 0.0, worst = 0.0;
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) {
      if (layout.free_index(i) < 0 || layout.free_index(j) < 0) continue;
      largest = std::max(largest, std::abs(symmetric(i, j)));
      worst = std::max(worst, std::abs(matrix(layout.free_index(i), layout.free_index(j)) - symmetric(i, j)));
    }
  CHECK(largest > 0.0);
  CAPTURE(largest);
  CHECK(worst <= 1e-6 * largest);
}

TEST_CASE("elements mixing vertex and edge slots scatter to the right DOFs") {
  std::mt19937 rng(5);
  const Model model = twisting_model(3, rng);
  ElementTable<ProbeTerm> probe;
  probe.build(model);
  const DofLayout& layout = model.layout;
  int k = 0;
  for (int r = 0; r < 2; ++r) {
    const auto [begin, end] = probe.rod_elements(r);
    CHECK(begin == k);
    for (int i = 1; i + 1 < model.rods[r].vertex_count(); ++i, ++k) {
      const auto& dof = probe.dofs(k);
      CHECK(dof[0] == layout.vertex_dof(r, i - 1));
      CHECK(dof[1] == layout.edge_dof(r, i - 1));
      CHECK(dof[2] == layout.vertex_dof(r, i));
      CHECK(dof[3] == layout.edge_dof(r, i));
      CHECK(dof[4] == layout.vertex_dof(r, i + 1));
    }
    CHECK(end == k);
  }
}

TEST_CASE("element table gradient, band and K w match finite differences with twist slots, 2D") {
  check_dimension<2>();
}

TEST_CASE("element table gradient, band and K w match finite differences with twist slots, 3D") {
  check_dimension<3>();
}

namespace {

/// Two rods in a line, joined across the gap between rod 0's last vertex and rod 1's first by
/// coupling elements: a spring over the gap and bending at both joint vertices.
template <int D>
Model joined_rods(std::mt19937& rng, std::vector<int> fixed0) {
  std::vector<Rod> rods;
  rods.push_back(rod_from_vertices(random_vertices(4, 0.1, 0.6, D, rng), D, std::move(fixed0), soft_material(),
                                   RestShape::Initial, "a"));
  std::vector<Vec3> b = random_vertices(3, 0.1, 0.6, D, rng);
  for (Vec3& v : b) v += rods[0].initial_positions.back() + Vec3(0.1, 0.05, D == 3 ? 0.02 : 0.0);
  rods.push_back(rod_from_vertices(b, D, {}, soft_material(), RestShape::Initial, "b"));
  return make_model(D, std::move(rods), Vec3(0.5, -9.81, D == 3 ? 1.0 : 0.0));
}

template <int D>
void add_joint(const Model& model, SystemAssembler& assembler) {
  const DofLayout& layout = model.layout;
  const int last = model.rods[0].vertex_count() - 1;
  assembler.table<StretchTerm>().add_coupling({layout.vertex_dof(0, last), layout.vertex_dof(1, 0)}, {0.08, 40.0});
  assembler.table<BendTerm>().add_coupling(
      {layout.vertex_dof(0, last - 1), layout.vertex_dof(0, last), layout.vertex_dof(1, 0)}, {0.3, 0.02});
  assembler.table<BendTerm>().add_coupling({layout.vertex_dof(0, last), layout.vertex_dof(1, 0), layout.vertex_dof(1, 1)},
                                           {0.0, 0.03});
}

template <int D>
void check_coupled_assembly() {
  std::mt19937 rng(11 + D);
  const Model model = joined_rods<D>(rng, {0});
  SystemAssembler assembler(model);
  add_joint<D>(model, assembler);
  REQUIRE(assembler.has_coupling());
  const DofLayout& layout = model.layout;
  VecX x(layout.dof_count());
  for (int r = 0; r < 2; ++r)
    for (int i = 0; i < model.rods[r].vertex_count(); ++i)
      x.segment(layout.vertex_dof(r, i), D) = model.rods[r].initial_positions[i].template head<D>();
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (int i = 0; i < x.size(); ++i) x[i] += 0.01 * u(rng);
  VecX w(x.size());
  for (int i = 0; i < w.size(); ++i) w[i] = u(rng);

  VecX gradient, kw;
  EnergyBreakdown energy;
  assembler.assemble(x, 0.0, HessianProjection::Exact, 1.0, gradient, &w, &kw, &energy);
  CHECK(energy.potential() == doctest::Approx(assembler.potential_energies(x, 0.0).potential()).epsilon(1e-14));
  const SparseMatrix system = assembler.matrix() + assembler.coupling_matrix();
  const double step = 1e-6;
  Eigen::MatrixXd hessian(x.size(), x.size());
  for (int i = 0; i < x.size(); ++i) {
    VecX plus = x, minus = x;
    plus[i] += step;
    minus[i] -= step;
    const double fd =
        (assembler.potential_energies(plus, 0.0).potential() - assembler.potential_energies(minus, 0.0).potential()) /
        (2.0 * step);
    INFO("dof " << i);
    CHECK(gradient[i] == doctest::Approx(fd).epsilon(1e-6).scale(1.0));
    VecX g_plus, g_minus;
    assembler.assemble(plus, 0.0, HessianProjection::Exact, 0.0, g_plus);
    assembler.assemble(minus, 0.0, HessianProjection::Exact, 0.0, g_minus);
    hessian.col(i) = (g_plus - g_minus) / (2.0 * step);
  }
  const double scale = hessian.cwiseAbs().maxCoeff();
  CHECK((kw - hessian * w).norm() <= 1e-6 * scale * w.norm());
  const Eigen::MatrixXd dense_system(system);
  for (int a = 0; a < x.size(); ++a)
    for (int b = 0; b < x.size(); ++b) {
      const int fa = layout.free_index(a), fb = layout.free_index(b);
      if (fa < 0 || fb < 0) continue;
      INFO("entry " << a << ", " << b);
      CHECK(std::abs(dense_system(fa, fb) - hessian(a, b)) <= 1e-6 * scale);
    }
  // The coupling entries are there: the joint couples rod 0's DOFs with rod 1's.
  const int f0 = layout.free_index(layout.vertex_dof(0, model.rods[0].vertex_count() - 1));
  const int f1 = layout.free_index(layout.vertex_dof(1, 0));
  CHECK(assembler.matrix().coeff(f0, f1) == 0.0);
  CHECK(assembler.coupling_matrix().coeff(f0, f1) != 0.0);
  assembler.clear_coupling();
  CHECK(!assembler.has_coupling());
}

}  // namespace

TEST_CASE("coupling elements across rods: gradient, coupling matrix and K w match finite differences, 2D") {
  check_coupled_assembly<2>();
}

TEST_CASE("coupling elements across rods: gradient, coupling matrix and K w match finite differences, 3D") {
  check_coupled_assembly<3>();
}

TEST_CASE("a rod hung from a fixed rod by a coupling spring settles where the spring carries its weight") {
  // Rod "hook" is held in place; rod "hanging" (free, vertical) hangs below its tip from a
  // coupling spring of rest length L0 and stiffness k. At rest the spring carries the hanging
  // rod's weight m g: its first vertex sits L0 + m g / k below the tip. Without the spring the
  // rod falls away.
  for (const bool tied : {false, true}) {
    const double edge = 0.05, rest_gap = 0.02, spring = 50.0;
    std::vector<Rod> rods;
    rods.push_back(straight_rod(2, Vec3(0.0, 0.2, 0.0), Vec3(0.0, 0.1, 0.0), 3, {0, 1, 2}, soft_material(), "hook"));
    rods.push_back(straight_rod(4, Vec3(0.0, 0.1 - rest_gap, 0.0), Vec3(0.0, 0.1 - rest_gap - 4 * edge, 0.0), 3, {},
                                soft_material(), "hanging"));
    Model model = make_model(3, std::move(rods), earth_gravity());
    model.damping_mass = 20.0;
    ImplicitEuler solver(model, SolverSettings{});
    if (tied)
      solver.assembler().table<StretchTerm>().add_coupling(
          {model.layout.vertex_dof(0, 2), model.layout.vertex_dof(1, 0)}, {rest_gap, spring});
    State state = initial_state(model);
    for (int k = 0; k < 200; ++k) {
      const StepReport report = solver.step(state, 0.02);
      REQUIRE_MESSAGE(report.ok, report.failure);
    }
    double weight = 0.0;
    for (int i = 0; i < model.rods[1].vertex_count(); ++i) weight += model.rods[1].vertex_mass(i) * 9.81;
    const double top = state.positions[model.layout.vertex_dof(1, 0) + 1];
    CAPTURE(tied);
    if (tied) {
      CHECK(top == doctest::Approx(0.1 - rest_gap - weight / spring).epsilon(1e-6));
      CHECK(std::abs(state.positions[model.layout.vertex_dof(1, 0)]) < 1e-9);
    } else {
      CHECK(top < 0.1 - rest_gap - 1.0);  // fell freely
    }
  }
}

TEST_CASE("discrete-elastic-rod terms in the element table: gradient, band and K w match finite differences") {
  // Material bending and twist on rods with twist DOFs, at random twisted and bent states,
  // with frames committed at the state and carried by parallel transport to the differences.
  std::mt19937 rng(17);
  const Model model = twisting_model(3, rng);
  ElementTable<BendTwistTerm> table;
  table.build(model);
  CHECK(table.size() == 4 + 3);
  for (int trial = 0; trial < 2; ++trial) check_against_finite_differences<3>(model, table, HessianProjection::Exact, rng);
  // Projected, bending modes (Gauss-Newton) and Gauss-Newton: every rod block PSD.
  const VecX x = random_state(model, rng);
  VecX w = VecX::Zero(x.size());
  for (HessianProjection projection :
       {HessianProjection::Projected, HessianProjection::BendingModes, HessianProjection::GaussNewton})
    for (const Eigen::MatrixXd& block : assemble<3>(model, table, x, w, projection).blocks)
      CHECK(Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(block).eigenvalues().minCoeff() >= -1e-9 * block.norm());
}

namespace {
/// BendTwistTerm without its chain: every element carries both its edges' frames itself.
struct UnchainedBendTwist {
  static constexpr auto kSlots = BendTwistTerm::kSlots;
  static constexpr auto kEnergyTerms = BendTwistTerm::kEnergyTerms;
  using Constants = BendTwistTerm::Constants;
  template <class Emit>
  static void for_each_element(const Rod& rod, Emit&& emit) {
    BendTwistTerm::for_each_element(rod, emit);
  }
  template <int D>
  static BendTwistTerm::Energies energy(const Vec<3 * D + 2>& q, const Constants& c) {
    return BendTwistTerm::energy<D>(q, c);
  }
  template <int D, class Sink>
  static void evaluate(const Vec<3 * D + 2>& q, const Constants& c, const LocalRequest& request, Sink&& sink) {
    BendTwistTerm::evaluate<D>(q, c, request, sink);
  }
  template <int D>
  static void advance(const Vec<3 * D + 2>& q, Constants& c) {
    BendTwistTerm::Chain chain;
    BendTwistTerm::advance<D>(q, c, chain);
  }
};
static_assert(HasChain<BendTwistTerm>::value && !HasChain<UnchainedBendTwist>::value);
}  // namespace

TEST_CASE("chained bend-twist elements give the unchained elements' results bit for bit") {
  // Each edge's frame is carried once, by the element before it, and handed on: energies,
  // gradients, bands, K w and committed frames must not change in the last bit.
  std::mt19937 rng(23);
  const Model model = twisting_model(3, rng);
  ElementTable<BendTwistTerm> chained;
  ElementTable<UnchainedBendTwist> unchained;
  chained.build(model);
  unchained.build(model);
  const VecX committed_at = random_state(model, rng);
  chained.advance<3>(committed_at);
  unchained.advance<3>(committed_at);
  VecX x = committed_at;
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (int i = 0; i < x.size(); ++i) x[i] += 0.01 * u(rng);
  VecX w(x.size());
  for (int i = 0; i < w.size(); ++i) w[i] = u(rng);
  for (const HessianProjection projection : {HessianProjection::BendingModes, HessianProjection::Exact}) {
    CAPTURE(static_cast<int>(projection));
    const Assembled a = assemble<3>(model, chained, x, w, projection);
    const Assembled b = assemble<3>(model, unchained, x, w, projection);
    CHECK(a.energy == b.energy);
    CHECK(a.gradient == b.gradient);
    CHECK(a.kw == b.kw);
    for (std::size_t r = 0; r < a.blocks.size(); ++r) CHECK(a.blocks[r] == b.blocks[r]);
    CHECK(total_energy<3>(model, chained, x) == total_energy<3>(model, unchained, x));
  }
  chained.advance<3>(x);
  unchained.advance<3>(x);
  for (int k = 0; k < chained.size(); ++k) {
    const StencilFrames& f = chained.constants(k).frames;
    const StencilFrames& g = unchained.constants(k).frames;
    for (int j = 0; j < 2; ++j) {
      CHECK(f.tangent[j] == g.tangent[j]);
      CHECK(f.director[j] == g.director[j]);
    }
    CHECK(f.reference_twist == g.reference_twist);
    // The shared edge's committed frame is kept equal by both elements that hold it.
    if (k + 1 < chained.size() && BendTwistTerm::continues(chained.dofs(k), chained.dofs(k + 1))) {
      CHECK(chained.constants(k + 1).frames.tangent[0] == f.tangent[1]);
      CHECK(chained.constants(k + 1).frames.director[0] == f.director[1]);
    }
  }
}

TEST_CASE("rank-one terms scattered as one lower triangle: the slot-pair blocks' values bit for bit") {
  // A stencil whose DOFs are free and consecutive in the band takes band()'s one-pass path;
  // it must give the slot-pair path's sums exactly.
  using Scatter = LocalScatter<BendTwistTerm, 3>;
  std::mt19937 rng(29);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const int w = 12, size = 11 + 3, first = 2;  // the stencil at free DOFs 2 .. 12 of a 14-DOF band
  int bases[15];
  const int offset[5] = {0, 3, 4, 7, 8};
  for (int a = 0; a < 5; ++a)
    for (int b = 0; b <= a; ++b) bases[a * (a + 1) / 2 + b] = band_index(first + offset[a], first + offset[b], w);
  RankOneTerms<3> terms;
  for (int k = 0; k < 3; ++k) {
    terms.value[k] = 1.0 + u(rng);
    terms.vector[k] = Vec11::Random();
  }
  std::vector<double> fast(band_length(size, w)), slots;
  for (double& v : fast) v = u(rng);
  slots = fast;
  RodAssemblyTarget target;
  target.band_width = w;
  target.matrix_scale = 0.37;
  target.band = fast.data();
  Scatter::band(target, bases, PositiveSpectrum<RankOneTerms<3>>{terms}, true);
  target.band = slots.data();
  Scatter::band(target, bases, PositiveSpectrum<RankOneTerms<3>>{terms}, false);
  CHECK(fast == slots);
  // And both are the rank-one sum.
  Mat11 dense = Mat11::Zero();
  for (int k = 0; k < 3; ++k) dense += 0.37 * terms.value[k] * terms.vector[k] * terms.vector[k].transpose();
  std::vector<double> zero(band_length(size, w), 0.0);
  target.band = zero.data();
  Scatter::band(target, bases, PositiveSpectrum<RankOneTerms<3>>{terms}, true);
  for (int i = 0; i < 11; ++i)
    for (int j = 0; j <= i; ++j)
      CHECK(zero[band_index(first + i, first + j, w)] == doctest::Approx(dense(i, j)).epsilon(1e-14));
}

TEST_CASE("committing the positions of the last gradient pass takes the frames it carried, bit for bit") {
  // The step commits the positions its convergence test has just evaluated the gradient at;
  // the assembler then takes the frames that pass carried instead of carrying them again. The
  // frames must be those of carrying them at the commit, and anything else must carry them:
  // other positions, a Hessian pass in between that keeps nothing, a restored state, a second
  // commit.
  std::mt19937 rng(31);
  const Model model = twisting_model(3, rng);
  SystemAssembler reused(model), carried(model);
  const VecX start = random_state(model, rng);
  reused.advance(start);
  carried.advance(start);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  auto moved = [&](const VecX& from) {
    VecX x = from;
    for (int i = 0; i < x.size(); ++i) x[i] += 0.01 * u(rng);
    return x;
  };
  auto same_frames = [&] {
    const ElementTable<BendTwistTerm>& a = reused.table<BendTwistTerm>();
    const ElementTable<BendTwistTerm>& b = carried.table<BendTwistTerm>();
    REQUIRE(a.size() > 0);
    bool same = true;
    for (int k = 0; k < a.size(); ++k) {
      const StencilFrames& f = a.constants(k).frames;
      const StencilFrames& g = b.constants(k).frames;
      for (int j = 0; j < 2; ++j) same = same && f.tangent[j] == g.tangent[j] && f.director[j] == g.director[j];
      same = same && f.reference_twist == g.reference_twist;
    }
    return same;
  };
  VecX gradient;
  // A gradient pass at x, then its commit: reused, and the same frames.
  const VecX x = moved(start);
  reused.assemble(x, 0.0, HessianProjection::BendingModes, 0.0, gradient);
  reused.advance(x);
  carried.advance(x);
  CHECK(reused.last_advance_reused_frames());
  CHECK_FALSE(carried.last_advance_reused_frames());
  CHECK(same_frames());
  // The next step's first pass, with a Hessian at the committed positions, replays what the
  // gradient pass kept: gradient, matrix and energies as evaluating them gives, bit for bit.
  auto same_pass = [&](const VecX& at, HessianProjection projection) {
    VecX g_reused, g_carried;
    EnergyBreakdown e_reused, e_carried;
    reused.assemble(at, 0.0, projection, 1.0, g_reused, nullptr, nullptr, &e_reused);
    carried.assemble(at, 0.0, projection, 1.0, g_carried, nullptr, nullptr, &e_carried);
    CHECK_FALSE(carried.last_pass_replayed());
    const SparseMatrix& a = reused.matrix();
    const SparseMatrix& b = carried.matrix();
    REQUIRE(a.nonZeros() == b.nonZeros());
    bool same = g_reused == g_carried && e_reused.bend == e_carried.bend && e_reused.twist == e_carried.twist;
    for (int k = 0; k < a.nonZeros(); ++k) same = same && a.valuePtr()[k] == b.valuePtr()[k];
    return same;
  };
  CHECK(same_pass(x, HessianProjection::BendingModes));
  CHECK(reused.last_pass_replayed());
  CHECK(same_pass(x, HessianProjection::BendingModes));  // again: still kept
  CHECK(reused.last_pass_replayed());
  CHECK(same_pass(x, HessianProjection::Projected));  // not the kept kernel's Hessian: evaluated
  CHECK(same_pass(moved(x), HessianProjection::BendingModes));  // elsewhere: evaluated
  CHECK_FALSE(reused.last_pass_replayed());
  // A second commit of the same positions: the kept frames were carried from the frames now
  // replaced, so they are carried again.
  reused.advance(x);
  carried.advance(x);
  CHECK_FALSE(reused.last_advance_reused_frames());
  CHECK(same_frames());
  // A pass at y, a commit at z: carried.
  const VecX y = moved(x), z = moved(x);
  reused.assemble(y, 0.0, HessianProjection::BendingModes, 0.0, gradient);
  reused.advance(z);
  carried.advance(z);
  CHECK_FALSE(reused.last_advance_reused_frames());
  CHECK(same_frames());
  // A gradient pass at p, a Hessian pass at q (keeps nothing), a commit at p: reused.
  const SystemAssembler::ElementState saved = reused.element_state(), carried_saved = carried.element_state();
  const VecX p = moved(z), q = moved(z);
  reused.assemble(p, 0.0, HessianProjection::BendingModes, 0.0, gradient);
  reused.assemble(q, 0.0, HessianProjection::BendingModes, 1.0, gradient);
  reused.advance(p);
  carried.advance(p);
  CHECK(reused.last_advance_reused_frames());
  CHECK(same_frames());
  // A gradient pass at s, the frames restored to those committed at z (as a split step that
  // fails undoes its first half), a commit at s: carried from z's frames, not p's.
  const VecX s = moved(p);
  reused.assemble(s, 0.0, HessianProjection::BendingModes, 0.0, gradient);
  reused.restore_element_state(saved);
  carried.restore_element_state(carried_saved);
  // A pass with a Hessian at p right after the restore (the frames are z's now, not p's):
  // nothing replayed, the values of evaluating.
  CHECK(same_pass(p, HessianProjection::BendingModes));
  CHECK_FALSE(reused.last_pass_replayed());
  reused.advance(s);
  carried.advance(s);
  CHECK_FALSE(reused.last_advance_reused_frames());
  CHECK(same_frames());
  // After a commit that carried its frames, nothing is replayed either.
  CHECK(same_pass(s, HessianProjection::BendingModes));
  CHECK_FALSE(reused.last_pass_replayed());
}

TEST_CASE("steps of rods with twist commit the frames their convergence test carried, and replay its results") {
  // The commit takes the kept frames only where it commits the very positions the convergence
  // test evaluated, bit for bit. A clamped twist angle at -0 (as a scene's initial twists can
  // give) once made every step of scenes/curly_hair.json carry its frames again: v = -0 plus a
  // zero correction is +0, so the test ran at +0 and the commit wrote -0. Both schemes, 1 and 2
  // threads: every step that converged on its first solve takes the kept frames, and the same
  // frames come out as with a build that never keeps them would give (threads agree).
  std::mt19937 rng(37);
  Model model = twisting_model(3, rng);
  model.gravity = Vec3(0.0, -9.81, 0.0);
  State start = initial_state(model);
  const int clamped_twist = model.layout.edge_dof(0, 0);
  REQUIRE(model.layout.free_index(clamped_twist) < 0);
  start.positions[clamped_twist] = -0.0;
  start.velocities[clamped_twist] = -0.0;
  std::vector<State> ends;
  for (const TimeScheme scheme : {TimeScheme::BackwardEuler, TimeScheme::Bdf2}) {
    for (const int threads : {1, 2}) {
      CAPTURE(static_cast<int>(scheme));
      CAPTURE(threads);
      SolverSettings settings;
      settings.scheme = scheme;
      settings.threads = threads;
      ImplicitEuler integrator(model, settings);
      State state = start;
      int adopted = 0;
      const int steps = 20;
      for (int k = 0; k < steps; ++k) {
        const StepReport report = integrator.step(state, 1e-3);
        REQUIRE_MESSAGE(report.ok, report.failure);
        if (integrator.assembler().last_advance_reused_frames()) ++adopted;
      }
      // Each backward-Euler step after the first starts with a pass at the positions just
      // committed: replayed. BDF2's first pass is at its own x^ = (4 x_n - x_{n-1}) / 3.
      const long replayed = integrator.assembler().replayed_passes();
      CAPTURE(adopted);
      CAPTURE(replayed);
      CHECK(adopted == steps);
      CHECK(replayed == (scheme == TimeScheme::BackwardEuler ? steps - 1 : 0));
      ends.push_back(state);
    }
  }
  CHECK(ends[0].positions == ends[1].positions);
  CHECK(ends[2].positions == ends[3].positions);
}

TEST_CASE("a helix with twist DOFs is at rest as given, and committing frames changes no energy") {
  HelixSpec spec;
  spec.radius = 0.005;
  spec.pitch = 0.005;
  spec.turns = 3.0;
  spec.segments = 36;
  Rod rod = rod_from_vertices(helix_rod(spec), 3, {0, 1}, soft_material(), RestShape::Initial, "helix");
  rod.twist = true;
  rod.material_normal = Vec3(0.0, 0.0, 1.0);
  const Model model = single_rod_model(3, std::move(rod));
  ElementTable<BendTwistTerm> twist;
  twist.build(model);
  VecX x = VecX::Zero(model.layout.dof_count());
  for (int i = 0; i < model.rods[0].vertex_count(); ++i)
    x.segment<3>(model.layout.vertex_dof(0, i)) = model.rods[0].initial_positions[i];
  // Bending and twist energies as separate parts (the energy breakdown's entries).
  const auto energies = [&] {
    twist.rod_energy<3>(0, x);
    return twist.last_rod_energy_parts(0);
  };
  CHECK(energies()[0] == doctest::Approx(0.0).scale(1e-20));
  CHECK(energies()[1] == doctest::Approx(0.0).scale(1e-20));
  // Bent and twisted away from rest: energy > 0, and committing the frames there keeps it.
  std::mt19937 rng(9);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (int i = 0; i < x.size(); ++i) x[i] += (model.layout.dof_owner(i).second > 1 ? 1e-3 : 0.0) * u(rng);
  for (int j = 1; j < model.rods[0].edge_count(); ++j) x[model.layout.edge_dof(0, j)] = 0.3 * u(rng);
  const double bent = energies()[0], twisted = energies()[1];
  CHECK(bent > 0.0);
  CHECK(twisted > 0.0);
  CHECK(twist.rod_energy<3>(0, x) == bent + twisted);
  twist.advance<3>(x);
  CHECK(energies()[0] == doctest::Approx(bent).epsilon(1e-12));
  CHECK(energies()[1] == doctest::Approx(twisted).epsilon(1e-12));
  // The committed frames are x's: tangents along x's edges, directors perpendicular to them.
  for (int k = 0; k < twist.size(); ++k) {
    const auto& dof = twist.dofs(k);
    const StencilFrames& frames = twist.constants(k).frames;
    const Vec3 edge0 = (x.segment<3>(dof[2]) - x.segment<3>(dof[0])).normalized();
    const Vec3 edge1 = (x.segment<3>(dof[4]) - x.segment<3>(dof[2])).normalized();
    CHECK((frames.tangent[0] - edge0).norm() < 1e-14);
    CHECK((frames.tangent[1] - edge1).norm() < 1e-14);
    CHECK(std::abs(frames.director[0].dot(edge0)) < 1e-12);
    CHECK(std::abs(frames.director[1].dot(edge1)) < 1e-12);
  }
}

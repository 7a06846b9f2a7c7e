// Experiment (not part of the build): how many projected Gauss-Seidel sweeps of
// contact/coulomb_solver.hpp a brush-like Delassus operator takes from a cold start, as the
// brush grows. Figures in docs/contact.md, "Built so far". Build and run from the project root:
//
//   g++ -O2 -std=c++17 -I/usr/include/eigen3 -Iinclude tools/experiments/pgs_brush.cpp \
//       src/contact/coulomb_solver.cpp src/contact/segment_contact_frame.cpp \
//       src/contact/segment_distance.cpp -o /tmp/pgs_brush
//   /tmp/pgs_brush SIDE EVERY MU [OMEGA_N OMEGA_T]     (e.g. 8 2 0.3, or 8 2 0.3 1.8 1.5)
//
// SIDE x SIDE vertical bristles (25 mm, 20 edges, radius 0.15 mm, E = 3 GPa, 1100 kg/m^3, the
// two root vertices fixed), each with the system block of a step at dt = 1/60 s: lumped mass
// plus h^2 times stretch springs along the axis and second-difference bending across it.
// Every bristle touches its +x and +y neighbours at every EVERY-th vertex from the third, with
// a horizontal normal; every contact approaches at 1 to 2 cm/s and slips at up to 1 cm/s.
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include <Eigen/Dense>

#include "bristle/contact/coulomb_solver.hpp"
#include "bristle/contact/segment_contact_frame.hpp"

using namespace bristle;

int main(int argc, char** argv) {
  const int side = argc > 1 ? std::atoi(argv[1]) : 4;
  const int every = argc > 2 ? std::atoi(argv[2]) : 4;
  const double mu = argc > 3 ? std::atof(argv[3]) : 0.3;
  const double normal_relaxation = argc > 4 ? std::atof(argv[4]) : 1.0;
  const double tangential_relaxation = argc > 5 ? std::atof(argv[5]) : 1.0;
  const int vertices = 21, free_vertices = vertices - 2;
  const double length = 0.025, edge = length / (vertices - 1), radius = 1.5e-4, density = 1100.0, young = 3e9;
  const double h = 1.0 / 60.0;
  const double area = M_PI * radius * radius, inertia = M_PI * std::pow(radius, 4) / 4.0;
  const double mass = density * area * edge, stretch = young * area / edge, bend = young * inertia / std::pow(edge, 3);
  // One bristle's block (all bristles alike), on its free vertices (2 ..).
  const int n = 3 * free_vertices;
  auto free_of = [](int vertex) { return vertex - 2; };
  Eigen::MatrixXd A = Eigen::MatrixXd::Zero(n, n);
  for (int v = 2; v < vertices; ++v) A.block<3, 3>(3 * free_of(v), 3 * free_of(v)) += mass * Mat3::Identity();
  for (int e = 0; e + 1 < vertices; ++e) {
    const int ends[2] = {e, e + 1};
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 2; ++j)
        if (ends[i] >= 2 && ends[j] >= 2)
          A(3 * free_of(ends[i]) + 2, 3 * free_of(ends[j]) + 2) += h * h * stretch * (i == j ? 1.0 : -1.0);
  }
  for (int c = 1; c + 1 < vertices; ++c) {
    const int stencil[3] = {c - 1, c, c + 1};
    const double weight[3] = {1.0, -2.0, 1.0};
    for (int d = 0; d < 2; ++d)
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j)
          if (stencil[i] >= 2 && stencil[j] >= 2)
            A(3 * free_of(stencil[i]) + d, 3 * free_of(stencil[j]) + d) += h * h * bend * weight[i] * weight[j];
  }
  const Eigen::LDLT<Eigen::MatrixXd> factor(A);
  struct Contact {
    int a, b, vertex;  // bristle a's and b's segment from `vertex`, at its middle
    Vec3 normal;       // from b to a
  };
  std::vector<Contact> contacts;
  for (int i = 0; i < side; ++i)
    for (int j = 0; j < side; ++j) {
      const int a = i * side + j;
      for (int v = 3; v + 1 < vertices; v += every) {
        if (i + 1 < side) contacts.push_back({a, a + side, v, Vec3(-1, 0, 0)});
        if (j + 1 < side) contacts.push_back({a, a + 1, v, Vec3(0, -1, 0)});
      }
    }
  const int m = static_cast<int>(contacts.size());
  // Each contact's frame and its response A^-1 H^T on its two bristles (+ on a, - on b).
  std::vector<Mat3> frames(m);
  std::vector<Eigen::MatrixXd> on_a(m), on_b(m);
  for (int i = 0; i < m; ++i) {
    Vec3 t1, t2;
    tangent_basis(contacts[i].normal, t1, t2);
    frames[i].row(0) = contacts[i].normal.transpose();
    frames[i].row(1) = t1.transpose();
    frames[i].row(2) = t2.transpose();
    Eigen::MatrixXd force = Eigen::MatrixXd::Zero(n, 3);
    for (int k = 0; k < 2; ++k) force.block<3, 3>(3 * free_of(contacts[i].vertex + k), 0) += 0.5 * frames[i].transpose();
    on_a[i] = factor.solve(force);
    on_b[i] = -on_a[i];
  }
  CoulombProblem problem;
  problem.block_offsets.push_back(0);
  std::mt19937 random(1);
  std::uniform_real_distribution<double> symmetric(-1.0, 1.0);
  for (int i = 0; i < m; ++i) {
    Mat3 diagonal = Mat3::Zero();
    for (int j = 0; j < m; ++j) {
      Mat3 block = Mat3::Zero();
      const int rods_i[2] = {contacts[i].a, contacts[i].b}, rods_j[2] = {contacts[j].a, contacts[j].b};
      for (int si = 0; si < 2; ++si)
        for (int sj = 0; sj < 2; ++sj) {
          if (rods_i[si] != rods_j[sj]) continue;
          const Eigen::MatrixXd& response = sj == 0 ? on_a[j] : on_b[j];
          const double sign = si == 0 ? 1.0 : -1.0;
          for (int k = 0; k < 2; ++k)
            block += sign * 0.5 * frames[i] * response.block<3, 3>(3 * free_of(contacts[i].vertex + k), 0);
        }
      if (block.isZero()) continue;
      if (j == i) {
        diagonal = block;
      } else {
        problem.block_columns.push_back(j);
        problem.blocks.push_back(block);
      }
    }
    problem.diagonal.push_back(diagonal);
    problem.friction.push_back(mu);
    problem.free_velocity.push_back(
        Vec3(-0.01 * (1.5 + 0.5 * symmetric(random)), 0.01 * symmetric(random), 0.01 * symmetric(random)));
    problem.block_offsets.push_back(static_cast<int>(problem.blocks.size()));
  }
  std::printf("%d bristles, %d contacts, %zu coupling blocks\n", side * side, m, problem.blocks.size());
  for (const double tolerance : {1e-4, 1e-6}) {
    std::vector<Vec3> impulses;
    CoulombSettings settings;
    settings.tolerance = tolerance;
    settings.max_sweeps = 100000;
    settings.normal_relaxation = normal_relaxation;
    settings.tangential_relaxation = tangential_relaxation;
    const CoulombResult result = solve_coulomb(problem, settings, impulses);
    int pressed = 0;
    for (const Vec3& p : impulses) pressed += p[0] > 0.0;
    std::printf("tolerance %.0e m/s: %d sweeps, converged %d, residual %.3g m/s, %d contacts pressed\n", tolerance,
                result.sweeps, result.converged ? 1 : 0, result.residual, pressed);
    // A warm start: the next iteration's problem, every velocity changed by 5% of its size.
    CoulombProblem next = problem;
    for (Vec3& b : next.free_velocity) b *= 1.0 + 0.05 * symmetric(random);
    const CoulombResult warm = solve_coulomb(next, settings, impulses);
    std::printf("  warm-started after a 5%% change: %d sweeps, converged %d\n", warm.sweeps, warm.converged ? 1 : 0);
  }
}

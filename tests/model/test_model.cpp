// Model: the DOF layout (free numbering, per-rod ranges, owners), masses, the initial state
// and point loads.

#include <doctest/doctest.h>

#include "bristle/model/model.hpp"
#include "support/rod_builders.hpp"

using namespace bristle;
using namespace bristle::test;

namespace {

Model three_rod_model(int dimension) {
  std::vector<Rod> rods;
  rods.push_back(straight_rod(3, Vec3(0, 0, 0), Vec3(0.3, 0, 0), dimension, {0, 1}, soft_material(), "a"));
  rods.push_back(straight_rod(2, Vec3(0, 1, 0), Vec3(0.2, 1, 0.5), dimension, {}, steel(), "b"));
  rods.push_back(straight_rod(4, Vec3(0, 2, 0), Vec3(0.4, 2, 0), dimension, {2, 4}, soft_material(), "c"));
  return make_model(dimension, std::move(rods));
}

}  // namespace

TEST_CASE("model layout: DOFs, free numbering, per-rod free ranges and owners") {
  for (int dimension : {2, 3}) {
    CAPTURE(dimension);
    const Model model = three_rod_model(dimension);
    const DofLayout& layout = model.layout;
    CHECK(layout.dimension() == dimension);
    CHECK(layout.vertex_count() == 4 + 3 + 5);
    CHECK(layout.dof_count() == 12 * dimension);
    CHECK(layout.free_dof_count() == (12 - 4) * dimension);

    int expected_free = 0;
    for (int r = 0; r < 3; ++r) {
      const Rod& rod = model.rods[r];
      const auto [begin, end] = layout.rod_free_range(r);
      CHECK(begin == expected_free);
      for (int i = 0; i < rod.vertex_count(); ++i) {
        const int dof = layout.vertex_dof(r, i);
        CHECK(layout.vertex_dof(layout.global_vertex(r, i)) == dof);
        for (int k = 0; k < dimension; ++k) {
          CHECK(layout.dof_owner(dof + k) == std::make_pair(r, i));
          if (rod.is_fixed(i)) {
            CHECK(layout.free_index(dof + k) == -1);
          } else {
            // Free DOFs are numbered in order, contiguous within each rod.
            CHECK(layout.free_index(dof + k) == expected_free++);
          }
        }
      }
      CHECK(end == expected_free);
      CHECK(layout.rod_free_ranges()[r] == layout.rod_free_range(r));
    }
    // Vertices follow one another without gaps.
    for (int v = 0; v + 1 < layout.vertex_count(); ++v)
      CHECK(layout.vertex_dof(v + 1) == layout.vertex_dof(v) + dimension);
  }
}

TEST_CASE("model: DOF masses, initial state, vertex positions, rod lookup") {
  for (int dimension : {2, 3}) {
    CAPTURE(dimension);
    const Model model = three_rod_model(dimension);
    const VecX mass = model.dof_masses();
    REQUIRE(mass.size() == model.layout.dof_count());
    for (int r = 0; r < 3; ++r)
      for (int i = 0; i < model.rods[r].vertex_count(); ++i)
        for (int k = 0; k < dimension; ++k)
          CHECK(mass[model.layout.vertex_dof(r, i) + k] == model.rods[r].vertex_mass(i));

    const State state = initial_state(model);
    CHECK(state.time == 0.0);
    CHECK(state.velocities.size() == model.layout.dof_count());
    CHECK(state.velocities.isZero(0.0));
    for (int r = 0; r < 3; ++r)
      for (int i = 0; i < model.rods[r].vertex_count(); ++i) {
        const Vec3 p = vertex_position(model, state.positions, r, i);
        Vec3 expected = model.rods[r].initial_positions[i];
        if (dimension == 2) expected.z() = 0.0;
        CHECK(p == expected);
      }
    CHECK(model.rod_index("a") == 0);
    CHECK(model.rod_index("c") == 2);
    CHECK(model.rod_index("nope") == -1);
  }
}

TEST_CASE("model: a point load ramps in linearly, then stays") {
  PointLoad load;
  load.force = Vec3(1.0, -2.0, 4.0);
  load.ramp = 0.5;
  CHECK(load.force_at(-1.0) == Vec3::Zero());
  CHECK(load.force_at(0.0) == Vec3::Zero());
  CHECK(load.force_at(0.125).isApprox(0.25 * load.force));
  CHECK(load.force_at(0.5) == load.force);
  CHECK(load.force_at(3.0) == load.force);
  load.ramp = 0.0;
  CHECK(load.force_at(0.0) == load.force);
}

#include <doctest/doctest.h>

#include "bristle/io/compare.hpp"
#include "bristle/io/frame_writer.hpp"
#include "bristle/io/output_error.hpp"
#include "io/temp_folder.hpp"

using namespace bristle;

namespace {

Manifest two_rods() {
  Manifest manifest;
  manifest.name = "compare";
  manifest.dimension = 3;
  manifest.dt = 0.01;
  manifest.frame_dt = 0.01;
  manifest.rods = {{"a", 3, 1e-4}, {"b", 4, 1e-4}};
  return manifest;
}

std::vector<Frame> frames(const Manifest& manifest, int count) {
  std::vector<Frame> result;
  for (int k = 0; k < count; ++k) {
    Frame frame;
    frame.index = k;
    frame.time = 0.01 * k;
    for (const RodInfo& info : manifest.rods) {
      RodFrame rod;
      rod.name = info.name;
      for (int i = 0; i < info.vertex_count; ++i) {
        rod.positions.push_back(Vec3(0.01 * i, -1e-4 * k * i, 0.002 * (info.name == "b")));
        rod.velocities.push_back(Vec3(0.0, -0.01 * i, 0.0));
      }
      frame.rods.push_back(rod);
    }
    result.push_back(frame);
  }
  return result;
}

void write(const std::string& dir, const Manifest& manifest, const std::vector<Frame>& list) {
  FrameWriter writer(dir, manifest, {0.0});
  for (const Frame& frame : list) writer.write(frame);
  writer.finish("complete");
}

}  // namespace

TEST_CASE("io compare: identical folders are the same") {
  test::TempFolder folder("compare-same");
  write(folder / "A", two_rods(), frames(two_rods(), 4));
  write(folder / "B", two_rods(), frames(two_rods(), 4));
  const CompareResult result = compare_outputs(folder / "A", folder / "B");
  CHECK(result.same);
  CHECK(result.frames_compared == 4);
  CHECK(result.values_compared == 4 * (1 + 7 * 3));
  CHECK_FALSE(result.first);
  REQUIRE(result.largest);
  CHECK(result.largest->difference == 0.0);
  CHECK(describe(result, {}).rfind("same", 0) == 0);
}

TEST_CASE("io compare: one coordinate beyond tolerance names its frame, rod and vertex") {
  test::TempFolder folder("compare-one");
  const Manifest manifest = two_rods();
  std::vector<Frame> b = frames(manifest, 4);
  write(folder / "A", manifest, frames(manifest, 4));
  b[2].rods[1].positions[3].y() += 1e-6;  // frame 2, rod "b", vertex 3, y
  b[3].rods[0].positions[1].x() += 1e-12; // within tolerance
  write(folder / "B", manifest, b);
  const CompareResult result = compare_outputs(folder / "A", folder / "B");
  CHECK_FALSE(result.same);
  REQUIRE(result.first);
  CHECK(result.first->frame == 2);
  CHECK(result.first->rod_name == "b");
  CHECK(result.first->rod == 1);
  CHECK(result.first->vertex == 3);
  CHECK(result.first->component == 1);
  CHECK(result.first->quantity == "position");
  CHECK(result.first->difference == doctest::Approx(1e-6));
  CHECK(result.values_beyond_tolerance == 1);
  REQUIRE(result.largest);
  CHECK(result.largest->frame == 2);
  const std::string text = describe(result, {});
  CHECK(text.find("frame 2, rod \"b\" (index 1), vertex 3, position.y") != std::string::npos);

  SUBCASE("a loose tolerance accepts it") {
    CompareOptions loose;
    loose.atol = 1e-5;
    CHECK(compare_outputs(folder / "A", folder / "B", loose).same);
  }
  SUBCASE("relative tolerance scales with the values") {
    CompareOptions relative;
    relative.atol = 0.0;
    relative.rtol = 1e-2;  // |y| there is 6e-4: 1e-6 is within 1%
    CHECK(compare_outputs(folder / "A", folder / "B", relative).same);
  }
}

TEST_CASE("io compare: velocities only with the option") {
  test::TempFolder folder("compare-velocity");
  const Manifest manifest = two_rods();
  std::vector<Frame> b = frames(manifest, 3);
  b[1].rods[0].velocities[2].z() = 0.5;
  write(folder / "A", manifest, frames(manifest, 3));
  write(folder / "B", manifest, b);
  CHECK(compare_outputs(folder / "A", folder / "B").same);
  CompareOptions with_velocities;
  with_velocities.velocities = true;
  const CompareResult result = compare_outputs(folder / "A", folder / "B", with_velocities);
  CHECK_FALSE(result.same);
  REQUIRE(result.first);
  CHECK(result.first->quantity == "velocity");
  CHECK(result.first->frame == 1);
  CHECK(result.first->vertex == 2);
}

TEST_CASE("io compare: different structure is different") {
  test::TempFolder folder("compare-structure");
  const Manifest manifest = two_rods();
  write(folder / "A", manifest, frames(manifest, 4));
  SUBCASE("a missing frame") {
    write(folder / "B", manifest, frames(manifest, 3));
    const CompareResult result = compare_outputs(folder / "A", folder / "B");
    CHECK_FALSE(result.same);
    REQUIRE(result.structure.size() == 1);
    CHECK(result.structure[0] == "frame counts differ: 4 in A, 3 in B");
    CHECK(result.frames_compared == 3);
    CHECK_FALSE(result.first);  // the common frames agree
  }
  SUBCASE("a renamed rod") {
    Manifest renamed = manifest;
    renamed.rods[1].name = "c";
    std::vector<Frame> list = frames(manifest, 4);
    for (Frame& frame : list) frame.rods[1].name = "c";
    write(folder / "B", renamed, list);
    const CompareResult result = compare_outputs(folder / "A", folder / "B");
    CHECK_FALSE(result.same);
    REQUIRE(result.structure.size() == 1);
    CHECK(result.structure[0].find("\"b\" in A and \"c\" in B") != std::string::npos);
  }
  SUBCASE("unreadable") {
    CHECK_THROWS_AS(compare_outputs(folder / "A", folder / "nothing"), OutputError);
  }
}

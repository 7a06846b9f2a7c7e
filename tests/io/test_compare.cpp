#include <doctest/doctest.h>

#include <cmath>

#include "bristle/io/compare.hpp"
#include "bristle/io/frame_writer.hpp"
#include "bristle/io/output_error.hpp"
#include "bristle/io/output_reader.hpp"
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

// ---------------------------------------------------------------------------------------------
// How atol and rtol combine, exactly (docs/output-format.md): |a - b| <= atol + rtol max(|a|, |b|).

namespace {

/// A folder of one rod and one frame: vertex 0 at x = `x`, the other vertices and
/// coordinates fixed values.
void write_single(const std::string& dir, double x, const std::string& status = "complete", int dimension = 3,
                  int vertices = 1, double time = 0.0) {
  Manifest manifest;
  manifest.name = "pair";
  manifest.dimension = dimension;
  manifest.dt = 0.01;
  manifest.frame_dt = 0.01;
  manifest.rods = {{"r", vertices, 1e-4}};
  Frame frame;
  frame.time = time;
  RodFrame rod;
  rod.name = "r";
  for (int i = 0; i < vertices; ++i) {
    rod.positions.push_back(Vec3(i == 0 ? x : 0.5 * i, 0.25, dimension == 3 ? -0.125 : 0.0));
    rod.velocities.push_back(Vec3::Zero());
  }
  frame.rods.push_back(rod);
  FrameWriter writer(dir, manifest, {0.0});
  writer.write(frame);
  writer.finish(status);
}

bool same(double a, double b, double atol, double rtol) {
  test::TempFolder folder("compare-tolerance");
  write_single(folder / "A", a);
  write_single(folder / "B", b);
  CompareOptions options;
  options.atol = atol;
  options.rtol = rtol;
  const CompareResult result = compare_outputs(folder / "A", folder / "B", options);
  // Only one value can differ; when it does, it is the one reported.
  if (!result.same) {
    REQUIRE(result.first);
    CHECK(result.first->quantity == "position");
    CHECK(result.first->component == 0);
    CHECK(result.first->a == a);
    CHECK(result.first->b == b);
  }
  return result.same;
}

}  // namespace

TEST_CASE("io compare: the documented default tolerances") {
  const CompareOptions defaults;
  CHECK(defaults.atol == 1e-9);
  CHECK(defaults.rtol == 1e-7);
  CHECK_FALSE(defaults.velocities);
}

TEST_CASE("io compare: atol and rtol add, and rtol scales with the larger magnitude") {
  SUBCASE("the absolute bound is inclusive") {
    // 0.5 and 0.75 differ by exactly 0.25 (all three exact in binary).
    CHECK(same(0.5, 0.75, 0.25, 0.0));
    CHECK_FALSE(same(0.5, 0.75, std::nextafter(0.25, 0.0), 0.0));
  }
  SUBCASE("each tolerance alone is not enough, their sum is") {
    const double a = 1.0, b = 1.0 + 0x1.0p-20, d = 0x1.0p-20;
    CHECK_FALSE(same(a, b, 0.6 * d, 0.0));
    CHECK_FALSE(same(a, b, 0.0, 0.6 * d / b));
    CHECK(same(a, b, 0.6 * d, 0.6 * d / b));
    CHECK_FALSE(same(a, b, 0.4 * d, 0.4 * d / b));
  }
  SUBCASE("rtol multiplies max(|a|, |b|), whichever folder holds it") {
    // |a - b| = 2; rtol 0.7 allows 0.7 * 3 = 2.1 with the larger magnitude, but only 0.7 with
    // the smaller and 1.4 with the mean.
    CHECK(same(1.0, 3.0, 0.0, 0.7));
    CHECK(same(3.0, 1.0, 0.0, 0.7));
    CHECK(same(-1.0, -3.0, 0.0, 0.7));
    CHECK_FALSE(same(1.0, 3.0, 0.0, 0.6));
  }
  SUBCASE("zero tolerances ask for equality") {
    CHECK(same(0.1, 0.1, 0.0, 0.0));
    CHECK_FALSE(same(0.1, std::nextafter(0.1, 1.0), 0.0, 0.0));
  }
}

TEST_CASE("io compare: frame times are compared, statuses are not") {
  test::TempFolder folder("compare-time-status");
  write_single(folder / "A", 0.5, "complete", 3, 1, 0.25);
  write_single(folder / "B", 0.5, "failed: step 3 (t = 0.02 s): non-finite velocity at rod 'r' vertex 0", 3, 1, 0.25);
  CompareResult result = compare_outputs(folder / "A", folder / "B");
  CHECK(result.same);
  CHECK(result.status_b.rfind("failed: ", 0) == 0);
  CHECK(describe(result, {}).find("note: status is \"complete\" in A and \"failed: ") != std::string::npos);

  write_single(folder / "C", 0.5, "complete", 3, 1, 0.25 + 1e-6);
  result = compare_outputs(folder / "A", folder / "C");
  CHECK_FALSE(result.same);
  REQUIRE(result.first);
  CHECK(result.first->quantity == "time");
  CHECK(result.first->frame == 0);
  CHECK(describe(result, {}).find("frame 0, time: ") != std::string::npos);
}

TEST_CASE("io compare: a different dimension or vertex count is different, without comparing values") {
  test::TempFolder folder("compare-shape");
  write_single(folder / "A", 0.5, "complete", 3, 2);
  SUBCASE("dimension") {
    write_single(folder / "B", 0.5, "complete", 2, 2);
    const CompareResult result = compare_outputs(folder / "A", folder / "B");
    CHECK_FALSE(result.same);
    REQUIRE(result.structure.size() == 1);
    CHECK(result.structure[0] == "dimensions differ: 3 in A, 2 in B");
    CHECK(result.frames_compared == 0);
  }
  SUBCASE("vertex count") {
    write_single(folder / "B", 0.5, "complete", 3, 3);
    const CompareResult result = compare_outputs(folder / "A", folder / "B");
    CHECK_FALSE(result.same);
    REQUIRE(result.structure.size() == 1);
    CHECK(result.structure[0] == "rod \"r\" has 2 vertices in A and 3 in B");
    CHECK(result.frames_compared == 0);
  }
}

TEST_CASE("io compare: an interrupted run is compared by every whole frame it has") {
  // A killed run's manifest says "running" and may list fewer frames than are on disk: the
  // frames past the list count, so a run killed after 4 of 4 frames equals the finished one.
  test::TempFolder folder("compare-running");
  const Manifest manifest = two_rods();
  write(folder / "A", manifest, frames(manifest, 4));
  {
    FrameWriter writer(folder / "B", manifest, {1e9});  // the manifest is written once, at the start
    for (const Frame& frame : frames(manifest, 4)) writer.write(frame);
    // No finish(): as if killed.
  }
  REQUIRE(read_manifest(folder / "B").frame_count == 0);
  const CompareResult result = compare_outputs(folder / "A", folder / "B");
  CHECK(result.same);
  CHECK(result.frames_compared == 4);
  CHECK(result.status_b == "running");
}

namespace {

/// two_rods() with rod "b" twisted: its 3 edges carry directors turning with the frame index.
Manifest twisted_rods() {
  Manifest manifest = two_rods();
  manifest.rods[1].twist = true;
  return manifest;
}

std::vector<Frame> twisted_frames(const Manifest& manifest, int count) {
  std::vector<Frame> list = frames(manifest, count);
  for (Frame& frame : list)
    for (int j = 0; j < 3; ++j) {
      const double angle = 0.1 * frame.index + 0.2 * j;
      frame.rods[1].directors.push_back(Vec3(0.0, std::cos(angle), std::sin(angle)));
    }
  return list;
}

}  // namespace

TEST_CASE("io compare: directors of rods with twist, within an angle tolerance") {
  test::TempFolder folder("compare-directors");
  const Manifest manifest = twisted_rods();
  std::vector<Frame> b = twisted_frames(manifest, 3);
  write(folder / "A", manifest, twisted_frames(manifest, 3));
  write(folder / "B", manifest, b);
  CompareResult result = compare_outputs(folder / "A", folder / "B");
  CHECK(result.same);
  CHECK(result.directors_compared == 3 * 3);
  CHECK(result.values_compared == 3 * (1 + 7 * 3 + 3));
  REQUIRE(result.largest_director);
  CHECK(result.largest_director->difference == 0.0);

  // Frame 2, edge 1 turned by 1e-4 rad about the edge (x): beyond the default 1e-6 rad.
  const double angle = 0.1 * 2 + 0.2 * 1 + 1e-4;
  b[2].rods[1].directors[1] = Vec3(0.0, std::cos(angle), std::sin(angle));
  write(folder / "C", manifest, b);
  result = compare_outputs(folder / "A", folder / "C");
  CHECK_FALSE(result.same);
  CHECK(result.values_beyond_tolerance == 1);
  REQUIRE(result.first);
  CHECK(result.first->quantity == "director");
  CHECK(result.first->frame == 2);
  CHECK(result.first->rod_name == "b");
  CHECK(result.first->vertex == 1);
  CHECK(result.first->difference == doctest::Approx(1e-4).epsilon(1e-6));
  REQUIRE(result.largest_director);
  CHECK(result.largest_director->difference == result.first->difference);
  // Positions are untouched: the largest position difference stays zero.
  REQUIRE(result.largest);
  CHECK(result.largest->difference == 0.0);
  CompareOptions options;
  const std::string text = describe(result, options);
  CHECK(text.find("directors within 1e-06 rad") != std::string::npos);
  CHECK(text.find("first difference beyond tolerance: frame 2, rod \"b\" (index 1), edge 1, director: A = (0.0, ") !=
        std::string::npos);
  CHECK(text.find("largest director difference: frame 2") != std::string::npos);
  // A looser angle tolerance accepts it.
  options.angle_tol = 2e-4;
  CHECK(compare_outputs(folder / "A", folder / "C", options).same);
}

TEST_CASE("io compare: a rod with twist in one folder and not the other is a structural difference") {
  test::TempFolder folder("compare-twist-structure");
  write(folder / "A", twisted_rods(), twisted_frames(twisted_rods(), 2));
  write(folder / "B", two_rods(), frames(two_rods(), 2));
  const CompareResult result = compare_outputs(folder / "A", folder / "B");
  CHECK_FALSE(result.same);
  REQUIRE(result.structure.size() == 1);
  CHECK(result.structure[0] == "rod \"b\" has twist (material directors) in A and not in B");
  CHECK(result.frames_compared == 0);
}

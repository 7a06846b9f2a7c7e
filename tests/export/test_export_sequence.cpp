#include <doctest/doctest.h>

#include <filesystem>

#include "bristle/export/export_error.hpp"
#include "bristle/export/export_sequence.hpp"
#include "export/export_test_support.hpp"

using namespace bristle;

TEST_CASE("export sequence: every format writes its files") {
  const test::SampleOutput s = test::sample_output();
  const auto load = [&](int k) { return s.frames[static_cast<std::size_t>(k)]; };
  CHECK(export_stem(s.manifest) == "two_rods");
  Manifest unnamed;
  CHECK(export_stem(unnamed) == "bristle");

  const std::string dir = test::export_scratch_dir("sequence");
  int seen = 0;
  auto files = export_frames(s.manifest, 3, load, ExportFormat::Obj, dir, {}, [&](int) { ++seen; });
  CHECK(seen == 3);
  CHECK(files == std::vector<std::string>{dir + "/two_rods_000000.obj", dir + "/two_rods_000001.obj",
                                          dir + "/two_rods_000002.obj"});
  // VTK: one binary .vtp per frame (no legacy .vtk any more), and the series.
  files = export_frames(s.manifest, 3, load, ExportFormat::Vtk, dir);
  CHECK(files == std::vector<std::string>{dir + "/two_rods_000000.vtp", dir + "/two_rods_000001.vtp",
                                          dir + "/two_rods_000002.vtp", dir + "/two_rods.pvd"});
  CHECK(test::read_text(files.back()).find("part=\"0\" file=\"two_rods_000002.vtp\"") != std::string::npos);
  CHECK(test::read_text(files.back()).find("part=\"1\"") == std::string::npos);
  files = export_frames(s.manifest, 3, load, ExportFormat::Usd, dir);
  CHECK(files == std::vector<std::string>{dir + "/two_rods.usda"});
  for (const auto& f : std::filesystem::directory_iterator(dir)) {
    CHECK(std::filesystem::file_size(f.path()) > 0);
  }

  CHECK(parse_export_format("obj") == ExportFormat::Obj);
  CHECK(parse_export_format("usda") == ExportFormat::Usd);
  CHECK_THROWS_AS(parse_export_format("fbx"), ExportError);
}

TEST_CASE("export sequence: colliders are written once when still, per frame when a handle moves them") {
  const test::SampleOutput s = test::sample_output();
  const auto load = [&](int k) { return s.frames[static_cast<std::size_t>(k)]; };
  ExportColliders colliders;
  Collider sphere;
  sphere.type = ColliderType::Sphere;
  sphere.radius = 0.1;
  colliders.rest = {Collider{}, sphere};
  colliders.handle_of = {-1, -1};

  std::string dir = test::export_scratch_dir("sequence_still");
  std::vector<std::string> files = export_frames(s.manifest, 3, load, ExportFormat::Vtk, dir, colliders);
  CHECK(files == std::vector<std::string>{dir + "/two_rods_colliders.vtp", dir + "/two_rods_000000.vtp",
                                          dir + "/two_rods_000001.vtp", dir + "/two_rods_000002.vtp",
                                          dir + "/two_rods.pvd"});
  std::string pvd = test::read_text(files.back());
  CHECK(pvd.find("<DataSet timestep=\"0.02\" group=\"\" part=\"1\" file=\"two_rods_colliders.vtp\"/>") !=
        std::string::npos);

  Handle lift;
  lift.name = "lift";
  lift.keys = {HandleKey{0.0}, HandleKey{1.0, Vec3(0.0, 1.0, 0.0)}};
  colliders.handles = {lift};
  colliders.handle_of = {-1, 0};
  dir = test::export_scratch_dir("sequence_moving");
  files = export_frames(s.manifest, 3, load, ExportFormat::Vtk, dir, colliders);
  CHECK(files == std::vector<std::string>{dir + "/two_rods_000000.vtp", dir + "/two_rods_colliders_000000.vtp",
                                          dir + "/two_rods_000001.vtp", dir + "/two_rods_colliders_000001.vtp",
                                          dir + "/two_rods_000002.vtp", dir + "/two_rods_colliders_000002.vtp",
                                          dir + "/two_rods.pvd"});
  pvd = test::read_text(files.back());
  CHECK(pvd.find("<DataSet timestep=\"0.02\" group=\"\" part=\"1\" file=\"two_rods_colliders_000002.vtp\"/>") !=
        std::string::npos);
  // The moving sphere's file differs from frame to frame; the still plane's part does not.
  CHECK(test::read_text(files[1]) != test::read_text(files[3]));
}

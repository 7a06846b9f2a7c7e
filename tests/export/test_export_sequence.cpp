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
  auto files = export_frames(s.manifest, 3, load, ExportFormat::Obj, dir, [&](int) { ++seen; });
  CHECK(seen == 3);
  CHECK(files == std::vector<std::string>{dir + "/two_rods_000000.obj", dir + "/two_rods_000001.obj",
                                          dir + "/two_rods_000002.obj"});
  files = export_frames(s.manifest, 3, load, ExportFormat::Vtk, dir);
  REQUIRE(files.size() == 7);
  CHECK(files.back() == dir + "/two_rods.pvd");
  CHECK(test::read_text(files.back()).find("file=\"two_rods_000002.vtp\"") != std::string::npos);
  files = export_frames(s.manifest, 3, load, ExportFormat::Usd, dir);
  CHECK(files == std::vector<std::string>{dir + "/two_rods.usda"});
  for (const auto& f : std::filesystem::directory_iterator(dir)) {
    CHECK(std::filesystem::file_size(f.path()) > 0);
  }

  CHECK(parse_export_format("obj") == ExportFormat::Obj);
  CHECK(parse_export_format("usda") == ExportFormat::Usd);
  CHECK_THROWS_AS(parse_export_format("fbx"), ExportError);
}

/// bristle export OUT --format obj|vtk|usd -o PATH [--force] [--quiet]
#include <cstdio>
#include <filesystem>
#include <limits>
#include <ostream>

#include "bristle/cli/args.hpp"
#include "bristle/cli/command.hpp"
#include "bristle/export/export_colliders.hpp"
#include "bristle/export/export_error.hpp"
#include "bristle/export/export_sequence.hpp"
#include "bristle/export/usd.hpp"
#include "bristle/io/output_reader.hpp"

namespace bristle::cli {

namespace {

const char* const kUsage =
    "usage: bristle export OUT --format obj|vtk|usd -o PATH [--force] [--quiet]\n"
    "\n"
    "Writes the frames of the output folder OUT in a format other tools read (docs/export.md):\n"
    "  obj  PATH/<name>_NNNNNN.obj, one per frame: each rod an object of two-vertex lines\n"
    "       (`l i i+1`, which Blender's importer keeps whole), each collider an object of\n"
    "       triangles at the frame's pose (Blender, MeshLab, ...)\n"
    "  vtk  PATH/<name>_NNNNNN.vtp per frame: binary XML PolyData (appended raw), the rods as\n"
    "       polylines with per-vertex radius and velocity and a per-rod rod_id; the colliders\n"
    "       as triangles in PATH/<name>_colliders.vtp (PATH/<name>_colliders_NNNNNN.vtp per\n"
    "       frame when a handle moves one); PATH/<name>.pvd, the time series (ParaView: open it)\n"
    "  usd  one USD ASCII layer: a BasisCurves prim with time-sampled points and widths (and\n"
    "       per-vertex normals, the material director m1, when a rod has twist), time\n"
    "       code k = frame k, and a prim per collider (Sphere, Capsule, Cube, Mesh) whose\n"
    "       transform follows its handle (Houdini, usdview); PATH is the file when it ends in\n"
    "       .usda or .usd, else a folder that gets PATH/<name>.usda\n"
    "<name> is the scene's name with characters other than letters, digits, '.', '_' and '-'\n"
    "replaced by '_', cut to 100 characters. Every frame is read and checked before the first\n"
    "file is written, so a damaged OUT is refused with nothing written; every file is written\n"
    "whole (temporary file, then rename).\n"
    "\n"
    "options:\n"
    "  --format F        obj, vtk or usd (usda is accepted for usd)\n"
    "  -o, --output PATH the folder (created if missing; must be empty unless --force), or\n"
    "                    for usd a .usda/.usd file (must not exist unless --force)\n"
    "  --force           write into a non-empty folder / over an existing file\n"
    "  --quiet           no summary line\n"
    "  -h, --help        show this help\n"
    "\n"
    "exit codes: 0 exported, 1 a file could not be written, 2 bad usage, an unreadable OUT or\n"
    "an occupied PATH without --force\n";

namespace fs = std::filesystem;

bool names_a_usd_file(const std::string& path) {
  const std::string ext = fs::path(path).extension().string();
  return ext == ".usda" || ext == ".usd";
}

int export_output(const std::vector<std::string>& args, CommandContext& context) {
  const ParsedArgs parsed = parse_args(
      args, {{"--format", "", true}, {"--output", "-o", true}, {"--force", "", false}, {"--quiet", "", false}});
  expect_positionals(parsed, {"OUT"});
  const auto format_name = parsed.value("--format");
  if (!format_name) throw UsageError("missing --format obj|vtk|usd");
  ExportFormat format = ExportFormat::Obj;
  try {
    format = parse_export_format(*format_name);
  } catch (const ExportError& error) {
    throw UsageError(std::string("--format: ") + error.what());
  }
  const auto path = parsed.value("--output");
  if (!path) throw UsageError("missing -o PATH (where the exported files go)");
  if (path->empty()) throw UsageError("-o needs a path");
  const bool force = parsed.has("--force");

  const OutputFolder folder(parsed.positionals[0]);
  const Manifest& manifest = folder.manifest();
  const int frames = folder.frame_count();
  if (frames == 0) {
    context.err << "error: " << folder.dir() << ": the output folder holds no frames; nothing to export\n";
    return kExitUsage;
  }
  if (manifest.status != "complete")
    context.err << "note: " << folder.dir() << " is not a complete run (status \"" << manifest.status
                << "\"); exporting the " << frames << " frames it holds\n";

  // Every frame is read (and refused if damaged, exit 2) before anything is written: an export
  // that stopped at a bad frame 5 would leave frames 0-4 behind. The same pass finds the box
  // the rods occupy, which sizes the square an infinite plane collider is exported as.
  Vec3 lo = Vec3::Constant(std::numeric_limits<double>::infinity()), hi = -lo;
  for (int k = 0; k < frames; ++k) extend_rod_box(folder.frame(k), lo, hi);
  ExportColliders colliders = export_colliders(manifest.scene, folder.dir() + "/manifest.json");
  fit_planes(colliders, lo, hi);

  const bool single_file = format == ExportFormat::Usd && names_a_usd_file(*path);
  std::error_code error;
  if (single_file) {
    if (fs::is_directory(*path, error)) {
      context.err << "error: " << *path << ": is a folder; give a file name or a folder without the extension\n";
      return kExitUsage;
    }
    if (fs::exists(*path, error) && !force) {
      context.err << "error: " << *path << ": exists; pass --force to replace it\n";
      return kExitUsage;
    }
  } else {
    if (fs::exists(*path, error) && !fs::is_directory(*path, error)) {
      context.err << "error: " << *path << ": exists and is not a folder\n";
      return kExitUsage;
    }
    if (fs::exists(*path, error) && !fs::is_empty(*path, error) && !force) {
      context.err << "error: " << *path << ": the folder is not empty; pass --force to write into it "
                  << "(files of the same names are replaced, others kept)\n";
      return kExitUsage;
    }
  }

  try {
    const fs::path dir = single_file ? fs::path(*path).parent_path() : fs::path(*path);
    if (!dir.empty()) fs::create_directories(dir, error);
    if (error) {
      context.err << "error: " << dir.string() << ": cannot create the folder: " << error.message() << "\n";
      return kExitFailure;
    }
    std::vector<std::string> written;
    const auto load = [&folder](int k) { return folder.frame(k); };
    if (single_file) {
      UsdaWriter writer(*path, manifest, frames, colliders);
      for (int k = 0; k < frames; ++k) writer.add_frame(folder.frame(k));
      writer.finish();
      written.push_back(*path);
    } else {
      written = export_frames(manifest, frames, load, format, *path, colliders);
    }
    if (!parsed.has("--quiet")) {
      context.out << "exported: " << frames << " frame" << (frames == 1 ? "" : "s") << " as " << *format_name
                  << ", " << written.size() << " file" << (written.size() == 1 ? "" : "s");
      if (format == ExportFormat::Obj)
        context.out << " (" << written.front() << " ...)";
      else
        context.out << " (open " << written.back() << ")";
      context.out << "\n";
    }
  } catch (const ExportError& failure) {
    context.err << "error: " << failure.what() << "\n";
    return kExitFailure;
  }
  return kExitSuccess;
}

}  // namespace

Command make_export_command() {
  return {"export", "write an output folder as OBJ, VTK (ParaView) or USD files", kUsage, export_output};
}

}  // namespace bristle::cli

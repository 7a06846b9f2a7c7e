#include "bristle/export/export_sequence.hpp"

#include <cstdio>

#include "bristle/export/export_error.hpp"
#include "bristle/export/obj.hpp"
#include "bristle/export/usd.hpp"
#include "bristle/export/vtk.hpp"

namespace bristle {

namespace {

std::string numbered(const std::string& stem, int k, const char* ext) {
  char digits[16];
  std::snprintf(digits, sizeof digits, "%06d", k);
  return stem + "_" + digits + ext;
}

}  // namespace

ExportFormat parse_export_format(const std::string& name) {
  if (name == "obj") return ExportFormat::Obj;
  if (name == "vtk") return ExportFormat::Vtk;
  if (name == "usd" || name == "usda") return ExportFormat::Usd;
  throw ExportError("unknown export format '" + name + "' (expected obj, vtk or usd)");
}

std::string export_stem(const Manifest& manifest) {
  std::string stem = manifest.name;
  for (char& c : stem) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-';
    if (!ok) c = '_';
  }
  if (stem.empty() || stem[0] == '.' || stem[0] == '-') stem = "bristle" + stem;
  // A file name is at most 255 bytes on common file systems, and a scene name has no limit:
  // keep room for "_NNNNNN.vtp" and the temporary-file suffix of the atomic write.
  if (stem.size() > kLongestExportStem) stem.resize(kLongestExportStem);
  return stem;
}

std::vector<std::string> export_frames(const Manifest& manifest, int frame_count,
                                       const std::function<Frame(int)>& load, ExportFormat format,
                                       const std::string& out_dir, const ExportColliders& colliders,
                                       const std::function<void(int)>& progress) {
  const std::string stem = export_stem(manifest);
  const std::string dir = out_dir.empty() ? "." : out_dir;
  std::vector<std::string> written;
  switch (format) {
    case ExportFormat::Obj:
      for (int k = 0; k < frame_count; ++k) {
        written.push_back(dir + "/" + numbered(stem, k, ".obj"));
        write_obj(manifest, load(k), colliders, written.back());
        if (progress) progress(k);
      }
      break;
    case ExportFormat::Vtk: {
      std::vector<PvdEntry> entries;
      // Colliders that never move are written once and listed at every time.
      const std::string still = stem + "_colliders.vtp";
      if (!colliders.empty() && !colliders.any_moves()) {
        written.push_back(dir + "/" + still);
        write_colliders_vtp(colliders, 0.0, written.back());
      }
      for (int k = 0; k < frame_count; ++k) {
        const Frame frame = load(k);
        const std::string vtp = numbered(stem, k, ".vtp");
        written.push_back(dir + "/" + vtp);
        write_vtp(manifest, frame, written.back());
        entries.push_back(PvdEntry{frame.time, 0, vtp});
        if (colliders.any_moves()) {
          const std::string moved = numbered(stem + "_colliders", k, ".vtp");
          written.push_back(dir + "/" + moved);
          write_colliders_vtp(colliders, frame.time, written.back());
          entries.push_back(PvdEntry{frame.time, 1, moved});
        } else if (!colliders.empty()) {
          entries.push_back(PvdEntry{frame.time, 1, still});
        }
        if (progress) progress(k);
      }
      written.push_back(dir + "/" + stem + ".pvd");
      write_pvd(entries, written.back());
      break;
    }
    case ExportFormat::Usd: {
      written.push_back(dir + "/" + stem + ".usda");
      UsdaWriter writer(written.back(), manifest, frame_count, colliders);
      for (int k = 0; k < frame_count; ++k) {
        writer.add_frame(load(k));
        if (progress) progress(k);
      }
      writer.finish();
      break;
    }
  }
  return written;
}

}  // namespace bristle

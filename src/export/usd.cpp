#include "bristle/export/usd.hpp"

#include <algorithm>
#include <filesystem>
#include <limits>
#include <ostream>
#include <sstream>

#include "bristle/export/export_error.hpp"
#include "bristle/render/color.hpp"
#include "bristle/render/render_error.hpp"
#include "bristle/render/scene_render.hpp"
#include "check_frame.hpp"
#include "number_text.hpp"
#include "write_whole.hpp"

namespace bristle {

namespace {

using export_detail::put;
using export_detail::put_float;

std::string usd_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default: out += c;
    }
  }
  return out + "\"";
}

void put_float3(std::ostream& out, const Vec3& v) {
  out << '(';
  put_float(out, static_cast<float>(v.x()));
  out << ", ";
  put_float(out, static_cast<float>(v.y()));
  out << ", ";
  put_float(out, static_cast<float>(v.z()));
  out << ')';
}

constexpr const char* kIndent2 = "        ";
constexpr const char* kIndent3 = "            ";

}  // namespace

std::string usd_identifier(const std::string& text) {
  std::string out;
  for (char c : text) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    out += ok ? c : '_';
  }
  if (out.empty() || (out[0] >= '0' && out[0] <= '9')) out = "_" + out;
  return out;
}

UsdaWriter::UsdaWriter(const std::string& path, const Manifest& manifest, int frame_count)
    : path_(path),
      temporary_(export_detail::temporary_path(path)),
      manifest_(manifest),
      out_(temporary_, std::ios::binary | std::ios::trunc) {
  if (!out_) throw ExportError("cannot open '" + path + "' for writing");
  manifest_.scene = nlohmann::json();  // not needed here; do not keep a copy of a large scene
  const double fps = manifest.frame_dt > 0.0 ? 1.0 / manifest.frame_dt : 24.0;
  out_ << "#usda 1.0\n(\n    defaultPrim = \"Bristle\"\n    doc = "
       << usd_string("Bristle output '" + manifest.name + "': " +
                     std::to_string(manifest.rods.size()) + " rods, " +
                     std::to_string(frame_count) + " frames; time code k is frame k")
       << "\n    endTimeCode = " << std::max(0, frame_count - 1) << "\n    framesPerSecond = ";
  put(out_, fps);
  out_ << "\n    metersPerUnit = 1\n    startTimeCode = 0\n    timeCodesPerSecond = ";
  put(out_, fps);
  out_ << "\n    upAxis = \"Y\"\n)\n\n";
  out_ << "def Xform \"Bristle\" (\n    kind = \"component\"\n)\n{\n";
  out_ << "    def BasisCurves \"Rods\"\n    {\n";
  out_ << kIndent2 << "uniform token type = \"linear\"\n";
  out_ << kIndent2 << "uniform token wrap = \"nonperiodic\"\n";
  out_ << kIndent2 << "int[] curveVertexCounts = [";
  for (std::size_t r = 0; r < manifest.rods.size(); ++r) {
    out_ << (r ? ", " : "") << manifest.rods[r].vertex_count;
  }
  out_ << "]\n";
  out_ << kIndent2 << "custom uniform string[] bristle:rodNames = [";
  for (std::size_t r = 0; r < manifest.rods.size(); ++r) {
    out_ << (r ? ", " : "") << usd_string(manifest.rods[r].name);
  }
  out_ << "]\n";
  // One display colour per curve: the renderer's colours (the scene's render.colors, else
  // the default palette), so the viewport and `bristle render` agree.
  std::vector<Color> palette;
  try {
    palette = parse_render_block(manifest.scene).colors;
  } catch (const RenderError&) {
    // A render block the renderer would refuse: the default palette will do here.
  }
  out_ << kIndent2 << "color3f[] primvars:displayColor = [";
  const int rods = static_cast<int>(manifest.rods.size());
  for (int r = 0; r < rods; ++r) {
    const Color c = rod_color(r, rods, palette);
    out_ << (r ? ", " : "") << '(';
    put_float(out_, static_cast<float>(c.r));
    out_ << ", ";
    put_float(out_, static_cast<float>(c.g));
    out_ << ", ";
    put_float(out_, static_cast<float>(c.b));
    out_ << ')';
  }
  out_ << "] (\n" << kIndent3 << "interpolation = \"uniform\"\n" << kIndent2 << ")\n";
  out_ << kIndent2 << "point3f[] points.timeSamples = {\n";
}

UsdaWriter::~UsdaWriter() {
  // Not finished (an error on the way): the layer would be incomplete, so it is not kept.
  if (!finished_) {
    out_.close();
    std::error_code ignored;
    std::filesystem::remove(temporary_, ignored);
  }
}

void UsdaWriter::add_frame(const Frame& frame) {
  if (finished_) throw ExportError("'" + path_ + "': frame added after finish()");
  export_detail::check_frame(manifest_, frame);
  for (std::size_t r = 0; r < frame.rods.size(); ++r) {
    if (static_cast<int>(frame.rods[r].positions.size()) != manifest_.rods[r].vertex_count) {
      throw ExportError("frame " + std::to_string(frame.index) + ", rod '" + frame.rods[r].name +
                        "': " + std::to_string(frame.rods[r].positions.size()) +
                        " vertices, the manifest says " +
                        std::to_string(manifest_.rods[r].vertex_count));
    }
  }
  Vec3 lo = Vec3::Constant(std::numeric_limits<double>::infinity());
  Vec3 hi = -lo;
  out_ << kIndent3 << frame.index << ": [";
  bool first = true;
  for (std::size_t r = 0; r < frame.rods.size(); ++r) {
    const double radius = manifest_.rods[r].radius;
    for (const Vec3& p : frame.rods[r].positions) {
      if (!first) out_ << ", ";
      first = false;
      put_float3(out_, p);
      lo = lo.cwiseMin(p - Vec3::Constant(radius));
      hi = hi.cwiseMax(p + Vec3::Constant(radius));
    }
  }
  out_ << "],\n";
  if (first) lo = hi = Vec3::Zero();
  codes_.push_back(frame.index);
  extents_.emplace_back(lo, hi);
}

void UsdaWriter::finish() {
  if (finished_) return;
  finished_ = true;
  out_ << kIndent2 << "}\n";
  // Widths are diameters, one per vertex; constant in time but sampled with the points so
  // every sample of the curves is complete on its own.
  out_ << kIndent2 << "float[] widths (\n" << kIndent3 << "interpolation = \"vertex\"\n"
       << kIndent2 << ")\n";
  out_ << kIndent2 << "float[] widths.timeSamples = {\n";
  std::string widths;
  {
    std::ostringstream w;
    bool first = true;
    for (const RodInfo& rod : manifest_.rods) {
      for (int i = 0; i < rod.vertex_count; ++i) {
        if (!first) w << ", ";
        first = false;
        put_float(w, static_cast<float>(2.0 * rod.radius));
      }
    }
    widths = w.str();
  }
  for (int code : codes_) out_ << kIndent3 << code << ": [" << widths << "],\n";
  out_ << kIndent2 << "}\n";
  out_ << kIndent2 << "float3[] extent.timeSamples = {\n";
  for (std::size_t k = 0; k < codes_.size(); ++k) {
    out_ << kIndent3 << codes_[k] << ": [";
    put_float3(out_, extents_[k].first);
    out_ << ", ";
    put_float3(out_, extents_[k].second);
    out_ << "],\n";
  }
  out_ << kIndent2 << "}\n    }\n}\n";
  out_.close();
  if (!out_) {
    std::error_code ignored;
    std::filesystem::remove(temporary_, ignored);
    throw ExportError("cannot write '" + path_ + "' (disk full?)");
  }
  export_detail::commit_temporary(temporary_, path_);
}

void write_usda(const Manifest& manifest, const std::vector<Frame>& frames,
                const std::string& path) {
  UsdaWriter writer(path, manifest, static_cast<int>(frames.size()));
  for (const Frame& f : frames) writer.add_frame(f);
  writer.finish();
}

}  // namespace bristle

#include "bristle/export/usd.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <ostream>
#include <sstream>

#include "bristle/export/collider_mesh.hpp"
#include "bristle/energy/rod_frame.hpp"
#include "bristle/export/export_error.hpp"
#include "bristle/io/frame_directors.hpp"
#include "bristle/render/color.hpp"
#include "bristle/render/render_options.hpp"
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

// Per-vertex normals of a rod without twist in a scene with twist: a reference director at
// the root (the coordinate axis least along the first edge, made perpendicular), parallel
// transported edge to edge (the space-parallel frame: no twist about the rod), then per vertex.
std::vector<Vec3> twist_free_normals(const std::vector<Vec3>& positions) {
  const std::size_t n = positions.size();
  if (n < 2) return std::vector<Vec3>(n, Vec3::UnitY());
  std::vector<Vec3> edge(n - 1);
  Vec3 previous = (positions[1] - positions[0]).normalized();
  Vec3 axis = Vec3::UnitX();
  if (std::abs(previous.y()) < std::abs(previous.x()) && std::abs(previous.y()) <= std::abs(previous.z())) axis = Vec3::UnitY();
  if (std::abs(previous.z()) < std::abs(previous.x()) && std::abs(previous.z()) < std::abs(previous.y())) axis = Vec3::UnitZ();
  edge[0] = (axis - axis.dot(previous) * previous).normalized();
  for (std::size_t j = 1; j + 1 < n; ++j) {
    const Vec3 t = (positions[j + 1] - positions[j]).normalized();
    Vec3 d = t.norm() > 0.0 && previous.norm() > 0.0 ? parallel_transport(previous, t, edge[j - 1]) : edge[j - 1];
    d -= d.dot(t) * t;
    edge[j] = d.norm() > 1e-12 ? Vec3(d.normalized()) : edge[j - 1];
    if (t.norm() > 0.0) previous = t;
  }
  return vertex_directors(positions, edge);
}

constexpr const char* kIndent2 = "        ";
constexpr const char* kIndent3 = "            ";
constexpr const char* kIndent4 = "                ";

// A matrix4d as USD writes it: row vectors, so the map x -> A x + t (column vectors, as
// Bristle writes it) is the matrix with rows (A^T, 0) and (t, 1).
void put_matrix(std::ostream& out, const Mat3& a, const Vec3& t) {
  out << "( ";
  for (int i = 0; i < 4; ++i) {
    out << (i ? ", (" : "(");
    for (int j = 0; j < 3; ++j) {
      put(out, i < 3 ? a(j, i) : t[j]);
      out << ", ";
    }
    out << (i < 3 ? "0)" : "1)");
  }
  out << " )";
}

// What a collider prim is: its USD type and the linear part its own geometry adds to the
// placement (a box's cube of size 2 is scaled by the half extents).
struct ColliderPrim {
  const char* type;
  Mat3 scale = Mat3::Identity();
};

// A box with a zero half extent (a 2D box) would need a singular scale: it is a mesh instead.
ColliderPrim collider_prim(const Collider& c) {
  switch (c.type) {
    case ColliderType::Sphere: return {"Sphere"};
    case ColliderType::Capsule: return {"Capsule"};
    case ColliderType::Box:
      if ((c.half_extents.array() > 0.0).all()) return {"Cube", Mat3(c.half_extents.asDiagonal())};
      return {"Mesh"};
    case ColliderType::Plane: return {"Mesh"};
  }
  return {"Mesh"};
}

void put_extent(std::ostream& out, const Vec3& lo, const Vec3& hi) {
  out << kIndent3 << "float3[] extent = [";
  put_float3(out, lo);
  out << ", ";
  put_float3(out, hi);
  out << "]\n";
}

// The prim's own attributes, in its local frame (export/collider_mesh.hpp).
void put_collider_shape(std::ostream& out, const Collider& c, const ExportColliders& colliders,
                        const ColliderPrim& prim) {
  const std::string type = prim.type;
  if (type == "Sphere") {
    out << kIndent3 << "double radius = ";
    put(out, c.radius);
    out << "\n";
    put_extent(out, Vec3::Constant(-c.radius), Vec3::Constant(c.radius));
  } else if (type == "Capsule") {
    const double h = (c.b - c.a).norm();
    out << kIndent3 << "uniform token axis = \"Z\"\n" << kIndent3 << "double height = ";
    put(out, h);
    out << "\n" << kIndent3 << "double radius = ";
    put(out, c.radius);
    out << "\n";
    put_extent(out, Vec3(-c.radius, -c.radius, -0.5 * h - c.radius), Vec3(c.radius, c.radius, 0.5 * h + c.radius));
  } else if (type == "Cube") {
    out << kIndent3 << "double size = 2\n";
    put_extent(out, Vec3::Constant(-1.0), Vec3::Constant(1.0));
  } else {
    const TriangleMesh mesh = collider_local_mesh(c, colliders);
    // A plane is one square: one quad reads better in a viewport than its two triangles.
    const bool quad = c.type == ColliderType::Plane;
    out << kIndent3 << "uniform bool doubleSided = 1\n";
    out << kIndent3 << "int[] faceVertexCounts = [";
    const std::size_t faces = quad ? 1 : mesh.triangles.size();
    for (std::size_t f = 0; f < faces; ++f) out << (f ? ", " : "") << (quad ? 4 : 3);
    out << "]\n" << kIndent3 << "int[] faceVertexIndices = [";
    if (quad) {
      out << "0, 1, 2, 3";
    } else {
      for (std::size_t f = 0; f < faces; ++f)
        for (int k = 0; k < 3; ++k) out << (f || k ? ", " : "") << mesh.triangles[f][k];
    }
    out << "]\n" << kIndent3 << "point3f[] points = [";
    Vec3 lo = Vec3::Zero(), hi = Vec3::Zero();
    for (std::size_t v = 0; v < mesh.vertices.size(); ++v) {
      out << (v ? ", " : "");
      put_float3(out, mesh.vertices[v]);
      lo = v ? lo.cwiseMin(mesh.vertices[v]) : mesh.vertices[v];
      hi = v ? hi.cwiseMax(mesh.vertices[v]) : mesh.vertices[v];
    }
    out << "]\n" << kIndent3 << "uniform token subdivisionScheme = \"none\"\n";
    put_extent(out, lo, hi);
  }
}

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

UsdaWriter::UsdaWriter(const std::string& path, const Manifest& manifest, int frame_count,
                       ExportColliders colliders)
    : path_(path),
      temporary_(export_detail::temporary_path(path)),
      manifest_(manifest),
      out_(temporary_, std::ios::binary | std::ios::trunc),
      colliders_(std::move(colliders)) {
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
  RenderOptions render_options;
  try {
    const RenderBlock block = parse_render_block(manifest.scene);
    palette = block.colors;
    apply_render_block(block, render_options);
  } catch (const RenderError&) {
    // A render block the renderer would refuse: the default palette will do here.
  }
  collider_color_ = Vec3(render_options.collider_color.r, render_options.collider_color.g,
                         render_options.collider_color.b);
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
  if (manifest_.has_twist()) {
    std::ostringstream normals;
    normals << kIndent3 << frame.index << ": [";
    bool first_normal = true;
    for (const RodFrame& rod : frame.rods) {
      std::vector<Vec3> n = vertex_directors(rod.positions, rod.directors);
      if (n.size() != rod.positions.size()) n = twist_free_normals(rod.positions);
      for (const Vec3& v : n) {
        if (!first_normal) normals << ", ";
        first_normal = false;
        put_float3(normals, v);
      }
    }
    normals << "],\n";
    normals_ += normals.str();
  }
  codes_.push_back(frame.index);
  times_.push_back(frame.time);
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
  out_ << kIndent2 << "}\n";
  if (manifest_.has_twist()) {
    // Oriented curves: normals per vertex, the material director m1 of rods with twist.
    out_ << kIndent2 << "normal3f[] normals (\n" << kIndent3 << "interpolation = \"vertex\"\n" << kIndent2 << ")\n";
    out_ << kIndent2 << "normal3f[] normals.timeSamples = {\n" << normals_ << kIndent2 << "}\n";
    normals_.clear();
  }
  out_ << "    }\n";
  write_colliders();
  out_ << "}\n";
  out_.close();
  if (!out_) {
    std::error_code ignored;
    std::filesystem::remove(temporary_, ignored);
    throw ExportError("cannot write '" + path_ + "' (disk full?)");
  }
  export_detail::commit_temporary(temporary_, path_);
}

void UsdaWriter::write_colliders() {
  if (colliders_.empty()) return;
  out_ << "\n    def Xform \"Colliders\"\n    {\n";
  for (std::size_t i = 0; i < colliders_.size(); ++i) {
    const Collider& c = colliders_.rest[i];
    const ColliderPrim prim = collider_prim(c);
    if (i) out_ << '\n';
    out_ << kIndent2 << "def " << prim.type << " \"collider_" << i << '_' << collider_type_name(c.type)
         << "\"\n" << kIndent2 << "{\n";
    put_collider_shape(out_, c, colliders_, prim);
    out_ << kIndent3 << "color3f[] primvars:displayColor = [";
    put_float3(out_, collider_color_);
    out_ << "]\n";
    // Where the prim's local frame is: its placement at rest, moved by its handle's pose at
    // each frame's time when a handle moves it.
    const RigidTransform placement = collider_placement(c, colliders_);
    const auto put_at = [&](double time) {
      const RigidTransform world = colliders_.pose(i, time) * placement;
      put_matrix(out_, world.rotation * prim.scale, world.translation);
    };
    if (colliders_.moves(i)) {
      out_ << kIndent3 << "matrix4d xformOp:transform.timeSamples = {\n";
      for (std::size_t k = 0; k < codes_.size(); ++k) {
        out_ << kIndent4 << codes_[k] << ": ";
        put_at(times_[k]);
        out_ << ",\n";
      }
      out_ << kIndent3 << "}\n";
    } else {
      out_ << kIndent3 << "matrix4d xformOp:transform = ";
      put_at(0.0);
      out_ << '\n';
    }
    out_ << kIndent3 << "uniform token[] xformOpOrder = [\"xformOp:transform\"]\n" << kIndent2 << "}\n";
  }
  out_ << "    }\n";
}

void write_usda(const Manifest& manifest, const std::vector<Frame>& frames,
                const std::string& path, const ExportColliders& colliders) {
  UsdaWriter writer(path, manifest, static_cast<int>(frames.size()), colliders);
  for (const Frame& f : frames) writer.add_frame(f);
  writer.finish();
}

}  // namespace bristle

#include "bristle/export/obj.hpp"

#include <ostream>

#include "bristle/export/collider_mesh.hpp"
#include "bristle/export/export_error.hpp"
#include "check_frame.hpp"
#include "number_text.hpp"
#include "write_whole.hpp"

namespace bristle {

namespace {

using export_detail::put;

// OBJ names run to the end of the line: keep them on one line, without spaces.
std::string obj_name(const std::string& name, std::size_t index) {
  if (name.empty()) return "rod_" + std::to_string(index);
  std::string out = name;
  for (char& c : out) {
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') c = '_';
  }
  return out;
}

void put_vertex(std::ostream& out, const Vec3& p) {
  out << "v ";
  put(out, p.x());
  out << ' ';
  put(out, p.y());
  out << ' ';
  put(out, p.z());
  out << '\n';
}

}  // namespace

void write_obj(const Manifest& manifest, const Frame& frame, const ExportColliders& colliders,
               std::ostream& out) {
  export_detail::check_frame(manifest, frame);
  out << "# Bristle frame " << frame.index << ", t = ";
  put(out, frame.time);
  out << " s: " << frame.rods.size() << " rods as line segments, " << colliders.size()
      << " colliders as triangles\n";
  std::size_t next = 1;  // OBJ indices are 1-based and count every v line so far
  for (std::size_t r = 0; r < frame.rods.size(); ++r) {
    const RodFrame& rod = frame.rods[r];
    out << "o " << obj_name(rod.name, r) << '\n';
    for (const Vec3& p : rod.positions) put_vertex(out, p);
    // One element per segment: see obj.hpp for why not one polyline.
    for (std::size_t i = 0; i + 1 < rod.positions.size(); ++i) out << "l " << next + i << ' ' << next + i + 1 << '\n';
    next += rod.positions.size();
  }
  for (std::size_t c = 0; c < colliders.size(); ++c) {
    const TriangleMesh mesh = collider_mesh_at(colliders, c, frame.time);
    out << "o collider_" << c << '_' << collider_type_name(colliders.rest[c].type) << '\n';
    for (const Vec3& p : mesh.vertices) put_vertex(out, p);
    for (const auto& t : mesh.triangles)
      out << "f " << next + t[0] << ' ' << next + t[1] << ' ' << next + t[2] << '\n';
    next += mesh.vertices.size();
  }
}

void write_obj(const Manifest& manifest, const Frame& frame, const ExportColliders& colliders,
               const std::string& path) {
  export_detail::write_whole(path, [&](std::ostream& out) { write_obj(manifest, frame, colliders, out); });
}

}  // namespace bristle

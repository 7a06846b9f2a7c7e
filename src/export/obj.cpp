#include "bristle/export/obj.hpp"

#include <ostream>

#include "bristle/export/export_error.hpp"
#include "check_frame.hpp"
#include "number_text.hpp"
#include "write_whole.hpp"

namespace bristle {

namespace {

// OBJ names run to the end of the line: keep them on one line, without spaces.
std::string obj_name(const std::string& name, std::size_t index) {
  if (name.empty()) return "rod_" + std::to_string(index);
  std::string out = name;
  for (char& c : out) {
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') c = '_';
  }
  return out;
}

}  // namespace

void write_obj(const Manifest& manifest, const Frame& frame, std::ostream& out) {
  using export_detail::put;
  export_detail::check_frame(manifest, frame);
  out << "# Bristle frame " << frame.index << ", t = ";
  put(out, frame.time);
  out << " s, " << frame.rods.size() << " rods as polylines\n";
  std::size_t next = 1;  // OBJ indices are 1-based and count every v line so far
  for (std::size_t r = 0; r < frame.rods.size(); ++r) {
    const RodFrame& rod = frame.rods[r];
    out << "o " << obj_name(rod.name, r) << '\n';
    for (const Vec3& p : rod.positions) {
      out << "v ";
      put(out, p.x());
      out << ' ';
      put(out, p.y());
      out << ' ';
      put(out, p.z());
      out << '\n';
    }
    if (rod.positions.size() >= 2) {
      out << 'l';
      for (std::size_t i = 0; i < rod.positions.size(); ++i) out << ' ' << next + i;
      out << '\n';
    }
    next += rod.positions.size();
  }
}

void write_obj(const Manifest& manifest, const Frame& frame, const std::string& path) {
  export_detail::write_whole(path, [&](std::ostream& out) { write_obj(manifest, frame, out); });
}

}  // namespace bristle

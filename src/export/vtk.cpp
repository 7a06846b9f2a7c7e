#include "bristle/export/vtk.hpp"

#include <cstdint>
#include <cstring>
#include <ostream>

#include "bristle/export/collider_mesh.hpp"
#include "bristle/export/export_error.hpp"
#include "bristle/io/frame_directors.hpp"
#include "check_frame.hpp"
#include "number_text.hpp"
#include "write_whole.hpp"

namespace bristle {

namespace {

using export_detail::put;

std::string xml_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default: out += c;
    }
  }
  return out;
}

// The appended section of a .vtp: each array a block of a UInt64 byte count and the bytes,
// little-endian whatever the machine (written byte by byte, so the file is the same
// everywhere). `offset` of an array is where its block starts, counted from the first byte
// after the section's '_'.
class AppendedData {
 public:
  /// Starts the block of an array of `count` values of `width` bytes; returns its offset.
  std::size_t begin(std::size_t count, std::size_t width) {
    const std::size_t offset = bytes_.size();
    put_le(static_cast<std::uint64_t>(count * width), 8);
    return offset;
  }
  void float64(double x) {
    std::uint64_t bits;
    std::memcpy(&bits, &x, sizeof bits);
    put_le(bits, 8);
  }
  void int64(std::int64_t x) { put_le(static_cast<std::uint64_t>(x), 8); }
  void int32(std::int32_t x) { put_le(static_cast<std::uint32_t>(x), 4); }
  const std::string& bytes() const { return bytes_; }

 private:
  void put_le(std::uint64_t x, int width) {
    for (int i = 0; i < width; ++i) bytes_ += static_cast<char>((x >> (8 * i)) & 0xffu);
  }
  std::string bytes_;
};

void data_array(std::ostream& out, const char* indent, const char* type, const char* name, int components,
                std::size_t offset) {
  out << indent << "<DataArray type=\"" << type << "\" Name=\"" << name << '"';
  if (components > 1) out << " NumberOfComponents=\"" << components << '"';
  out << " format=\"appended\" offset=\"" << offset << "\"/>\n";
}

constexpr const char* kArray = "        ";

void file_head(std::ostream& out, double time) {
  out << "<?xml version=\"1.0\"?>\n"
         "<VTKFile type=\"PolyData\" version=\"1.0\" byte_order=\"LittleEndian\" header_type=\"UInt64\">\n"
         "  <PolyData>\n"
         "    <FieldData>\n"
         "      <DataArray type=\"Float64\" Name=\"TimeValue\" NumberOfTuples=\"1\" format=\"ascii\">";
  put(out, time);
  out << "</DataArray>\n"
         "    </FieldData>\n";
}

void file_tail(std::ostream& out, const AppendedData& data) {
  out << "    </Piece>\n"
         "  </PolyData>\n"
         "  <AppendedData encoding=\"raw\">\n"
         "   _";
  out.write(data.bytes().data(), static_cast<std::streamsize>(data.bytes().size()));
  out << "\n  </AppendedData>\n"
         "</VTKFile>\n";
}

}  // namespace

void write_vtp(const Manifest& manifest, const Frame& frame, std::ostream& out) {
  export_detail::check_frame(manifest, frame);
  const std::size_t n = export_detail::point_count(frame);
  const std::size_t rods = frame.rods.size();
  const auto velocity = [](const RodFrame& rod, std::size_t i) {
    return rod.velocities.empty() ? Vec3(Vec3::Zero()) : rod.velocities[i];
  };

  AppendedData data;
  const std::size_t radius_at = data.begin(n, 8);
  for (std::size_t r = 0; r < rods; ++r)
    for (std::size_t i = 0; i < frame.rods[r].positions.size(); ++i) data.float64(manifest.rods[r].radius);
  const std::size_t velocity_at = data.begin(3 * n, 8);
  for (const RodFrame& rod : frame.rods)
    for (std::size_t i = 0; i < rod.positions.size(); ++i)
      for (int c = 0; c < 3; ++c) data.float64(velocity(rod, i)[c]);
  // Rods with twist: each vertex's material director m1 (io/frame_directors.hpp), zero on rods
  // without twist; the array is written only when some rod has twist, so files of scenes
  // without twist keep their bytes.
  bool any_directors = false;
  for (const RodFrame& rod : frame.rods) any_directors = any_directors || !rod.directors.empty();
  std::size_t director_at = 0;
  if (any_directors) {
    director_at = data.begin(3 * n, 8);
    for (const RodFrame& rod : frame.rods) {
      const std::vector<Vec3> m1 = vertex_directors(rod.positions, rod.directors);
      for (std::size_t i = 0; i < rod.positions.size(); ++i)
        for (int c = 0; c < 3; ++c) data.float64(m1.empty() ? 0.0 : m1[i][c]);
    }
  }
  const std::size_t rod_id_at = data.begin(rods, 4);
  for (std::size_t r = 0; r < rods; ++r) data.int32(static_cast<std::int32_t>(r));
  const std::size_t points_at = data.begin(3 * n, 8);
  for (const RodFrame& rod : frame.rods)
    for (const Vec3& p : rod.positions)
      for (int c = 0; c < 3; ++c) data.float64(p[c]);
  const std::size_t connectivity_at = data.begin(n, 8);
  for (std::size_t i = 0; i < n; ++i) data.int64(static_cast<std::int64_t>(i));
  const std::size_t offsets_at = data.begin(rods, 8);
  std::size_t end = 0;
  for (const RodFrame& rod : frame.rods) data.int64(static_cast<std::int64_t>(end += rod.positions.size()));

  file_head(out, frame.time);
  out << "    <Piece NumberOfPoints=\"" << n << "\" NumberOfVerts=\"0\" NumberOfLines=\"" << rods
      << "\" NumberOfStrips=\"0\" NumberOfPolys=\"0\">\n"
         "      <PointData Scalars=\"radius\" Vectors=\"velocity\">\n";
  data_array(out, kArray, "Float64", "radius", 1, radius_at);
  data_array(out, kArray, "Float64", "velocity", 3, velocity_at);
  if (any_directors) data_array(out, kArray, "Float64", "material_director", 3, director_at);
  out << "      </PointData>\n"
         "      <CellData Scalars=\"rod_id\">\n";
  data_array(out, kArray, "Int32", "rod_id", 1, rod_id_at);
  out << "      </CellData>\n"
         "      <Points>\n";
  data_array(out, kArray, "Float64", "Points", 3, points_at);
  out << "      </Points>\n"
         "      <Lines>\n";
  data_array(out, kArray, "Int64", "connectivity", 1, connectivity_at);
  data_array(out, kArray, "Int64", "offsets", 1, offsets_at);
  out << "      </Lines>\n";
  file_tail(out, data);
}

void write_vtp(const Manifest& manifest, const Frame& frame, const std::string& path) {
  export_detail::write_whole(path, [&](std::ostream& out) { write_vtp(manifest, frame, out); });
}

void write_colliders_vtp(const ExportColliders& colliders, double time, std::ostream& out) {
  std::vector<TriangleMesh> meshes;
  std::size_t points = 0, triangles = 0;
  for (std::size_t c = 0; c < colliders.size(); ++c) {
    meshes.push_back(collider_mesh_at(colliders, c, time));
    points += meshes.back().vertices.size();
    triangles += meshes.back().triangles.size();
  }
  AppendedData data;
  const std::size_t id_at = data.begin(triangles, 4);
  for (std::size_t c = 0; c < meshes.size(); ++c)
    for (std::size_t t = 0; t < meshes[c].triangles.size(); ++t) data.int32(static_cast<std::int32_t>(c));
  const std::size_t points_at = data.begin(3 * points, 8);
  for (const TriangleMesh& m : meshes)
    for (const Vec3& p : m.vertices)
      for (int k = 0; k < 3; ++k) data.float64(p[k]);
  const std::size_t connectivity_at = data.begin(3 * triangles, 8);
  std::size_t base = 0;
  for (const TriangleMesh& m : meshes) {
    for (const auto& t : m.triangles)
      for (int v : t) data.int64(static_cast<std::int64_t>(base) + v);
    base += m.vertices.size();
  }
  const std::size_t offsets_at = data.begin(triangles, 8);
  for (std::size_t t = 1; t <= triangles; ++t) data.int64(static_cast<std::int64_t>(3 * t));

  file_head(out, time);
  out << "    <Piece NumberOfPoints=\"" << points << "\" NumberOfVerts=\"0\" NumberOfLines=\"0\""
      << " NumberOfStrips=\"0\" NumberOfPolys=\"" << triangles << "\">\n"
      << "      <CellData Scalars=\"collider_id\">\n";
  data_array(out, kArray, "Int32", "collider_id", 1, id_at);
  out << "      </CellData>\n"
         "      <Points>\n";
  data_array(out, kArray, "Float64", "Points", 3, points_at);
  out << "      </Points>\n"
         "      <Polys>\n";
  data_array(out, kArray, "Int64", "connectivity", 1, connectivity_at);
  data_array(out, kArray, "Int64", "offsets", 1, offsets_at);
  out << "      </Polys>\n";
  file_tail(out, data);
}

void write_colliders_vtp(const ExportColliders& colliders, double time, const std::string& path) {
  export_detail::write_whole(path, [&](std::ostream& out) { write_colliders_vtp(colliders, time, out); });
}

void write_pvd(const std::vector<PvdEntry>& entries, std::ostream& out) {
  out << "<?xml version=\"1.0\"?>\n"
         "<VTKFile type=\"Collection\" version=\"0.1\" byte_order=\"LittleEndian\">\n"
         "  <Collection>\n";
  for (const PvdEntry& e : entries) {
    out << "    <DataSet timestep=\"";
    put(out, e.time);
    out << "\" group=\"\" part=\"" << e.part << "\" file=\"" << xml_escape(e.file) << "\"/>\n";
  }
  out << "  </Collection>\n"
         "</VTKFile>\n";
}

void write_pvd(const std::vector<PvdEntry>& entries, const std::string& path) {
  export_detail::write_whole(path, [&](std::ostream& out) { write_pvd(entries, out); });
}

}  // namespace bristle

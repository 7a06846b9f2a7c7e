#include "bristle/export/vtk.hpp"

#include <ostream>

#include "bristle/export/export_error.hpp"
#include "check_frame.hpp"
#include "number_text.hpp"
#include "write_whole.hpp"

namespace bristle {

namespace {

using export_detail::put;

void put3(std::ostream& out, const Vec3& v) {
  put(out, v.x());
  out << ' ';
  put(out, v.y());
  out << ' ';
  put(out, v.z());
}

// The velocity of vertex i, zero when the frame carries none.
Vec3 velocity(const RodFrame& rod, std::size_t i) {
  return rod.velocities.empty() ? Vec3(Vec3::Zero()) : rod.velocities[i];
}

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

}  // namespace

void write_vtk_legacy(const Manifest& manifest, const Frame& frame, std::ostream& out) {
  export_detail::check_frame(manifest, frame);
  const std::size_t n = export_detail::point_count(frame);
  const std::size_t rods = frame.rods.size();

  out << "# vtk DataFile Version 3.0\n";
  // The title line: at most 255 characters, no newline.
  std::string title = "Bristle " + manifest.name + " frame " + std::to_string(frame.index) +
                      " t=" + export_detail::text(frame.time);
  for (char& c : title) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  if (title.size() > 255) title.resize(255);
  out << title << "\nASCII\nDATASET POLYDATA\n";
  out << "FIELD FieldData 1\nTIME 1 1 double\n";
  put(out, frame.time);
  out << "\nPOINTS " << n << " double\n";
  for (const RodFrame& rod : frame.rods) {
    for (const Vec3& p : rod.positions) {
      put3(out, p);
      out << '\n';
    }
  }
  std::size_t size = 0;
  for (const RodFrame& rod : frame.rods) size += 1 + rod.positions.size();
  out << "LINES " << rods << ' ' << size << '\n';
  std::size_t next = 0;
  for (const RodFrame& rod : frame.rods) {
    out << rod.positions.size();
    for (std::size_t i = 0; i < rod.positions.size(); ++i) out << ' ' << next + i;
    out << '\n';
    next += rod.positions.size();
  }
  out << "CELL_DATA " << rods << "\nSCALARS rod_id int 1\nLOOKUP_TABLE default\n";
  for (std::size_t r = 0; r < rods; ++r) out << r << '\n';
  out << "POINT_DATA " << n << "\nSCALARS radius double 1\nLOOKUP_TABLE default\n";
  for (std::size_t r = 0; r < rods; ++r) {
    for (std::size_t i = 0; i < frame.rods[r].positions.size(); ++i) {
      put(out, manifest.rods[r].radius);
      out << '\n';
    }
  }
  out << "VECTORS velocity double\n";
  for (const RodFrame& rod : frame.rods) {
    for (std::size_t i = 0; i < rod.positions.size(); ++i) {
      put3(out, velocity(rod, i));
      out << '\n';
    }
  }
}

void write_vtk_legacy(const Manifest& manifest, const Frame& frame, const std::string& path) {
  export_detail::write_whole(path, [&](std::ostream& out) { write_vtk_legacy(manifest, frame, out); });
}

void write_vtp(const Manifest& manifest, const Frame& frame, std::ostream& out) {
  export_detail::check_frame(manifest, frame);
  const std::size_t n = export_detail::point_count(frame);
  const std::size_t rods = frame.rods.size();

  out << "<?xml version=\"1.0\"?>\n"
         "<VTKFile type=\"PolyData\" version=\"0.1\" byte_order=\"LittleEndian\">\n"
         "  <PolyData>\n"
         "    <FieldData>\n"
         "      <DataArray type=\"Float64\" Name=\"TimeValue\" NumberOfTuples=\"1\" "
         "format=\"ascii\">";
  put(out, frame.time);
  out << "</DataArray>\n"
         "    </FieldData>\n"
      << "    <Piece NumberOfPoints=\"" << n << "\" NumberOfVerts=\"0\" NumberOfLines=\"" << rods
      << "\" NumberOfStrips=\"0\" NumberOfPolys=\"0\">\n";

  out << "      <PointData Scalars=\"radius\" Vectors=\"velocity\">\n"
         "        <DataArray type=\"Float64\" Name=\"radius\" format=\"ascii\">\n";
  for (std::size_t r = 0; r < rods; ++r) {
    for (std::size_t i = 0; i < frame.rods[r].positions.size(); ++i) {
      put(out, manifest.rods[r].radius);
      out << '\n';
    }
  }
  out << "        </DataArray>\n"
         "        <DataArray type=\"Float64\" Name=\"velocity\" NumberOfComponents=\"3\" "
         "format=\"ascii\">\n";
  for (const RodFrame& rod : frame.rods) {
    for (std::size_t i = 0; i < rod.positions.size(); ++i) {
      put3(out, velocity(rod, i));
      out << '\n';
    }
  }
  out << "        </DataArray>\n"
         "      </PointData>\n"
         "      <CellData Scalars=\"rod_id\">\n"
         "        <DataArray type=\"Int32\" Name=\"rod_id\" format=\"ascii\">\n";
  for (std::size_t r = 0; r < rods; ++r) out << r << '\n';
  out << "        </DataArray>\n"
         "      </CellData>\n"
         "      <Points>\n"
         "        <DataArray type=\"Float64\" Name=\"Points\" NumberOfComponents=\"3\" "
         "format=\"ascii\">\n";
  for (const RodFrame& rod : frame.rods) {
    for (const Vec3& p : rod.positions) {
      put3(out, p);
      out << '\n';
    }
  }
  out << "        </DataArray>\n"
         "      </Points>\n"
         "      <Lines>\n"
         "        <DataArray type=\"Int64\" Name=\"connectivity\" format=\"ascii\">\n";
  std::size_t next = 0;
  for (const RodFrame& rod : frame.rods) {
    for (std::size_t i = 0; i < rod.positions.size(); ++i) out << (i ? " " : "") << next + i;
    out << '\n';
    next += rod.positions.size();
  }
  out << "        </DataArray>\n"
         "        <DataArray type=\"Int64\" Name=\"offsets\" format=\"ascii\">\n";
  std::size_t end = 0;
  for (const RodFrame& rod : frame.rods) {
    end += rod.positions.size();
    out << end << '\n';
  }
  out << "        </DataArray>\n"
         "      </Lines>\n"
         "    </Piece>\n"
         "  </PolyData>\n"
         "</VTKFile>\n";
}

void write_vtp(const Manifest& manifest, const Frame& frame, const std::string& path) {
  export_detail::write_whole(path, [&](std::ostream& out) { write_vtp(manifest, frame, out); });
}

void write_pvd(const std::vector<PvdEntry>& entries, std::ostream& out) {
  out << "<?xml version=\"1.0\"?>\n"
         "<VTKFile type=\"Collection\" version=\"0.1\" byte_order=\"LittleEndian\">\n"
         "  <Collection>\n";
  for (const PvdEntry& e : entries) {
    out << "    <DataSet timestep=\"";
    put(out, e.time);
    out << "\" group=\"\" part=\"0\" file=\"" << xml_escape(e.file) << "\"/>\n";
  }
  out << "  </Collection>\n"
         "</VTKFile>\n";
}

void write_pvd(const std::vector<PvdEntry>& entries, const std::string& path) {
  export_detail::write_whole(path, [&](std::ostream& out) { write_pvd(entries, out); });
}

}  // namespace bristle

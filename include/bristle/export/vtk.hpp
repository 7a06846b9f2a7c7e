#pragma once
/// VTK files for ParaView (and anything built on VTK): binary XML PolyData per frame and a
/// ParaView collection (.pvd) of the series.
///
/// Each .vtp is VTK's XML PolyData ("VTK File Formats", XML file formats) as VTK 9's own
/// writer lays it out in appended raw mode:
///     <VTKFile type="PolyData" version="1.0" byte_order="LittleEndian" header_type="UInt64">
///       <PolyData> <FieldData> TimeValue (Float64, ascii: the frame's time [s]) </FieldData>
///         <Piece ...> DataArray elements with format="appended" and offset="o" </Piece>
///       </PolyData>
///       <AppendedData encoding="raw">
///     _<block><block>...
///       </AppendedData>
///     </VTKFile>
/// where each block is a little-endian UInt64 byte count followed by the array's bytes,
/// little-endian, and an array's offset counts bytes from the first byte after the '_'.
///
/// Rods (write_vtp): Points (Float64, every vertex, rods in manifest order), one polyline cell
/// per rod in Lines (Int64 connectivity and offsets), point data radius (Float64 [m]) and
/// velocity (Float64 x 3 [m/s]), cell data rod_id (Int32, the rod's index in the manifest).
/// Colliders (write_colliders_vtp): triangles in Polys, cell data collider_id (Int32, the
/// collider's index in the scene's "colliders").
///
/// Float64 throughout, so the positions and velocities read back as the simulated doubles.

#include <iosfwd>
#include <string>
#include <vector>

#include "bristle/export/export_colliders.hpp"
#include "bristle/io/frame.hpp"

namespace bristle {

void write_vtp(const Manifest& manifest, const Frame& frame, std::ostream& out);
/// Throws ExportError when the file cannot be written or the frame does not match.
void write_vtp(const Manifest& manifest, const Frame& frame, const std::string& path);

/// The colliders at `time` [s] as triangles (export/collider_mesh.hpp).
void write_colliders_vtp(const ExportColliders& colliders, double time, std::ostream& out);
/// Throws ExportError when the file cannot be written.
void write_colliders_vtp(const ExportColliders& colliders, double time, const std::string& path);

/// One dataset of a ParaView collection.
struct PvdEntry {
  double time = 0.0;  ///< [s]
  int part = 0;       ///< datasets of the same time with different parts are shown together
  std::string file;   ///< relative to the .pvd file's directory
};

/// A ParaView data collection:
///   <VTKFile type="Collection" version="0.1" byte_order="LittleEndian">
///     <Collection> <DataSet timestep="t" group="" part="p" file="..."/> ... </Collection>
///   </VTKFile>
void write_pvd(const std::vector<PvdEntry>& entries, std::ostream& out);
/// Throws ExportError when the file cannot be written.
void write_pvd(const std::vector<PvdEntry>& entries, const std::string& path);

}  // namespace bristle

#pragma once
/// VTK files for ParaView (and anything built on VTK), one per frame.
///
/// Legacy format (VTK User's Guide, "VTK File Formats", simple legacy formats), ASCII:
///     # vtk DataFile Version 3.0
///     <title line>
///     ASCII
///     DATASET POLYDATA
///     FIELD FieldData 1            (the frame's time, an array named TIME)
///     TIME 1 1 double
///     <t>
///     POINTS <n> double            (every vertex of every rod, rods in manifest order)
///     <x y z per line>
///     LINES <rods> <size>          (size = sum over rods of 1 + vertex count)
///     <count i0 i1 ...>            (0-based point indices, one line per rod)
///     CELL_DATA <rods>
///     SCALARS rod_id int 1         (the rod's index in the manifest)
///     LOOKUP_TABLE default
///     POINT_DATA <n>
///     SCALARS radius double 1      ([m], the rod's radius at each vertex)
///     LOOKUP_TABLE default
///     VECTORS velocity double      ([m/s])
///
/// XML PolyData (.vtp, VTK's XML formats, ASCII data arrays) with the same points, lines and
/// arrays. ParaView's .pvd collection reader only opens XML datasets (it picks a reader from
/// the file extension and knows no legacy one), so the .pvd collection of a series lists the
/// .vtp files; the legacy .vtk series opens in ParaView as a numbered file group.

#include <iosfwd>
#include <string>
#include <vector>

#include "bristle/io/frame.hpp"

namespace bristle {

void write_vtk_legacy(const Manifest& manifest, const Frame& frame, std::ostream& out);
/// Throws ExportError when the file cannot be written or the frame does not match.
void write_vtk_legacy(const Manifest& manifest, const Frame& frame, const std::string& path);

void write_vtp(const Manifest& manifest, const Frame& frame, std::ostream& out);
/// Throws ExportError when the file cannot be written or the frame does not match.
void write_vtp(const Manifest& manifest, const Frame& frame, const std::string& path);

/// One dataset of a ParaView collection.
struct PvdEntry {
  double time = 0.0;  ///< [s]
  std::string file;   ///< relative to the .pvd file's directory
};

/// A ParaView data collection:
///   <VTKFile type="Collection" version="0.1" byte_order="LittleEndian">
///     <Collection> <DataSet timestep="t" group="" part="0" file="..."/> ... </Collection>
///   </VTKFile>
void write_pvd(const std::vector<PvdEntry>& entries, std::ostream& out);
/// Throws ExportError when the file cannot be written.
void write_pvd(const std::vector<PvdEntry>& entries, const std::string& path);

}  // namespace bristle

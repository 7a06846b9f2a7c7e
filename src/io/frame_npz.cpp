#include "bristle/io/frame_npz.hpp"

#include <cmath>
#include <cstring>
#include <map>

#include "bristle/io/json_parse.hpp"
#include "bristle/io/npz.hpp"
#include "bristle/io/output_error.hpp"
#include "bristle/scene/limits.hpp"

// Arrays are written and read by copying the machine's doubles: the format is little-endian.
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "frame_npz.cpp assumes a little-endian machine");

namespace bristle {

namespace {

using VectorsOf = std::vector<Vec3> RodFrame::*;

std::int64_t total_vertices(const Manifest& manifest) {
  std::int64_t total = 0;
  for (const RodInfo& rod : manifest.rods) total += rod.vertex_count;
  return total;
}

/// Appends one per-vertex array: every rod's `vectors` in turn, `dimension` components each.
void add_vertex_array(NpzWriter& writer, const char* name, const Frame& frame, VectorsOf vectors, int dimension) {
  std::int64_t rows = 0;
  for (const RodFrame& rod : frame.rods) rows += static_cast<std::int64_t>((rod.*vectors).size());
  writer.begin_array(name, NpyType::Float64, {rows, dimension});
  static_assert(sizeof(Vec3) == 3 * sizeof(double), "Vec3 must be three packed doubles");
  for (const RodFrame& rod : frame.rods) {
    const std::vector<Vec3>& rows_of_rod = rod.*vectors;
    if (dimension == 3) {
      writer.append(rows_of_rod.data(), rows_of_rod.size() * sizeof(Vec3));
    } else {
      for (const Vec3& v : rows_of_rod) writer.append(v.data(), dimension * sizeof(double));
    }
  }
  writer.end_array();
}

/// Appends the per-edge array "directors" (format version 2): every rod's edges in turn, 3
/// components each; a rod without twist has no directors and its rows are zero (so the array's
/// rows stay the documented per-edge layout, vertex_count - 1 per rod).
void add_directors(NpzWriter& writer, const Frame& frame) {
  std::int64_t rows = 0;
  for (const RodFrame& rod : frame.rods) rows += edge_count_of(static_cast<int>(rod.positions.size()));
  writer.begin_array("directors", NpyType::Float64, {rows, 3});
  for (const RodFrame& rod : frame.rods) {
    const std::size_t edges = static_cast<std::size_t>(edge_count_of(static_cast<int>(rod.positions.size())));
    if (rod.directors.size() == edges) {
      writer.append(rod.directors.data(), edges * sizeof(Vec3));
    } else {
      const Vec3 zero = Vec3::Zero();
      for (std::size_t j = 0; j < edges; ++j) writer.append(zero.data(), sizeof(Vec3));
    }
  }
  writer.end_array();
}

[[noreturn]] void fail(const std::string& file, const std::string& what) { throw OutputError(file, what); }

const NpyArray& member(const std::map<std::string, const NpyArray*>& arrays, const std::string& name,
                       const std::string& file) {
  const auto it = arrays.find(name);
  if (it == arrays.end()) fail(file, name + ": missing array (expected " + name + ".npy in the archive)");
  return *it->second;
}

void expect_shape(const NpyArray& array, NpyType type, const std::vector<std::int64_t>& shape, const std::string& name,
                  const std::string& file, const std::string& why) {
  static const char* names[] = {"float64", "int64", "uint8"};
  if (array.type != type || array.shape != shape)
    fail(file, name + ": expected " + names[static_cast<int>(type)] + " of shape " + npy_shape_text(shape) + why +
                   ", found " + names[static_cast<int>(array.type)] + " of shape " + npy_shape_text(array.shape));
}

double scalar_double(const NpyArray& array) {
  double value;
  std::memcpy(&value, array.data.data(), sizeof value);
  return value;
}

/// Splits a per-vertex array back into the rods, checking that every value is finite.
void read_vertex_array(const NpyArray& array, const char* name, const Manifest& manifest, VectorsOf vectors,
                       Frame& frame, const std::string& file) {
  const int dimension = manifest.dimension;
  const std::int64_t rows = total_vertices(manifest);
  expect_shape(array, NpyType::Float64, {rows, dimension}, name, file,
               " (the manifest's " + std::to_string(rows) + " vertices, dimension " + std::to_string(dimension) + ")");
  const char* data = array.data.data();
  std::int64_t row = 0;
  for (std::size_t r = 0; r < manifest.rods.size(); ++r) {
    std::vector<Vec3>& out = frame.rods[r].*vectors;
    out.assign(static_cast<std::size_t>(manifest.rods[r].vertex_count), Vec3::Zero());
    for (int i = 0; i < manifest.rods[r].vertex_count; ++i, ++row) {
      std::memcpy(out[i].data(), data + row * dimension * sizeof(double), dimension * sizeof(double));
      for (int k = 0; k < dimension; ++k)
        if (!std::isfinite(out[i][k]))
          fail(file, std::string(name) + ": row " + std::to_string(row) + " (rod \"" + manifest.rods[r].name +
                         "\" vertex " + std::to_string(i) + "), component " + std::to_string(k) +
                         ": expected a finite number, found " + std::to_string(out[i][k]));
    }
  }
}

/// Reads "directors" into the rods with twist (the rows of rods without twist are skipped),
/// checking that each is a finite unit vector.
void read_directors(const NpyArray& array, const Manifest& manifest, Frame& frame, const std::string& file) {
  std::int64_t rows = 0;
  for (const RodInfo& rod : manifest.rods) rows += edge_count_of(rod.vertex_count);
  expect_shape(array, NpyType::Float64, {rows, 3}, "directors", file,
               " (the manifest's " + std::to_string(rows) + " edges)");
  const char* data = array.data.data();
  std::int64_t row = 0;
  for (std::size_t r = 0; r < manifest.rods.size(); ++r) {
    const int edges = edge_count_of(manifest.rods[r].vertex_count);
    if (!manifest.rods[r].twist) {
      row += edges;
      continue;
    }
    std::vector<Vec3>& out = frame.rods[r].directors;
    out.assign(static_cast<std::size_t>(edges), Vec3::Zero());
    for (int j = 0; j < edges; ++j, ++row) {
      std::memcpy(out[j].data(), data + row * 3 * sizeof(double), 3 * sizeof(double));
      const double length = out[j].norm();
      if (!(std::abs(length - 1.0) <= kDirectorUnitTolerance))
        fail(file, "directors: row " + std::to_string(row) + " (rod \"" + manifest.rods[r].name + "\" edge " +
                       std::to_string(j) + "): expected a finite unit vector (a material director), found one of length " +
                       std::to_string(length));
    }
  }
}

}  // namespace

std::string frame_to_npz(const Frame& frame, int dimension, NpzCompression compression) {
  NpzWriter writer(compression == NpzCompression::Deflated ? kFrameDeflateLevel : 0);
  const std::int64_t index = frame.index;
  writer.add_array("frame", NpyType::Int64, {}, &index, sizeof index);
  writer.add_array("time", NpyType::Float64, {}, &frame.time, sizeof frame.time);
  add_vertex_array(writer, "positions", frame, &RodFrame::positions, dimension);
  add_vertex_array(writer, "velocities", frame, &RodFrame::velocities, dimension);
  // Format version 2 only: frames without twist keep version 1's bytes.
  bool twist = false;
  for (const RodFrame& rod : frame.rods) twist = twist || !rod.directors.empty();
  if (twist) add_directors(writer, frame);
  // nlohmann's dump writes each double as the shortest text that reads back to it exactly.
  const std::string stats = frame.stats.dump();
  writer.add_array("stats", NpyType::UInt8, {static_cast<std::int64_t>(stats.size())}, stats.data(), stats.size());
  return writer.finish();
}

Frame frame_from_npz(std::string_view bytes, const Manifest& manifest, const std::string& file) {
  std::vector<NpzMember> members;
  try {
    members = read_npz(bytes);
  } catch (const NpyError& error) {
    fail(file, std::string("not a readable .npz frame: ") + error.what());
  }
  std::map<std::string, const NpyArray*> arrays;
  for (const NpzMember& m : members) arrays[m.name] = &m.array;

  Frame frame;
  const NpyArray& index = member(arrays, "frame", file);
  expect_shape(index, NpyType::Int64, {}, "frame", file, "");
  std::int64_t k;
  std::memcpy(&k, index.data.data(), sizeof k);
  if (k < 0 || k > static_cast<std::int64_t>(kMaxFrames))
    fail(file, "frame: expected an integer in [0, " + std::to_string(static_cast<long long>(kMaxFrames)) +
                   "], found " + std::to_string(k));
  frame.index = static_cast<int>(k);
  const NpyArray& time = member(arrays, "time", file);
  expect_shape(time, NpyType::Float64, {}, "time", file, "");
  frame.time = scalar_double(time);
  if (!std::isfinite(frame.time)) fail(file, "time: expected a finite number, found " + std::to_string(frame.time));

  frame.rods.resize(manifest.rods.size());
  for (std::size_t r = 0; r < manifest.rods.size(); ++r) frame.rods[r].name = manifest.rods[r].name;
  read_vertex_array(member(arrays, "positions", file), "positions", manifest, &RodFrame::positions, frame, file);
  read_vertex_array(member(arrays, "velocities", file), "velocities", manifest, &RodFrame::velocities, frame, file);
  if (manifest.has_twist()) read_directors(member(arrays, "directors", file), manifest, frame, file);

  const auto stats = arrays.find("stats");
  if (stats != arrays.end()) {
    const NpyArray& text = *stats->second;
    if (text.type != NpyType::UInt8 || text.shape.size() != 1)
      fail(file, "stats: expected a uint8 array of shape (n,) holding JSON text, found shape " +
                     npy_shape_text(text.shape));
    try {
      frame.stats = parse_json_bounded(std::string(text.data));
    } catch (const JsonParseError& error) {
      fail(file, "stats: not valid JSON: " +
                     (error.syntax() ? "at byte " + std::to_string(error.byte()) + ": " + error.reason() : error.what()));
    }
    if (!frame.stats.is_object()) fail(file, "stats: expected a JSON object, found " + std::string(frame.stats.type_name()));
  }
  return frame;
}

}  // namespace bristle

#pragma once
/// numpy's .npy array format, version 1.0 written, 1.0 to 3.0 read (the format is specified
/// in numpy's NEP 1, "A Simple File Format for NumPy Arrays", and numpy.lib.format's docs):
///
///   "\x93NUMPY", major, minor version bytes, header length (uint16 LE in 1.0, uint32 LE in
///   2.0 and 3.0), then the header: a Python dict literal
///   {'descr': '<f8', 'fortran_order': False, 'shape': (1100, 3), } padded with spaces and
///   ended by '\n' so that the data starts at a multiple of 64 bytes, then the raw data in
///   C order.
///
/// Only the three element types frames need: little-endian float64 and int64, and bytes.

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace bristle {

enum class NpyType {
  Float64,  ///< '<f8'
  Int64,    ///< '<i8'
  UInt8,    ///< '|u1'
};

/// Bytes per element: 8, 8 or 1.
std::size_t npy_item_size(NpyType type);

/// A damaged or unsupported .npy or .npz: what is wrong (the caller adds the file's name).
class NpyError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The header of a version 1.0 .npy holding `shape` elements of `type` in C order: everything
/// before the data. Its length is a multiple of 64.
std::string npy_header(NpyType type, const std::vector<std::int64_t>& shape);

/// The elements of `shape` (1 for a scalar, shape ()). Throws NpyError on overflow.
std::int64_t npy_element_count(const std::vector<std::int64_t>& shape);

/// "(1100, 3)", "(5,)", "()": a shape as numpy prints it.
std::string npy_shape_text(const std::vector<std::int64_t>& shape);

/// A parsed .npy: its type, shape, and a view of its data inside the parsed bytes.
struct NpyArray {
  NpyType type = NpyType::Float64;
  std::vector<std::int64_t> shape;
  std::string_view data;  ///< exactly npy_element_count(shape) * npy_item_size(type) bytes
};

/// What a .npy header says: the element type, the shape, where the data starts and how long
/// it is.
struct NpyHeader {
  NpyType type = NpyType::Float64;
  std::vector<std::int64_t> shape;
  std::size_t data_start = 0;   ///< bytes before the data (magic, version, header length, dict)
  std::uint64_t data_size = 0;  ///< npy_element_count(shape) * npy_item_size(type)
};

/// The length of a .npy's header, everything before the data, read from its first bytes (10
/// are enough for version 1.0, 12 for 2.0 and 3.0): lets a reader that inflates a member learn
/// how much to inflate before parsing the header. Throws NpyError: bad magic or version,
/// `prefix` too short.
std::size_t npy_header_size(std::string_view prefix);

/// Parses the header at the start of `bytes`; the data after it may be absent. Throws NpyError
/// as parse_npy does, except about the data's size.
NpyHeader parse_npy_header(std::string_view bytes);

/// Parses the .npy file held in `bytes` (which must outlive the result). Throws NpyError:
/// bad magic, unsupported version or element type, Fortran order, a malformed header, or a
/// data size that does not match the shape.
NpyArray parse_npy(std::string_view bytes);

}  // namespace bristle

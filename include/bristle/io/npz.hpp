#pragma once
/// numpy's .npz archive: a zip file whose members are .npy arrays named "<name>.npy"
/// (numpy.savez; numpy.load returns a dict-like object keyed by <name>). Written here with every
/// member stored, not compressed: a frame of float64 numbers barely compresses, and deflate
/// would cost more than the step that made the frame (docs/output-format.md, "Binary frames").
///
/// The zip structures are those of PKWARE's APPNOTE.TXT (sections 4.3.7 local file header,
/// 4.3.12 central directory header, 4.3.16 end of central directory record), without zip64:
/// an archive and each member stay below 4 GiB (a scene holds at most 10^7 vertices,
/// docs/limits.md, 240 MB per float64 array of vectors). Dates are fixed (1980-01-01 00:00)
/// so that the same arrays make the same bytes.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "bristle/io/npy.hpp"

namespace bristle {

/// Builds an archive in memory, one array after another.
class NpzWriter {
 public:
  /// Starts the member "<name>.npy" holding `shape` elements of `type`; its data follows
  /// through append(), in C order, and end_array() closes it.
  void begin_array(const std::string& name, NpyType type, const std::vector<std::int64_t>& shape);
  void append(const void* data, std::size_t size);
  /// Closes the member: checks that its data fills the shape, writes its CRC-32 and sizes.
  void end_array();
  /// begin_array + append + end_array.
  void add_array(const std::string& name, NpyType type, const std::vector<std::int64_t>& shape, const void* data,
                 std::size_t size);
  /// Appends the central directory and returns the archive's bytes. The writer is spent.
  std::string finish();

 private:
  struct Member {
    std::string file_name;
    std::uint32_t crc = 0;
    std::uint32_t size = 0;
    std::uint32_t offset = 0;
  };
  std::string bytes_;
  std::vector<Member> members_;
  bool open_ = false;
  std::size_t header_at_ = 0, data_at_ = 0;
  std::uint64_t expected_size_ = 0;
};

struct NpzMember {
  std::string name;  ///< without ".npy"
  NpyArray array;    ///< views into the archive's bytes
};

/// Parses an archive held in `bytes` (which must outlive the result): every ".npy" member, in
/// archive order; members with other names are skipped. Each member's CRC-32 is checked.
/// Throws NpyError: not a zip, truncated, zip64, encrypted or compressed members, a duplicate
/// name, a CRC mismatch, or a member that is not a valid .npy (the message names it).
std::vector<NpzMember> read_npz(std::string_view bytes);

}  // namespace bristle

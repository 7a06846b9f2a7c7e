#pragma once
/// numpy's .npz archive: a zip file whose members are .npy arrays named "<name>.npy"
/// (numpy.savez; numpy.load returns a dict-like object keyed by <name>). A member is stored
/// (zip method 0, numpy.savez) or deflated (method 8, numpy.savez_compressed). Stored is the
/// default: a frame of float64 numbers shrinks only to 80-90% under deflate, at many times the
/// cost of writing it (docs/output-format.md, "Binary frames"); deflate is the choice when disk
/// space matters more than write time (`--frames compressed`).
///
/// The zip structures are those of PKWARE's APPNOTE.TXT (sections 4.3.7 local file header,
/// 4.3.12 central directory header, 4.3.16 end of central directory record), without zip64:
/// an archive and each member stay below 4 GiB (a scene holds at most 10^7 vertices,
/// docs/limits.md, 240 MB per float64 array of vectors). Dates are fixed (1980-01-01 00:00)
/// so that the same arrays make the same bytes.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "bristle/io/npy.hpp"

namespace bristle {

/// Builds an archive in memory, one array after another.
class NpzWriter {
 public:
  /// `deflate_level` 0: every member stored. 1 to 9: every member deflated at that zlib level,
  /// except one that deflate would not shrink (incompressible bytes), which stays stored.
  explicit NpzWriter(int deflate_level = 0);

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
    std::uint16_t method = 0;  ///< 0 stored, 8 deflated
    std::uint32_t crc = 0;
    std::uint32_t packed_size = 0;  ///< bytes in the archive
    std::uint32_t size = 0;         ///< bytes of the .npy
    std::uint32_t offset = 0;
  };
  int deflate_level_ = 0;
  std::string bytes_;
  std::vector<Member> members_;
  bool open_ = false;
  std::size_t header_at_ = 0, data_at_ = 0;
  std::uint64_t expected_size_ = 0;
};

struct NpzMember {
  std::string name;  ///< without ".npy"
  NpyArray array;    ///< views into the archive's bytes (stored) or into `inflated` (deflated)
  std::shared_ptr<const std::string> inflated;  ///< a deflated member's .npy bytes; null if stored
};

/// The largest .npy header a deflated member may declare [bytes]: numpy writes 64 to a few
/// hundred; a bigger claim is a damaged or hostile file, refused before inflating it.
constexpr std::size_t kMaxNpyHeaderSize = 1 << 20;

/// Parses an archive held in `bytes` (which must outlive the result): every ".npy" member, in
/// archive order; members with other names are skipped. Members may be stored or deflated,
/// each on its own. A deflated member is inflated in two steps: its .npy header first, then
/// exactly the data that header declares, which must also be the size the zip entry declares;
/// a stream that would inflate to more is refused, so memory never exceeds what the arrays'
/// shapes say. Each member's CRC-32 is checked (on the inflated bytes).
/// Throws NpyError: not a zip, truncated, zip64, encrypted members, a zip method other than 0
/// and 8, a damaged DEFLATE stream, sizes that disagree, a duplicate name, a CRC mismatch, or
/// a member that is not a valid .npy (the message names the member).
std::vector<NpzMember> read_npz(std::string_view bytes);

}  // namespace bristle

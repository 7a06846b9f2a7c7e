#include "bristle/io/npz.hpp"

#include <algorithm>
#include <set>

#include "bristle/io/crc32.hpp"
#include "bristle/io/deflate.hpp"

namespace bristle {

namespace {

constexpr std::uint32_t kLocalHeader = 0x04034b50;    // "PK\3\4"
constexpr std::uint32_t kCentralHeader = 0x02014b50;  // "PK\1\2"
constexpr std::uint32_t kEndOfCentral = 0x06054b50;   // "PK\5\6"
constexpr std::size_t kLocalHeaderSize = 30, kCentralHeaderSize = 46, kEndOfCentralSize = 22;
constexpr std::uint16_t kVersion = 20;  // 2.0: the oldest zip that knows folders and deflate (APPNOTE 4.4.3.2)
constexpr std::uint16_t kStored = 0, kDeflated = 8;  // compression methods (APPNOTE 4.4.5)
constexpr std::uint16_t kDosDate = 1 << 5 | 1;  // 1980-01-01, the earliest date DOS time can say
constexpr std::uint16_t kDosTime = 0;

void put16(std::string& out, std::uint16_t value) {
  out.push_back(static_cast<char>(value & 0xFF));
  out.push_back(static_cast<char>(value >> 8));
}
void put32(std::string& out, std::uint32_t value) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xFF));
}
void patch32(std::string& out, std::size_t at, std::uint32_t value) {
  for (int i = 0; i < 4; ++i) out[at + i] = static_cast<char>((value >> (8 * i)) & 0xFF);
}
std::uint32_t get(std::string_view bytes, std::size_t at, int size) {
  std::uint32_t value = 0;
  for (int i = size - 1; i >= 0; --i) value = value << 8 | static_cast<unsigned char>(bytes[at + i]);
  return value;
}

constexpr std::uint64_t kMaxZip32 = 0xFFFFFFFEu;  // 0xFFFFFFFF means "see zip64"

/// Inflates a deflated member holding a .npy of `size` bytes (its zip entry's uncompressed
/// size) in two bounded steps: the .npy header, then exactly the data the header declares.
/// Refuses a header claiming more than kMaxNpyHeaderSize, a header whose array size disagrees
/// with `size`, and a stream that ends early or would inflate past it.
std::shared_ptr<const std::string> inflate_npy(std::string_view packed, std::uint32_t size, const std::string& where) {
  auto npy = std::make_shared<std::string>();
  try {
    Inflater inflater(packed);
    constexpr std::size_t kPreamble = 12;  // magic, version, header length: 10 or 12 bytes
    inflater.inflate_to(*npy, std::min<std::size_t>(kPreamble, size));
    const std::size_t header_size = npy_header_size(*npy);
    if (header_size > kMaxNpyHeaderSize)
      throw NpyError(".npy header of " + std::to_string(header_size) + " bytes declared; at most " +
                     std::to_string(kMaxNpyHeaderSize) + " accepted (corrupt?)");
    if (header_size > size)
      throw NpyError(".npy header of " + std::to_string(header_size) + " bytes in an entry of " + std::to_string(size) +
                     " bytes (corrupt?)");
    inflater.inflate_to(*npy, header_size);
    const NpyHeader header = parse_npy_header(*npy);
    const std::uint64_t total = header.data_start + header.data_size;
    if (total != size)
      throw NpyError("the .npy header declares " + std::to_string(total) + " bytes (shape " +
                     npy_shape_text(header.shape) + "), the zip entry " + std::to_string(size) + " (corrupt?)");
    inflater.inflate_to(*npy, size);
    if (npy->size() < size)
      throw NpyError("inflates to " + std::to_string(npy->size()) + " bytes, its .npy header declares " +
                     std::to_string(size) + " (truncated?)");
    // The stream must end exactly here: one byte more would already be past the declared
    // size. (inflate_to returns with no byte only at the stream's end, or throws.)
    if (!inflater.finished()) {
      std::string extra;
      inflater.inflate_to(extra, 1);
      if (!extra.empty())
        throw NpyError("inflates to more than the " + std::to_string(size) +
                       " bytes its .npy header declares (corrupt or hostile)");
    }
  } catch (const DeflateError& error) {
    throw NpyError(where + error.what());
  } catch (const NpyError& error) {
    throw NpyError(where + error.what());
  }
  return npy;
}

}  // namespace

NpzWriter::NpzWriter(int deflate_level) : deflate_level_(deflate_level) {
  if (deflate_level < 0 || deflate_level > 9) throw NpyError("npz: deflate level must be 0 to 9");
}

void NpzWriter::begin_array(const std::string& name, NpyType type, const std::vector<std::int64_t>& shape) {
  if (open_) throw NpyError("npz: member " + members_.back().file_name + " is still open");
  const std::string header = npy_header(type, shape);
  expected_size_ = header.size() + static_cast<std::uint64_t>(npy_element_count(shape)) * npy_item_size(type);
  Member member;
  member.file_name = name + ".npy";
  if (bytes_.size() > kMaxZip32 || members_.size() >= 0xFFFF) throw NpyError("npz: archive too large for zip without zip64");
  member.offset = static_cast<std::uint32_t>(bytes_.size());
  bytes_.reserve(bytes_.size() + kLocalHeaderSize + member.file_name.size() + expected_size_ + 256);
  header_at_ = bytes_.size();
  put32(bytes_, kLocalHeader);
  put16(bytes_, kVersion);
  put16(bytes_, 0);  // flags: none (sizes and CRC are in this header, patched by end_array)
  put16(bytes_, kStored);  // method, patched by end_array
  put16(bytes_, kDosTime);
  put16(bytes_, kDosDate);
  put32(bytes_, 0);  // CRC-32, patched
  put32(bytes_, 0);  // packed size, patched
  put32(bytes_, 0);  // uncompressed size, patched
  put16(bytes_, static_cast<std::uint16_t>(member.file_name.size()));
  put16(bytes_, 0);  // no extra field
  bytes_ += member.file_name;
  data_at_ = bytes_.size();
  bytes_ += header;
  members_.push_back(std::move(member));
  open_ = true;
}

void NpzWriter::append(const void* data, std::size_t size) {
  bytes_.append(static_cast<const char*>(data), size);
}

void NpzWriter::end_array() {
  if (!open_) throw NpyError("npz: no member is open");
  const std::uint64_t size = bytes_.size() - data_at_;
  Member& member = members_.back();
  if (size != expected_size_)
    throw NpyError("npz: member " + member.file_name + " holds " + std::to_string(size) + " bytes, its shape needs " +
                   std::to_string(expected_size_));
  if (size > kMaxZip32) throw NpyError("npz: member " + member.file_name + " too large for zip without zip64");
  member.size = member.packed_size = static_cast<std::uint32_t>(size);
  member.crc = crc32(bytes_.data() + data_at_, size);
  if (deflate_level_ > 0) {
    // Deflated into a second buffer, then over the stored bytes: the copy costs a fraction
    // of the deflate itself.
    std::string packed;
    try {
      packed = deflate_raw(std::string_view(bytes_).substr(data_at_), deflate_level_);
    } catch (const DeflateError& error) {
      throw NpyError("npz: member " + member.file_name + ": " + error.what());
    }
    if (packed.size() < size) {
      bytes_.resize(data_at_);
      bytes_ += packed;
      member.method = kDeflated;
      member.packed_size = static_cast<std::uint32_t>(packed.size());
      bytes_[header_at_ + 8] = static_cast<char>(kDeflated);
    }
  }
  patch32(bytes_, header_at_ + 14, member.crc);
  patch32(bytes_, header_at_ + 18, member.packed_size);
  patch32(bytes_, header_at_ + 22, member.size);
  open_ = false;
}

void NpzWriter::add_array(const std::string& name, NpyType type, const std::vector<std::int64_t>& shape,
                          const void* data, std::size_t size) {
  begin_array(name, type, shape);
  append(data, size);
  end_array();
}

std::string NpzWriter::finish() {
  if (open_) throw NpyError("npz: member " + members_.back().file_name + " is still open");
  const std::uint64_t directory_at = bytes_.size();
  for (const Member& member : members_) {
    put32(bytes_, kCentralHeader);
    put16(bytes_, kVersion);  // made by: MS-DOS attributes, version 2.0
    put16(bytes_, kVersion);  // needed to extract
    put16(bytes_, 0);  // flags
    put16(bytes_, member.method);
    put16(bytes_, kDosTime);
    put16(bytes_, kDosDate);
    put32(bytes_, member.crc);
    put32(bytes_, member.packed_size);
    put32(bytes_, member.size);
    put16(bytes_, static_cast<std::uint16_t>(member.file_name.size()));
    put16(bytes_, 0);  // extra field
    put16(bytes_, 0);  // comment
    put16(bytes_, 0);  // disk number
    put16(bytes_, 0);  // internal attributes
    put32(bytes_, 0);  // external attributes
    put32(bytes_, member.offset);
    bytes_ += member.file_name;
  }
  const std::uint64_t directory_size = bytes_.size() - directory_at;
  if (bytes_.size() > kMaxZip32) throw NpyError("npz: archive too large for zip without zip64");
  put32(bytes_, kEndOfCentral);
  put16(bytes_, 0);  // this disk
  put16(bytes_, 0);  // the disk where the directory starts
  put16(bytes_, static_cast<std::uint16_t>(members_.size()));
  put16(bytes_, static_cast<std::uint16_t>(members_.size()));
  put32(bytes_, static_cast<std::uint32_t>(directory_size));
  put32(bytes_, static_cast<std::uint32_t>(directory_at));
  put16(bytes_, 0);  // comment length
  members_.clear();
  return std::move(bytes_);
}

std::vector<NpzMember> read_npz(std::string_view bytes) {
  if (bytes.size() < kEndOfCentralSize) throw NpyError("not a zip archive (too short; truncated?)");
  // The end record is the last 22 bytes unless the archive has a comment (up to 65535 bytes).
  std::size_t end = std::string_view::npos;
  const std::size_t lowest = bytes.size() - kEndOfCentralSize > 0xFFFF ? bytes.size() - kEndOfCentralSize - 0xFFFF : 0;
  for (std::size_t at = bytes.size() - kEndOfCentralSize + 1; at-- > lowest;)
    if (get(bytes, at, 4) == kEndOfCentral) {
      end = at;
      break;
    }
  if (end == std::string_view::npos) throw NpyError("not a zip archive (no end of central directory; truncated?)");
  const std::uint32_t count = get(bytes, end + 10, 2);
  const std::uint32_t directory_size = get(bytes, end + 12, 4), directory_at = get(bytes, end + 16, 4);
  if (get(bytes, end + 4, 2) != 0 || get(bytes, end + 6, 2) != 0 || get(bytes, end + 8, 2) != count)
    throw NpyError("multi-disk zip archives are not supported");
  if (count == 0xFFFF || directory_size == 0xFFFFFFFFu || directory_at == 0xFFFFFFFFu)
    throw NpyError("zip64 archives are not supported");
  if (directory_at > end || directory_size > end - directory_at)
    throw NpyError("zip central directory lies outside the file (truncated or corrupt?)");

  std::vector<NpzMember> members;
  std::set<std::string> names;
  std::size_t at = directory_at;
  const std::size_t directory_end = directory_at + directory_size;
  for (std::uint32_t i = 0; i < count; ++i) {
    if (at + kCentralHeaderSize > directory_end || get(bytes, at, 4) != kCentralHeader)
      throw NpyError("zip central directory entry " + std::to_string(i) + " is damaged");
    const std::uint32_t flags = get(bytes, at + 8, 2), method = get(bytes, at + 10, 2);
    const std::uint32_t crc = get(bytes, at + 16, 4);
    const std::uint32_t packed = get(bytes, at + 20, 4), size = get(bytes, at + 24, 4);
    const std::uint32_t name_size = get(bytes, at + 28, 2);
    const std::uint32_t entry_size = kCentralHeaderSize + name_size + get(bytes, at + 30, 2) + get(bytes, at + 32, 2);
    const std::uint32_t local_at = get(bytes, at + 42, 4);
    if (at + entry_size > directory_end) throw NpyError("zip central directory entry " + std::to_string(i) + " is damaged");
    const std::string file_name(bytes.substr(at + kCentralHeaderSize, name_size));
    at += entry_size;

    const std::string suffix = ".npy";
    if (file_name.size() <= suffix.size() || file_name.compare(file_name.size() - suffix.size(), suffix.size(), suffix) != 0)
      continue;  // not an array: a reader keeps only what it knows
    const std::string where = "member " + file_name + ": ";
    if (flags & 1u) throw NpyError(where + "encrypted members are not supported");
    if (method != kStored && method != kDeflated)
      throw NpyError(where + "compressed with zip method " + std::to_string(method) +
                     "; bristle reads stored (0) and deflated (8) members, as numpy.savez and savez_compressed write");
    if (packed == 0xFFFFFFFFu || size == 0xFFFFFFFFu || local_at == 0xFFFFFFFFu)
      throw NpyError(where + "zip64 members are not supported");
    if (method == kStored && packed != size) throw NpyError(where + "stored sizes disagree (corrupt?)");
    if (local_at > bytes.size() || bytes.size() - local_at < kLocalHeaderSize || get(bytes, local_at, 4) != kLocalHeader)
      throw NpyError(where + "local header missing (truncated or corrupt?)");
    const std::size_t data_at = local_at + kLocalHeaderSize + get(bytes, local_at + 26, 2) + get(bytes, local_at + 28, 2);
    if (data_at > directory_at || directory_at - data_at < packed)
      throw NpyError(where + "data runs past the end of the members (truncated or corrupt?)");
    NpzMember member;
    std::string_view data = bytes.substr(data_at, packed);
    if (method == kDeflated) {
      member.inflated = inflate_npy(data, size, where);
      data = *member.inflated;
    }
    if (crc32(data.data(), data.size()) != crc) throw NpyError(where + "CRC-32 mismatch (the file is corrupt)");
    member.name = file_name.substr(0, file_name.size() - suffix.size());
    if (!names.insert(member.name).second) throw NpyError(where + "appears twice");
    try {
      member.array = parse_npy(data);
    } catch (const NpyError& error) {
      throw NpyError(where + error.what());
    }
    members.push_back(std::move(member));
  }
  return members;
}

}  // namespace bristle

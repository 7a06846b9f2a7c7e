#include "bristle/io/npy.hpp"

#include <cctype>
#include <cstring>
#include <limits>

namespace bristle {

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr std::size_t kMagicSize = 6;

const char* descr(NpyType type) {
  switch (type) {
    case NpyType::Float64: return "<f8";
    case NpyType::Int64: return "<i8";
    case NpyType::UInt8: return "|u1";
  }
  return "";
}

/// A cursor over the header's dict literal. The grammar is the small subset of Python literals
/// numpy writes: {'key': value, ...} with string, True/False and tuple-of-integer values.
class HeaderParser {
 public:
  explicit HeaderParser(std::string_view text) : text_(text) {}

  void skip_space() {
    while (at_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[at_]))) ++at_;
  }
  bool take(char c) {
    skip_space();
    if (at_ < text_.size() && text_[at_] == c) {
      ++at_;
      return true;
    }
    return false;
  }
  void expect(char c) {
    if (!take(c)) fail(std::string("expected '") + c + "'");
  }
  std::string string() {
    skip_space();
    if (at_ >= text_.size() || (text_[at_] != '\'' && text_[at_] != '"')) fail("expected a quoted string");
    const char quote = text_[at_++];
    const std::size_t end = text_.find(quote, at_);
    if (end == std::string_view::npos) fail("unterminated string");
    std::string value(text_.substr(at_, end - at_));
    at_ = end + 1;
    return value;
  }
  bool boolean() {
    skip_space();
    for (const auto& [word, value] : {std::pair<const char*, bool>{"True", true}, {"False", false}}) {
      const std::size_t size = std::strlen(word);
      if (text_.substr(at_, size) == word) {
        at_ += size;
        return value;
      }
    }
    fail("expected True or False");
  }
  std::vector<std::int64_t> shape() {
    expect('(');
    std::vector<std::int64_t> dims;
    while (!take(')')) {
      skip_space();
      std::int64_t value = 0;
      const std::size_t start = at_;
      while (at_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[at_]))) {
        if (value > (std::numeric_limits<std::int64_t>::max() - 9) / 10) fail("shape dimension too large");
        value = value * 10 + (text_[at_++] - '0');
      }
      if (at_ == start) fail("expected a non-negative integer in the shape");
      take('L');  // Python 2 longs, as old numpy wrote them
      dims.push_back(value);
      if (dims.size() > 32) fail("more than 32 dimensions");
      if (!take(',')) {
        expect(')');
        break;
      }
    }
    return dims;
  }
  bool at_end() {
    skip_space();
    return at_ == text_.size();
  }
  [[noreturn]] void fail(const std::string& what) const {
    throw NpyError("malformed .npy header at character " + std::to_string(at_) + ": " + what);
  }

 private:
  std::string_view text_;
  std::size_t at_ = 0;
};

std::uint32_t read_le(std::string_view bytes, std::size_t at, int size) {
  std::uint32_t value = 0;
  for (int i = size - 1; i >= 0; --i) value = value << 8 | static_cast<unsigned char>(bytes[at + i]);
  return value;
}

}  // namespace

std::size_t npy_item_size(NpyType type) { return type == NpyType::UInt8 ? 1 : 8; }

std::int64_t npy_element_count(const std::vector<std::int64_t>& shape) {
  std::int64_t count = 1;
  for (const std::int64_t dim : shape) {
    if (dim < 0) throw NpyError("negative dimension in shape " + npy_shape_text(shape));
    if (dim != 0 && count > std::numeric_limits<std::int64_t>::max() / 8 / dim)
      throw NpyError("shape " + npy_shape_text(shape) + " is too large");
    count *= dim;
  }
  return count;
}

std::string npy_shape_text(const std::vector<std::int64_t>& shape) {
  std::string text = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  if (shape.size() == 1) text += ",";
  return text + ")";
}

std::string npy_header(NpyType type, const std::vector<std::int64_t>& shape) {
  // Keys in sorted order with a trailing ", ", as numpy writes them (byte-identical headers).
  std::string dict = std::string("{'descr': '") + descr(type) + "', 'fortran_order': False, 'shape': " +
                     npy_shape_text(shape) + ", }";
  const std::size_t unpadded = kMagicSize + 2 + 2 + dict.size() + 1;  // + the final '\n'
  const std::size_t padded = (unpadded + 63) / 64 * 64;
  dict.append(padded - unpadded, ' ');
  dict.push_back('\n');
  if (dict.size() > 0xFFFF) throw NpyError("shape " + npy_shape_text(shape) + " makes a header too long for version 1.0");
  std::string header(kMagic, kMagicSize);
  header.push_back('\x01');
  header.push_back('\x00');
  header.push_back(static_cast<char>(dict.size() & 0xFF));
  header.push_back(static_cast<char>(dict.size() >> 8));
  return header + dict;
}

std::size_t npy_header_size(std::string_view prefix) {
  if (prefix.size() < kMagicSize + 4 || prefix.substr(0, kMagicSize) != std::string_view(kMagic, kMagicSize))
    throw NpyError("not a .npy array (no \\x93NUMPY magic)");
  const int major = static_cast<unsigned char>(prefix[kMagicSize]);
  if (major < 1 || major > 3)
    throw NpyError(".npy format version " + std::to_string(major) + " is not supported (1 to 3 are)");
  const int length_size = major == 1 ? 2 : 4;
  const std::size_t header_start = kMagicSize + 2 + length_size;
  if (prefix.size() < header_start) throw NpyError(".npy header truncated");
  return header_start + read_le(prefix, kMagicSize + 2, length_size);
}

NpyHeader parse_npy_header(std::string_view bytes) {
  const std::size_t header_end = npy_header_size(bytes);
  if (header_end > bytes.size()) throw NpyError(".npy header truncated");
  const std::size_t header_start = kMagicSize + 2 + (bytes[kMagicSize] == 1 ? 2 : 4);
  const std::size_t header_size = header_end - header_start;

  HeaderParser parser(bytes.substr(header_start, header_size));
  NpyHeader array;
  bool has_descr = false, has_order = false, has_shape = false, fortran = false;
  parser.expect('{');
  while (!parser.take('}')) {
    const std::string key = parser.string();
    parser.expect(':');
    if (key == "descr") {
      const std::string value = parser.string();
      if (value == "<f8") array.type = NpyType::Float64;
      else if (value == "<i8") array.type = NpyType::Int64;
      else if (value == "|u1" || value == "<u1" || value == "u1") array.type = NpyType::UInt8;
      else throw NpyError("element type '" + value + "' is not supported (only '<f8', '<i8' and '|u1')");
      has_descr = true;
    } else if (key == "fortran_order") {
      fortran = parser.boolean();
      has_order = true;
    } else if (key == "shape") {
      array.shape = parser.shape();
      has_shape = true;
    } else {
      parser.fail("unknown key '" + key + "'");
    }
    if (!parser.take(',')) {
      parser.expect('}');
      break;
    }
  }
  if (!parser.at_end()) parser.fail("text after the dict");
  if (!has_descr || !has_order || !has_shape) throw NpyError(".npy header lacks 'descr', 'fortran_order' or 'shape'");
  std::size_t multi_dimensional = 0;
  for (const std::int64_t dim : array.shape) multi_dimensional += dim > 1 ? 1 : 0;
  if (fortran && multi_dimensional > 1) throw NpyError("Fortran-ordered arrays are not supported");

  array.data_start = header_start + header_size;
  array.data_size = static_cast<std::uint64_t>(npy_element_count(array.shape)) * npy_item_size(array.type);
  return array;
}

NpyArray parse_npy(std::string_view bytes) {
  const NpyHeader header = parse_npy_header(bytes);
  if (bytes.size() - header.data_start != header.data_size)
    throw NpyError("shape " + npy_shape_text(header.shape) + " needs " + std::to_string(header.data_size) +
                   " bytes of data, found " + std::to_string(bytes.size() - header.data_start) + " (truncated?)");
  NpyArray array;
  array.type = header.type;
  array.shape = header.shape;
  array.data = bytes.substr(header.data_start);
  return array;
}

}  // namespace bristle

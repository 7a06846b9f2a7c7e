#include "bristle/scene/json_locator.hpp"

#include <algorithm>
#include <unordered_set>

namespace bristle {
namespace {

/// Reads the text left to right, counting lines.
class Cursor {
 public:
  explicit Cursor(std::string_view text) : text_(text) {
    // nlohmann/json accepts (and skips) a UTF-8 byte order mark; so do we.
    if (text_.substr(0, 3) == "\xEF\xBB\xBF") pos_ = 3;
  }

  int line() const { return line_; }
  bool at_end() const { return pos_ >= text_.size(); }
  char peek() const { return text_[pos_]; }
  void advance() {
    if (text_[pos_] == '\n') ++line_;
    ++pos_;
  }

  /// Skips JSON whitespace; false at the end of the text.
  bool skip_whitespace() {
    while (!at_end() && (peek() == ' ' || peek() == '\t' || peek() == '\n' || peek() == '\r'))
      advance();
    return !at_end();
  }

  /// Consumes `c` if it is next (after whitespace).
  bool consume(char c) {
    if (!skip_whitespace() || peek() != c) return false;
    advance();
    return true;
  }

  /// Skips a string, number or literal; false if there was none.
  bool skip_scalar() {
    if (peek() == '"') {
      std::string ignored;
      return read_string(ignored);
    }
    const std::size_t start = pos_;
    while (!at_end() && !is_delimiter(peek())) advance();
    return pos_ > start;
  }

  /// Reads a string literal at the cursor into `out`, decoding escapes (keys must match
  /// what nlohmann/json decoded, or their pointers would differ).
  bool read_string(std::string& out) {
    if (at_end() || peek() != '"') return false;
    advance();
    while (!at_end()) {
      const char c = peek();
      advance();
      if (c == '"') return true;
      if (c != '\\') {
        out += c;
        continue;
      }
      if (at_end()) return false;
      const char e = peek();
      advance();
      switch (e) {
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u':
          if (!read_unicode_escape(out)) return false;
          break;
        default: out += e; break;  // '"', '\\', '/'
      }
    }
    return false;
  }

 private:
  static bool is_delimiter(char c) {
    return c == ',' || c == ']' || c == '}' || c == ' ' || c == '\t' || c == '\n' || c == '\r';
  }

  bool read_hex4(unsigned& code) {
    code = 0;
    for (int k = 0; k < 4; ++k) {
      if (at_end()) return false;
      const char c = peek();
      advance();
      code <<= 4;
      if (c >= '0' && c <= '9') code |= static_cast<unsigned>(c - '0');
      else if (c >= 'a' && c <= 'f') code |= static_cast<unsigned>(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F') code |= static_cast<unsigned>(c - 'A' + 10);
      else return false;
    }
    return true;
  }

  // After "\u": one code unit, or a surrogate pair "\uD8xx\uDCxx", appended as UTF-8.
  bool read_unicode_escape(std::string& out) {
    unsigned code = 0;
    if (!read_hex4(code)) return false;
    if (code >= 0xD800 && code <= 0xDBFF) {
      unsigned low = 0;
      if (at_end() || peek() != '\\') return false;
      advance();
      if (at_end() || peek() != 'u') return false;
      advance();
      if (!read_hex4(low) || low < 0xDC00 || low > 0xDFFF) return false;
      code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
    }
    append_utf8(out, code);
    return true;
  }

  static void append_utf8(std::string& out, unsigned code) {
    if (code < 0x80) {
      out += static_cast<char>(code);
    } else if (code < 0x800) {
      out += static_cast<char>(0xC0 | (code >> 6));
      out += static_cast<char>(0x80 | (code & 0x3F));
    } else if (code < 0x10000) {
      out += static_cast<char>(0xE0 | (code >> 12));
      out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (code & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (code >> 18));
      out += static_cast<char>(0x80 | ((code >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (code & 0x3F));
    }
  }

  std::string_view text_;
  std::size_t pos_ = 0;
  int line_ = 1;
};

/// An object or array being read.
struct Container {
  std::size_t pointer_length = 0;        // its pointer is the scan's path up to here
  int line = 0;
  bool is_object = false;
  std::size_t count = 0;                 // elements or members begun so far
  std::unordered_set<std::string> keys;  // objects: keys seen so far
};

/// Values nested deeper than this are not recorded; line_of() answers for them with their
/// deepest recorded ancestor. Without a cap, text nested n deep would need O(n^2) memory
/// (n pointers of length up to 2n); scenes nest fewer than ten levels.
constexpr std::size_t kMaxRecordedDepth = 64;

}  // namespace

std::string pointer_append(const std::string& pointer, const std::string& key) {
  std::string out = pointer + "/";
  for (char c : key) {
    if (c == '~') out += "~0";
    else if (c == '/') out += "~1";
    else out += c;
  }
  return out;
}

std::string pointer_append(const std::string& pointer, std::size_t index) {
  return pointer + "/" + std::to_string(index);
}

// The scan is iterative, with an explicit stack of open containers, so that deeply nested
// input (which nlohmann/json accepts) cannot overflow the call stack. One path string holds
// the pointer of the value about to be read; each open container remembers only how long its
// own pointer is, so memory stays linear in the nesting depth.
JsonLocator::JsonLocator(std::string_view text) {
  Cursor cursor(text);
  std::vector<Container> open;
  std::string path;  // pointer of the value about to be read

  // Moves the cursor to the start of the next member or element of `c` and sets `path`.
  auto begin_next_child = [&](Container& c) {
    path.resize(c.pointer_length);
    if (!c.is_object) {
      path += '/';
      path += std::to_string(c.count++);
      return true;
    }
    std::string key;
    if (!cursor.skip_whitespace() || !cursor.read_string(key) || !cursor.consume(':')) return false;
    path += pointer_append("", key);
    if (!c.keys.insert(key).second) duplicate_keys_.push_back(path);
    ++c.count;
    return true;
  };

  while (cursor.skip_whitespace()) {
    // A value starts here.
    const char c = cursor.peek();
    const bool is_container = c == '{' || c == '[';
    const bool inline_scalar =
        !is_container && !open.empty() && !open.back().is_object && cursor.line() == open.back().line;
    if (!inline_scalar && open.size() <= kMaxRecordedDepth) lines_[path] = cursor.line();

    if (is_container) {
      const int line = cursor.line();
      cursor.advance();
      open.push_back(Container{path.size(), line, c == '{', 0, {}});
      if (!cursor.skip_whitespace()) return;
      if (cursor.peek() != (c == '{' ? '}' : ']')) {
        if (!begin_next_child(open.back())) return;
        continue;
      }
      cursor.advance();  // an empty container is a complete value
      open.pop_back();
    } else if (!cursor.skip_scalar()) {
      return;
    }

    // A value ended: close finished containers, then move on to the next sibling.
    bool next_value = false;
    while (!open.empty() && !next_value) {
      if (!cursor.skip_whitespace()) return;
      const char d = cursor.peek();
      if (d == ',') {
        cursor.advance();
        if (!begin_next_child(open.back())) return;
        next_value = true;
      } else if (d == (open.back().is_object ? '}' : ']')) {
        cursor.advance();
        open.pop_back();
      } else {
        return;  // malformed: stop with what we know
      }
    }
    if (!next_value) return;  // the root value is complete
  }
}

int JsonLocator::line_of(const std::string& pointer) const {
  std::string p = pointer;
  for (;;) {
    const auto it = lines_.find(p);
    if (it != lines_.end()) return it->second;
    if (p.empty()) return 0;
    const std::size_t slash = p.rfind('/');
    p.erase(slash == std::string::npos ? 0 : slash);
  }
}

TextPosition text_position(std::string_view text, std::size_t offset) {
  offset = std::min(offset, text.size());
  TextPosition position;
  std::size_t line_start = 0;
  for (std::size_t i = 0; i < offset; ++i) {
    if (text[i] == '\n') {
      ++position.line;
      line_start = i + 1;
    }
  }
  position.column = static_cast<int>(offset - line_start) + 1;
  return position;
}

}  // namespace bristle

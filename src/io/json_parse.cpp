#include "bristle/io/json_parse.hpp"

#include <vector>

namespace bristle {
namespace {

/// The JSON pointer of the value the parser is reading, kept up to date from the parser's
/// callback events, so that a failure anywhere (a syntax error, an overflowing number, a
/// container too deep) can be reported at a pointer and not only at a byte offset.
class PointerTracker {
 public:
  /// The pointer of the next value to be read at the current position.
  std::string next_pointer() const {
    std::string out;
    for (std::size_t k = 1; k < open_.size(); ++k) out += "/" + escape(open_[k].token);  // [0]: the document
    if (!open_.empty()) out += "/" + escape(child_token());
    return out;
  }

  int depth() const { return static_cast<int>(open_.size()); }

  void open(bool is_object) {
    const std::string token = open_.empty() ? std::string() : child_token();
    if (!open_.empty() && !open_.back().is_object) ++open_.back().next_index;
    open_.push_back(Level{token, is_object, 0, {}});
  }
  void close() {
    if (!open_.empty()) open_.pop_back();
  }
  void key(const std::string& key) {
    if (!open_.empty()) open_.back().key = key;
  }
  void scalar() {
    if (!open_.empty() && !open_.back().is_object) ++open_.back().next_index;
  }

 private:
  struct Level {
    std::string token;  // how its parent names it ("" for the document)
    bool is_object = false;
    std::size_t next_index = 0;  // arrays: index of the next element
    std::string key;             // objects: the key last read
  };

  std::string child_token() const {
    const Level& top = open_.back();
    return top.is_object ? top.key : std::to_string(top.next_index);
  }

  // RFC 6901: '~' and '/' in a reference token are written "~0" and "~1".
  static std::string escape(const std::string& token) {
    std::string out;
    for (char c : token) {
      if (c == '~') out += "~0";
      else if (c == '/') out += "~1";
      else out += c;
    }
    return out;
  }

  // The root level's token is unused; the tracker's own depth is bounded by kMaxJsonDepth.
  std::vector<Level> open_;
};

struct TooDeep {
  std::string pointer;
};

// nlohmann's what() reads "[json.exception.parse_error.101] parse error at line 3, column 1:
// syntax error while parsing ..."; callers report their own position, so keep the reason.
std::string reason_of(const std::string& what) {
  const std::size_t colon = what.find(": ");
  std::string reason = colon == std::string::npos ? what : what.substr(colon + 2);
  // Without a position, the text is "[json.exception.out_of_range.406] number overflow ...".
  if (colon == std::string::npos && !reason.empty() && reason[0] == '[') {
    const std::size_t close = reason.find("] ");
    if (close != std::string::npos) reason = reason.substr(close + 2);
  }
  // A quoted token in the reason is user text: a 20 MB number must not become a 20 MB message.
  constexpr std::size_t kLongest = 200;
  if (reason.size() > kLongest) reason = reason.substr(0, kLongest) + "...";
  return reason;
}

}  // namespace

nlohmann::json parse_json_bounded(const std::string& text) {
  using Event = nlohmann::json::parse_event_t;
  PointerTracker tracker;
  // The callback sees every event before the value is stored; throwing from it stops the
  // parse before a container deeper than the limit is entered.
  const nlohmann::json::parser_callback_t callback = [&tracker](int, Event event, nlohmann::json& parsed) {
    switch (event) {
      case Event::object_start:
      case Event::array_start:
        if (tracker.depth() >= kMaxJsonDepth) throw TooDeep{tracker.next_pointer()};
        tracker.open(event == Event::object_start);
        break;
      case Event::object_end:
      case Event::array_end:
        tracker.close();
        break;
      case Event::key:
        tracker.key(parsed.get<std::string>());
        break;
      case Event::value:
        tracker.scalar();
        break;
    }
    return true;
  };
  try {
    return nlohmann::json::parse(text, callback);
  } catch (const TooDeep& deep) {
    throw JsonParseError(deep.pointer,
                         "nested deeper than " + std::to_string(kMaxJsonDepth) +
                             " arrays and objects (the limit, docs/limits.md)");
  } catch (const nlohmann::json::parse_error& error) {
    // error.byte is 1-based; the pointer is where the parser was, the byte where it stopped.
    throw JsonParseError(tracker.next_pointer(), reason_of(error.what()), true, error.byte > 0 ? error.byte - 1 : 0);
  } catch (const nlohmann::json::exception& error) {
    // A number beyond a double's range ("number overflow parsing '1e400'") and the like.
    throw JsonParseError(tracker.next_pointer(), reason_of(error.what()));
  }
}

}  // namespace bristle

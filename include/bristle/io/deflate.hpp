#pragma once
/// Raw DEFLATE (RFC 1951) through zlib, as a zip archive stores a member with method 8
/// (PKWARE APPNOTE.TXT 4.4.5): no zlib or gzip wrapper and no checksum of its own, the zip
/// entry carries the CRC-32. numpy.savez_compressed writes its members this way.

#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>

namespace bristle {

/// A damaged DEFLATE stream, or zlib out of memory: what is wrong.
class DeflateError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The raw DEFLATE stream of `data` at zlib level `level` (1 fastest ... 9 smallest). The same
/// bytes and level give the same stream (with the same zlib).
std::string deflate_raw(std::string_view data, int level);

/// Inflates a raw DEFLATE stream in steps whose output the caller bounds, so that a reader can
/// inflate an .npy header, learn from it how large the array is, and only then make room for
/// the rest: a small stream claiming gigabytes (a "zip bomb") costs no more than its header says.
class Inflater {
 public:
  /// `packed` must outlive the inflater.
  explicit Inflater(std::string_view packed);
  ~Inflater();
  Inflater(const Inflater&) = delete;
  Inflater& operator=(const Inflater&) = delete;

  /// Inflates onto the end of `out` until it holds `size` bytes or the stream ends, whichever
  /// comes first (check out.size()). `out` grows with the output, at most doubling, so memory
  /// follows what the stream really holds, not `size`. Throws DeflateError on a damaged stream, or one that runs
  /// past the end of `packed` without its end marker.
  void inflate_to(std::string& out, std::size_t size);
  /// True once the stream's end marker has been read.
  bool finished() const { return finished_; }

 private:
  struct Stream;
  std::unique_ptr<Stream> stream_;
  bool finished_ = false;
};

}  // namespace bristle

#include "bristle/io/deflate.hpp"

#include <zlib.h>

#include <algorithm>
#include <limits>

namespace bristle {

namespace {

// Negative window bits ask zlib for raw DEFLATE, without the zlib header and Adler-32
// trailer (zlib's manual, deflateInit2); 15 is the largest window, the one zip writers use.
constexpr int kRawWindowBits = -15;
constexpr int kMemLevel = 8;  // zlib's default
// zlib counts in uInt; feed it in pieces that fit.
constexpr std::size_t kChunk = std::numeric_limits<uInt>::max() / 2;
constexpr std::size_t kFirstRoom = 64 * 1024;  // bytes

std::string zlib_message(const z_stream& stream, int code) {
  return stream.msg ? stream.msg : "zlib error " + std::to_string(code);
}

}  // namespace

std::string deflate_raw(std::string_view data, int level) {
  z_stream stream{};
  int code = deflateInit2(&stream, level, Z_DEFLATED, kRawWindowBits, kMemLevel, Z_DEFAULT_STRATEGY);
  if (code != Z_OK) throw DeflateError("cannot start deflate: " + zlib_message(stream, code));
  std::string out;
  out.resize(deflateBound(&stream, static_cast<uLong>(data.size())));
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  std::size_t in_left = data.size(), out_left = out.size();
  do {
    const std::size_t in_now = std::min(in_left, kChunk), out_now = std::min(out_left, kChunk);
    stream.avail_in = static_cast<uInt>(in_now);
    stream.avail_out = static_cast<uInt>(out_now);
    code = deflate(&stream, in_now == in_left ? Z_FINISH : Z_NO_FLUSH);
    in_left -= in_now - stream.avail_in;
    out_left -= out_now - stream.avail_out;
  } while (code == Z_OK || (code == Z_BUF_ERROR && out_left > 0));
  deflateEnd(&stream);
  // deflateBound is an upper bound for a one-call Z_FINISH, so the stream always ends here.
  if (code != Z_STREAM_END) throw DeflateError("deflate failed: " + zlib_message(stream, code));
  out.resize(out.size() - out_left);
  return out;
}

struct Inflater::Stream {
  z_stream z{};
  std::string_view packed;
  std::size_t in_left = 0;
};

Inflater::Inflater(std::string_view packed) : stream_(std::make_unique<Stream>()) {
  stream_->packed = packed;
  stream_->in_left = packed.size();
  stream_->z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(packed.data()));
  const int code = inflateInit2(&stream_->z, kRawWindowBits);
  if (code != Z_OK) throw DeflateError("cannot start inflate: " + zlib_message(stream_->z, code));
}

Inflater::~Inflater() { inflateEnd(&stream_->z); }

void Inflater::inflate_to(std::string& out, std::size_t size) {
  z_stream& z = stream_->z;
  while (!finished_ && out.size() < size) {
    const std::size_t had = out.size();
    // Room grows with what has been inflated (at most doubling), not with what was asked
    // for: a short stream claiming gigabytes never gets them allocated.
    const std::size_t room = std::min({size - had, std::max<std::size_t>(had, kFirstRoom), kChunk});
    const std::size_t out_now = room, in_now = std::min(stream_->in_left, kChunk);
    out.resize(had + out_now);
    z.next_out = reinterpret_cast<Bytef*>(out.data() + had);
    z.avail_out = static_cast<uInt>(out_now);
    z.avail_in = static_cast<uInt>(in_now);
    const int code = inflate(&z, Z_NO_FLUSH);
    stream_->in_left -= in_now - z.avail_in;
    out.resize(had + (out_now - z.avail_out));
    if (code == Z_STREAM_END) {
      finished_ = true;
    } else if (code == Z_BUF_ERROR) {
      // No progress possible although there is room to write: the input ran out before the
      // end marker. (Z_OK always means progress, so the loop ends.)
      throw DeflateError("the DEFLATE stream ends without its end marker (truncated?)");
    } else if (code != Z_OK) {
      throw DeflateError("damaged DEFLATE stream: " + zlib_message(z, code));
    }
  }
}

}  // namespace bristle

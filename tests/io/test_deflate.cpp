// Raw DEFLATE through zlib (io/deflate.hpp): round trip, output bounded by the caller, damaged
// and truncated streams refused.

#include <doctest/doctest.h>

#include <random>
#include <string>

#include "bristle/io/deflate.hpp"

using namespace bristle;

namespace {

std::string sample(std::size_t size) {
  std::mt19937_64 random(5);
  std::string text;
  for (std::size_t i = 0; i < size; ++i) text.push_back(static_cast<char>(random() % 7 == 0 ? random() : 'a' + i % 3));
  return text;
}

std::string inflate_all(const std::string& packed, std::size_t limit) {
  Inflater inflater(packed);
  std::string out;
  inflater.inflate_to(out, limit);
  return out;
}

}  // namespace

TEST_CASE("deflate round trip at levels 1, 6 and 9, empty input too") {
  for (int level : {1, 6, 9}) {
    CAPTURE(level);
    for (const std::string& data : {std::string(), sample(100000)}) {
      const std::string packed = deflate_raw(data, level);
      if (!data.empty()) CHECK(packed.size() < data.size());
      Inflater inflater(packed);
      std::string out;
      inflater.inflate_to(out, data.size() + 10);
      CHECK(inflater.finished());
      CHECK(out == data);
      CHECK(deflate_raw(data, level) == packed);  // same input, same stream
    }
  }
}

TEST_CASE("inflate stops at the size the caller asks for, and continues from there") {
  const std::string data = sample(50000);
  const std::string packed = deflate_raw(data, 1);
  Inflater inflater(packed);
  std::string out;
  inflater.inflate_to(out, 12);
  CHECK(out == data.substr(0, 12));
  CHECK_FALSE(inflater.finished());
  inflater.inflate_to(out, 30000);
  CHECK(out == data.substr(0, 30000));
  inflater.inflate_to(out, data.size());
  CHECK(out == data);
}

TEST_CASE("inflate refuses damaged and truncated streams") {
  const std::string packed = deflate_raw(sample(50000), 1);
  SUBCASE("an invalid block type") {
    std::string bad = packed;
    bad[0] = static_cast<char>(bad[0] | 0x06);  // BTYPE = 11, reserved (RFC 1951, 3.2.3)
    CHECK_THROWS_WITH_AS(inflate_all(bad, 100000), doctest::Contains("damaged DEFLATE stream"), DeflateError);
  }
  SUBCASE("cut short") {
    CHECK_THROWS_WITH_AS(inflate_all(packed.substr(0, packed.size() / 2), 100000),
                         doctest::Contains("without its end marker"), DeflateError);
  }
  SUBCASE("nothing at all") {
    CHECK_THROWS_AS(inflate_all(std::string(), 10), DeflateError);
  }
}

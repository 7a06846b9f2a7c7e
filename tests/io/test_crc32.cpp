#include <doctest/doctest.h>

#include <random>
#include <string>

#include "bristle/io/crc32.hpp"

using namespace bristle;

namespace {

/// The byte-at-a-time definition (PKWARE APPNOTE 4.4.7), bit by bit: what the sliced tables
/// must reproduce.
std::uint32_t crc32_bitwise(const std::string& bytes) {
  std::uint32_t c = 0xFFFFFFFFu;
  for (const unsigned char byte : bytes) {
    c ^= byte;
    for (int bit = 0; bit < 8; ++bit) c = (c & 1u) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
  }
  return ~c;
}

}  // namespace

TEST_CASE("crc32 matches the published check values") {
  // The check value of CRC-32/ISO-HDLC (the zip CRC), and two more computed by zlib's crc32.
  CHECK(crc32("123456789", 9) == 0xCBF43926u);
  CHECK(crc32("", 0) == 0u);
  CHECK(crc32("The quick brown fox jumps over the lazy dog", 43) == 0x414FA339u);
}

TEST_CASE("crc32 equals the bitwise definition for every length and split") {
  std::mt19937 random(17);
  std::string bytes(1000, '\0');
  for (char& c : bytes) c = static_cast<char>(random() & 0xFF);
  for (std::size_t length : {1u, 7u, 8u, 9u, 15u, 16u, 17u, 63u, 64u, 999u, 1000u}) {
    CAPTURE(length);
    const std::string part = bytes.substr(0, length);
    const std::uint32_t expected = crc32_bitwise(part);
    CHECK(crc32(part.data(), part.size()) == expected);
    // In two pieces, continuing from the first piece's CRC.
    for (std::size_t split : {std::size_t(0), length / 3, length}) {
      const std::uint32_t first = crc32(part.data(), split);
      CHECK(crc32(part.data() + split, length - split, first) == expected);
    }
  }
}

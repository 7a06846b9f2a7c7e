#pragma once
/// CRC-32 as zip archives check their members (PKWARE APPNOTE.TXT 4.4.7; the same CRC as
/// ISO 3309 / ITU-T V.42 and zlib's crc32): reflected polynomial 0xEDB88320, initial value and
/// final XOR 0xFFFFFFFF. crc32("123456789") = 0xCBF43926.

#include <cstddef>
#include <cstdint>

namespace bristle {

/// The CRC-32 of `size` bytes at `data`, continuing from `crc` (the CRC of the bytes before
/// them; 0 to start), so a buffer can be checked in pieces.
std::uint32_t crc32(const void* data, std::size_t size, std::uint32_t crc = 0);

}  // namespace bristle

#include <doctest/doctest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "bristle/io/crc32.hpp"
#include "bristle/io/deflate.hpp"
#include "bristle/io/npy.hpp"
#include "bristle/io/npz.hpp"

using namespace bristle;

TEST_CASE("npy header is numpy's version 1.0 header, padded to 64 bytes") {
  const std::string header = npy_header(NpyType::Float64, {1100, 3});
  CHECK(header.size() % 64 == 0);
  CHECK(header.compare(0, 8, std::string("\x93NUMPY\x01\x00", 8)) == 0);
  CHECK(header.back() == '\n');
  // The dict as numpy 1.24 writes it (keys sorted, trailing ", "), then spaces.
  const std::string dict = "{'descr': '<f8', 'fortran_order': False, 'shape': (1100, 3), }";
  CHECK(header.compare(10, dict.size(), dict) == 0);
  CHECK(static_cast<std::size_t>(static_cast<unsigned char>(header[8]) | static_cast<unsigned char>(header[9]) << 8) ==
        header.size() - 10);
  CHECK(npy_shape_text({}) == "()");
  CHECK(npy_shape_text({5}) == "(5,)");
  CHECK(npy_header(NpyType::UInt8, {5}).find("'descr': '|u1'") != std::string::npos);
  CHECK(npy_header(NpyType::Int64, {}).find("'shape': ()") != std::string::npos);
}

TEST_CASE("npy parser reads numpy's headers and refuses what it cannot hold") {
  const double values[2] = {1.5, -0.0};
  const std::string data(reinterpret_cast<const char*>(values), sizeof values);
  SUBCASE("our own") {
    // The array views its bytes (NpyArray::data), so they must outlive it.
    const std::string bytes = npy_header(NpyType::Float64, {2}) + data;
    const NpyArray array = parse_npy(bytes);
    CHECK(array.type == NpyType::Float64);
    CHECK(array.shape == std::vector<std::int64_t>{2});
    CHECK(array.data == data);
  }
  auto with_dict = [&](const std::string& dict, char major = 1) {
    std::string header = std::string("\x93NUMPY", 6) + major + '\0';
    const std::size_t length = dict.size() + 1;
    header += static_cast<char>(length & 0xFF);
    header += static_cast<char>(length >> 8);
    if (major > 1) header += std::string(2, '\0');
    return header + dict + "\n" + data;
  };
  SUBCASE("another key order, spacing and version 2.0") {
    const std::string bytes = with_dict("{\"shape\":(2,),'fortran_order':False,'descr':'<f8'}", 2);
    const NpyArray array = parse_npy(bytes);
    CHECK(array.shape == std::vector<std::int64_t>{2});
  }
  SUBCASE("refusals say why") {
    auto refusal = [](const std::string& bytes) -> std::string {
      try {
        parse_npy(bytes);
      } catch (const NpyError& error) {
        return error.what();
      }
      return "";
    };
    CHECK(refusal("PK\x03\x04 not an array").find("no \\x93NUMPY magic") != std::string::npos);
    CHECK(refusal(with_dict("{'descr': '>f8', 'fortran_order': False, 'shape': (2,), }")).find("'>f8'") !=
          std::string::npos);
    CHECK(refusal(with_dict("{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }")).find("truncated") !=
          std::string::npos);
    CHECK(refusal(with_dict("{'descr': '<f8', 'fortran_order': True, 'shape': (1, 2), }")).empty());
    CHECK(refusal(with_dict("{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }")).find("not supported") !=
          std::string::npos);
    CHECK(refusal(with_dict("{'descr': '<f8', 'shape': (2,), }")).find("lacks") != std::string::npos);
    CHECK(refusal(with_dict("{'descr': '<f8', 'fortran_order': False, 'shape': (2,)")).find("malformed") !=
          std::string::npos);
    CHECK(refusal(with_dict("{'descr': '<f8', 'fortran_order': False, 'shape': (99999999999, 99999999999), }"))
              .find("too large") != std::string::npos);
    CHECK(refusal(std::string("\x93NUMPY\x01\x00\xff\xff{", 11)).find("truncated") != std::string::npos);
  }
}

namespace {

std::string two_array_archive() {
  NpzWriter writer;
  const double xs[6] = {0.1, 0.2, 0.3, 1e-300, -2.5, 7.0};
  writer.begin_array("positions", NpyType::Float64, {2, 3});
  writer.append(xs, 3 * sizeof(double));  // in pieces, as a frame appends rod after rod
  writer.append(xs + 3, 3 * sizeof(double));
  writer.end_array();
  const std::int64_t k = 42;
  writer.add_array("frame", NpyType::Int64, {}, &k, sizeof k);
  return writer.finish();
}

std::uint32_t crc32_of(const std::string& bytes) { return crc32(bytes.data(), bytes.size()); }

std::string refusal(const std::string& bytes) {
  try {
    read_npz(bytes);
  } catch (const NpyError& error) {
    return error.what();
  }
  return "";
}

}  // namespace

TEST_CASE("npz archive round trip") {
  const std::string bytes = two_array_archive();
  CHECK(bytes.compare(0, 4, "PK\x03\x04") == 0);
  // The same arrays make the same bytes (fixed dates): frames are reproducible.
  CHECK(two_array_archive() == bytes);
  const std::vector<NpzMember> members = read_npz(bytes);
  REQUIRE(members.size() == 2);
  CHECK(members[0].name == "positions");
  CHECK(members[0].array.shape == std::vector<std::int64_t>{2, 3});
  double x[6];
  std::memcpy(x, members[0].array.data.data(), sizeof x);
  CHECK(x[3] == 1e-300);
  CHECK(x[4] == -2.5);
  CHECK(members[1].name == "frame");
  CHECK(members[1].array.type == NpyType::Int64);
  CHECK(members[1].array.shape.empty());
}

TEST_CASE("npz writer refuses data that does not fill the shape") {
  NpzWriter writer;
  const double x = 1.0;
  writer.begin_array("a", NpyType::Float64, {2});
  writer.append(&x, sizeof x);
  CHECK_THROWS_AS(writer.end_array(), NpyError);
}

TEST_CASE("npz reader refuses damaged archives, saying what is wrong") {
  const std::string good = two_array_archive();
  SUBCASE("truncated anywhere") {
    for (std::size_t size : {std::size_t(0), std::size_t(10), good.size() / 2, good.size() - 1}) {
      CAPTURE(size);
      CHECK_FALSE(refusal(good.substr(0, size)).empty());
    }
  }
  SUBCASE("a flipped data byte fails the CRC") {
    std::string bad = good;
    bad[200] = static_cast<char>(bad[200] ^ 0x01);
    CHECK(refusal(bad).find("member positions.npy: CRC-32 mismatch") != std::string::npos);
  }
  SUBCASE("a member compressed with another method than deflate") {
    std::string bad = good;
    const std::size_t directory = bad.find("PK\x01\x02");
    bad[directory + 10] = 12;  // bzip2
    CHECK(refusal(bad).find("compressed with zip method 12") != std::string::npos);
  }
  SUBCASE("not a zip") { CHECK(refusal(std::string(100, 'x')).find("not a zip archive") != std::string::npos); }
}

// Deflated members (zip method 8, numpy.savez_compressed's layout).

namespace {

/// Random float64 values whose high bytes repeat (as frames' do), so deflate has something
/// to find; and random bytes.
std::string deflated_archive(std::vector<double>& values, std::string& noise) {
  std::mt19937_64 random(17);
  std::uniform_real_distribution<double> uniform(0.0, 0.01);
  values.assign(3000, 0.0);
  for (double& v : values) v = uniform(random);
  values[7] = -0.0;
  values[8] = 4.9e-324;
  noise.clear();
  for (int i = 0; i < 4000; ++i) noise.push_back(static_cast<char>(random()));
  NpzWriter writer(1);
  writer.begin_array("positions", NpyType::Float64, {1000, 3});
  writer.append(values.data(), 1500 * sizeof(double));
  writer.append(values.data() + 1500, 1500 * sizeof(double));
  writer.end_array();
  writer.add_array("noise", NpyType::UInt8, {4000}, noise.data(), noise.size());
  return writer.finish();
}

/// A one-member archive around `packed` (deflated), its zip entry declaring `size` bytes and
/// `crc`: for damage that a writer would never make.
std::string one_member_zip(const std::string& name, const std::string& packed, std::uint32_t size, std::uint32_t crc) {
  auto put = [](std::string& out, std::uint32_t value, int bytes) {
    for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>(value >> (8 * i) & 0xFF));
  };
  std::string zip;
  put(zip, 0x04034b50, 4);
  for (std::uint32_t v : {20u, 0u, 8u, 0u, 0u}) put(zip, v, 2);
  put(zip, crc, 4);
  put(zip, static_cast<std::uint32_t>(packed.size()), 4);
  put(zip, size, 4);
  put(zip, static_cast<std::uint32_t>(name.size()), 2);
  put(zip, 0, 2);
  zip += name + packed;
  const std::size_t directory = zip.size();
  put(zip, 0x02014b50, 4);
  for (std::uint32_t v : {20u, 20u, 0u, 8u, 0u, 0u}) put(zip, v, 2);
  put(zip, crc, 4);
  put(zip, static_cast<std::uint32_t>(packed.size()), 4);
  put(zip, size, 4);
  put(zip, static_cast<std::uint32_t>(name.size()), 2);
  for (int i = 0; i < 4; ++i) put(zip, 0, 2);
  put(zip, 0, 4);
  put(zip, 0, 4);  // local header at 0
  zip += name;
  const std::size_t directory_size = zip.size() - directory;
  put(zip, 0x06054b50, 4);
  for (std::uint32_t v : {0u, 0u, 1u, 1u}) put(zip, v, 2);
  put(zip, static_cast<std::uint32_t>(directory_size), 4);
  put(zip, static_cast<std::uint32_t>(directory), 4);
  put(zip, 0, 2);
  return zip;
}

std::uint16_t central_method(const std::string& zip, const std::string& file_name) {
  const std::size_t entry = zip.rfind(file_name) - 46;
  return static_cast<std::uint16_t>(static_cast<unsigned char>(zip[entry + 10]) |
                                    static_cast<unsigned char>(zip[entry + 11]) << 8);
}

}  // namespace

TEST_CASE("npz deflated members round trip bit for bit") {
  std::vector<double> values;
  std::string noise;
  const std::string bytes = deflated_archive(values, noise);
  CHECK(central_method(bytes, "positions.npy") == 8);
  // Method 8 means deflate made the member smaller (the writer keeps it stored otherwise).
  std::vector<double> again;
  std::string noise_again;
  CHECK(deflated_archive(again, noise_again) == bytes);  // same arrays, same bytes

  const std::vector<NpzMember> members = read_npz(bytes);
  REQUIRE(members.size() == 2);
  CHECK(members[0].name == "positions");
  CHECK(static_cast<bool>(members[0].inflated));
  CHECK(members[0].array.shape == std::vector<std::int64_t>{1000, 3});
  REQUIRE(members[0].array.data.size() == values.size() * sizeof(double));
  CHECK(std::memcmp(members[0].array.data.data(), values.data(), members[0].array.data.size()) == 0);
  CHECK(members[1].array.data == noise);
}

TEST_CASE("npz reader refuses damaged deflated members, naming the member") {
  std::vector<double> values;
  std::string noise;
  const std::string good = deflated_archive(values, noise);
  const std::size_t data_at = 30 + std::string("positions.npy").size();
  SUBCASE("a damaged DEFLATE stream") {
    std::string bad = good;
    bad[data_at] = static_cast<char>(bad[data_at] | 0x06);  // reserved block type
    CHECK(refusal(bad).find("member positions.npy: damaged DEFLATE stream") != std::string::npos);
  }
  SUBCASE("a flipped bit inside the stream: a damaged stream or a CRC mismatch, never a wrong array") {
    int refused = 0;
    for (std::size_t at = data_at + 100; at < data_at + 2100; at += 20) {
      std::string bad = good;
      bad[at] = static_cast<char>(bad[at] ^ 0x10);
      refused += refusal(bad).find("member positions.npy: ") != std::string::npos ? 1 : 0;
    }
    CHECK(refused == 100);
  }
  const std::string npy = npy_header(NpyType::Float64, {1000, 3}) +
                          std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(double));
  const std::uint32_t size = static_cast<std::uint32_t>(npy.size()), crc = crc32_of(npy);
  SUBCASE("a hand-made archive reads") {
    CHECK(refusal(one_member_zip("a.npy", deflate_raw(npy, 6), size, crc)).empty());
  }
  SUBCASE("a CRC that does not match the inflated bytes") {
    CHECK(refusal(one_member_zip("a.npy", deflate_raw(npy, 6), size, crc ^ 1u)).find("member a.npy: CRC-32 mismatch") !=
          std::string::npos);
  }
  SUBCASE("a stream that inflates past what the .npy header declares (a zip bomb)") {
    const std::string bomb = npy + std::string(50000000, '\0');  // 50 MB of zeros, 50 kB packed
    const std::string packed = deflate_raw(bomb, 9);
    CHECK(packed.size() < 100000);
    CHECK(refusal(one_member_zip("a.npy", packed, size, crc)).find("member a.npy: inflates to more than") !=
          std::string::npos);
    // Declaring the bomb's size in the zip entry does not help: the .npy header must agree.
    CHECK(refusal(one_member_zip("a.npy", packed, static_cast<std::uint32_t>(bomb.size()), crc))
              .find("member a.npy: the .npy header declares " + std::to_string(npy.size()) + " bytes") !=
          std::string::npos);
  }
  SUBCASE("a short stream whose header and entry both claim 3.2 GB: refused, never allocated") {
    const std::string claim = npy_header(NpyType::Float64, {400000000}) + std::string(100, '\0');
    const std::uint32_t claimed = static_cast<std::uint32_t>(npy_header(NpyType::Float64, {400000000}).size() +
                                                             std::uint64_t(400000000) * 8);
    CHECK(refusal(one_member_zip("a.npy", deflate_raw(claim, 1), claimed, crc32_of(claim)))
              .find("member a.npy: inflates to 228 bytes, its .npy header declares 3200000128") != std::string::npos);
  }
  SUBCASE("a stream that ends before the declared size") {
    const std::string half = npy.substr(0, npy.size() / 2);
    CHECK(refusal(one_member_zip("a.npy", deflate_raw(half, 1), size, crc)).find("member a.npy: inflates to ") !=
          std::string::npos);
  }
  SUBCASE("a .npy header claiming megabytes") {
    std::string huge = std::string("\x93NUMPY\x02\x00", 8);
    for (std::uint32_t v = 50u << 20, i = 0; i < 4; ++i) huge.push_back(static_cast<char>(v >> (8 * i) & 0xFF));
    huge += std::string(1000, ' ');
    CHECK(refusal(one_member_zip("a.npy", deflate_raw(huge, 1), 60u << 20, crc32_of(huge)))
              .find("member a.npy: .npy header of 52428812 bytes declared") != std::string::npos);
  }
}

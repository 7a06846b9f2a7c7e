#include <doctest/doctest.h>

#include <cstring>
#include <string>
#include <vector>

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
    const NpyArray array = parse_npy(npy_header(NpyType::Float64, {2}) + data);
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
    const NpyArray array = parse_npy(with_dict("{\"shape\":(2,),'fortran_order':False,'descr':'<f8'}", 2));
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
  SUBCASE("a compressed member") {
    std::string bad = good;
    const std::size_t directory = bad.find("PK\x01\x02");
    bad[directory + 10] = 8;  // deflate
    CHECK(refusal(bad).find("compressed (zip method 8)") != std::string::npos);
  }
  SUBCASE("not a zip") { CHECK(refusal(std::string(100, 'x')).find("not a zip archive") != std::string::npos); }
}

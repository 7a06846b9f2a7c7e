#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>

#include <nlohmann/json.hpp>

#include "bristle/io/json_text.hpp"

namespace {

std::uint64_t bits(double x) {
  std::uint64_t b;
  std::memcpy(&b, &x, sizeof b);
  return b;
}

// Exact, bit for bit (tells 0.0 from -0.0).
void check_round_trip(double x) {
  const std::string text = bristle::format_double(x);
  CAPTURE(text);
  CHECK(bits(std::strtod(text.c_str(), nullptr)) == bits(x));
  CHECK(bits(nlohmann::json::parse(text).get<double>()) == bits(x));
  CHECK(nlohmann::json::parse(text).is_number_float());
}

}  // namespace

TEST_CASE("io format_double reads back to the same double") {
  SUBCASE("special values") {
    for (double x : {0.0, -0.0, 1.0, -1.0, 0.1, 1.0 / 3.0, 2.0 / 3.0, 1e-300, 4.9e-324, 2.2250738585072014e-308,
                     1.7976931348623157e308, 123456789012345678.0, 0.30000000000000004, 1e21, 1e-7, 9.81})
      check_round_trip(x);
  }
  SUBCASE("random bit patterns") {
    std::mt19937_64 random(12345);
    for (int i = 0; i < 20000; ++i) {
      double x;
      const std::uint64_t b = random();
      std::memcpy(&x, &b, sizeof x);
      if (!std::isfinite(x)) continue;
      check_round_trip(x);
    }
  }
  SUBCASE("random values of a simulation's size") {
    std::mt19937_64 random(7);
    std::uniform_real_distribution<double> uniform(-0.1, 0.1);
    for (int i = 0; i < 20000; ++i) check_round_trip(uniform(random));
  }
  SUBCASE("always a floating-point literal") {
    CHECK(bristle::format_double(1.0) == "1.0");
    CHECK(bristle::format_double(-0.0) == "-0.0");
    CHECK(bristle::format_double(0.5) == "0.5");
    CHECK(bristle::format_double(std::numeric_limits<double>::quiet_NaN()) == "null");
    CHECK(bristle::format_double(std::numeric_limits<double>::infinity()) == "null");
  }
}

TEST_CASE("io pretty_json puts number arrays on one line") {
  nlohmann::ordered_json json;
  json["frame"] = 3;
  json["positions"] = {{0.0, 1.5}, {2.0, -0.25}};
  json["name"] = "a \"quoted\" name";
  json["empty"] = nlohmann::ordered_json::array();
  const std::string text = bristle::pretty_json(json);
  CHECK(text ==
        "{\n"
        " \"frame\": 3,\n"
        " \"positions\": [\n"
        "  [0.0, 1.5],\n"
        "  [2.0, -0.25]\n"
        " ],\n"
        " \"name\": \"a \\\"quoted\\\" name\",\n"
        " \"empty\": []\n"
        "}");
  CHECK(nlohmann::ordered_json::parse(text) == json);
}

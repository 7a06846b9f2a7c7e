#include <string>

#include <doctest/doctest.h>

#include "bristle/scene/json_value.hpp"
#include "bristle/scene/scene_error.hpp"

using namespace bristle;

namespace {

// A document with its source, so that JsonValues can be read from it.
struct Document {
  explicit Document(const std::string& text)
      : json(nlohmann::json::parse(text)), source("doc.json", JsonLocator(text)) {}
  JsonValue at(const std::string& pointer) const {
    return JsonValue(source, json.at(nlohmann::json::json_pointer(pointer)), pointer);
  }
  nlohmann::json json;
  JsonSource source;
};

template <typename F>
SceneError error_of(F&& read) {
  try {
    read();
  } catch (const SceneError& e) {
    return e;
  }
  FAIL("expected a SceneError");
  return SceneError("", "", 0, "");
}

}  // namespace

TEST_CASE("scene: JsonValue typed reads accept what they promise") {
  const Document doc(R"({"n": -2.5, "p": 3, "i": 4.0, "big": 18446744073709551615,
                         "s": "hi", "v2": [1, 2], "v3": [1, 2, 3], "zero": [0, 0, 0],
                         "tiny": [5e-324, 0, 0], "huge": [1e300, 1e300, 0]})");
  CHECK(doc.at("/n").number() == -2.5);
  CHECK(doc.at("/p").positive_number() == 3.0);
  CHECK(doc.at("/p").non_negative_number() == 3.0);
  CHECK(doc.at("/i").integer() == 4);  // an integral float is an integer
  CHECK(doc.at("/p").int_in(1, 3) == 3);
  CHECK(doc.at("/s").string() == "hi");
  CHECK(doc.at("/s").choice({"hi", "ho"}) == "hi");
  CHECK(doc.at("/v2").vector(2) == Vec3(1, 2, 0));
  CHECK(doc.at("/v3").vector(3) == Vec3(1, 2, 3));
  CHECK((doc.at("/v3").direction(3) - Vec3(1, 2, 3).normalized()).norm() < 1e-15);
  // Directions whose squared length under- or overflows a double (found by tools/fuzz_scenes.py).
  CHECK(doc.at("/tiny").direction(3) == Vec3(1, 0, 0));
  CHECK((doc.at("/huge").direction(3) - Vec3(1, 1, 0).normalized()).norm() < 1e-15);
  CHECK(doc.at("/v3").elements("an array").size() == 3);
}

TEST_CASE("scene: JsonValue errors name the pointer, the line, what was expected and found") {
  const Document doc("{\"n\": -2.5,\n \"s\": \"hi\",\n \"v\": [1, \"x\", 3],\n \"f\": 2.5, \"zero\": [0, 0],\n"
                     " \"big\": 18446744073709551615}");
  SceneError e = error_of([&] { doc.at("/n").positive_number(); });
  CHECK(e.pointer() == "/n");
  CHECK(e.line() == 1);
  CHECK(e.message() == "expected a positive number, found -2.5");

  e = error_of([&] { doc.at("/s").number(); });
  CHECK(e.line() == 2);
  CHECK(e.message() == "expected a number, found \"hi\"");

  e = error_of([&] { doc.at("/s").choice({"ho", "high"}); });
  CHECK(e.message() == "expected \"ho\" or \"high\", found \"hi\"; did you mean \"ho\"?");

  e = error_of([&] { doc.at("/v").vector(3); });
  CHECK(e.pointer() == "/v/1");
  CHECK(e.line() == 3);
  CHECK(e.message() == "expected a number, found \"x\"");

  e = error_of([&] { doc.at("/v").vector(2); });
  CHECK(e.pointer() == "/v");
  CHECK(e.message().find("a vector of 2 numbers") != std::string::npos);
  CHECK(e.message().find("3 components") != std::string::npos);

  e = error_of([&] { doc.at("/f").int_in(1, 5); });
  CHECK(e.message() == "expected an integer in [1, 5], found 2.5");
  e = error_of([&] { doc.at("/big").integer(); });
  CHECK(e.message().find("expected an integer") == 0);
  e = error_of([&] { doc.at("/zero").direction(2); });
  CHECK(e.message() == "expected a non-zero direction vector, found [0,0]");
}

TEST_CASE("scene: ObjectReader refuses unknown keys with a suggestion, and reports missing keys") {
  const Document doc("{\"m\": {\"density\": 1,\n \"youngs_modulu\": 2}, \"e\": {\"zzz\": 1}, \"k\": {}}");
  SceneError e = error_of([&] { doc.at("/m").object({"density", "radius", "youngs_modulus"}); });
  CHECK(e.pointer() == "/m/youngs_modulu");
  CHECK(e.line() == 2);
  CHECK(e.message() == "unknown key \"youngs_modulu\"; did you mean \"youngs_modulus\"?");

  e = error_of([&] { doc.at("/e").object({"density", "radius"}); });
  CHECK(e.message() == "unknown key \"zzz\"; expected \"density\" or \"radius\"");

  const ObjectReader reader = doc.at("/k").object({"dt"});
  CHECK(!reader.has("dt"));
  CHECK(!reader.find("dt"));
  CHECK(reader.find_or_empty_object("dt").json().empty());
  CHECK(reader.find_or_empty_object("dt").pointer() == "/k/dt");
  e = error_of([&] { reader.require("dt"); });
  CHECK(e.pointer() == "/k/dt");
  CHECK(e.line() == 2);  // an absent key takes the line of its object "/k"
  CHECK(e.message() == "missing required key \"dt\"");

  e = error_of([&] { doc.at("/m/density").object({}); });
  CHECK(e.message() == "expected an object, found 1");
}

TEST_CASE("scene: describe_json keeps long values short") {
  CHECK(describe_json(nlohmann::json(-5)) == "-5");
  CHECK(describe_json(nlohmann::json::array({1, 2})) == "[1,2]");
  CHECK(describe_json(nlohmann::json(std::vector<int>(100, 1))) == "an array of 100 elements");
  CHECK(describe_json(nlohmann::json(std::string(100, 'a'))).size() <= 48);
}

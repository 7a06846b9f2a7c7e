#include <doctest/doctest.h>

#include "bristle/scene/suggest.hpp"

using namespace bristle;

TEST_CASE("scene: edit distance counts insertions, deletions, substitutions and swaps") {
  CHECK(edit_distance("", "") == 0);
  CHECK(edit_distance("abc", "") == 3);
  CHECK(edit_distance("density", "density") == 0);
  CHECK(edit_distance("Density", "density") == 0);  // case is ignored
  CHECK(edit_distance("desnity", "density") == 1);  // a swap of neighbours
  CHECK(edit_distance("youngs_modulu", "youngs_modulus") == 1);
  CHECK(edit_distance("radious", "radius") == 1);
  CHECK(edit_distance("kitten", "sitting") == 3);
}

TEST_CASE("scene: closest_match suggests only plausible typos") {
  const std::vector<std::string> keys = {"density", "radius", "youngs_modulus"};
  CHECK(closest_match("youngs_modulu", keys) == std::optional<std::string>("youngs_modulus"));
  CHECK(closest_match("desnity", keys) == std::optional<std::string>("density"));
  CHECK(closest_match("colour", keys) == std::nullopt);
  CHECK(closest_match("E", keys) == std::nullopt);
  CHECK(did_you_mean("radiu", keys) == "; did you mean \"radius\"?");
  CHECK(did_you_mean("poisson", keys).empty());
}

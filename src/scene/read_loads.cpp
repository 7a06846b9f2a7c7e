// Reader of `loads`: point forces on named rods' vertices, optionally ramped in.

#include <string>

#include "bristle/scene/scene_blocks.hpp"
#include "bristle/scene/suggest.hpp"

namespace bristle {
namespace {

int read_load_rod(const JsonValue& value, const Model& model) {
  const std::string name = value.name();
  const int rod = model.rod_index(name);
  if (rod >= 0) return rod;
  std::vector<std::string> names;
  for (const Rod& r : model.rods) names.push_back(r.name);
  value.fail("no rod is named " + quoted_text(name) + did_you_mean(name, names));
}

int read_load_vertex(const JsonValue& value, const Rod& rod) {
  const std::int64_t vertex = value.integer();
  if (vertex < 0 || vertex >= rod.vertex_count())
    value.fail_expected("a vertex index in [0, " + std::to_string(rod.vertex_count() - 1) +
                        "] (rod \"" + rod.name + "\" has " + std::to_string(rod.vertex_count()) +
                        " vertices)");
  // A fixed vertex never moves, so a force on it would be silently ignored.
  if (rod.is_fixed(static_cast<int>(vertex)))
    value.fail("vertex " + std::to_string(vertex) + " of rod \"" + rod.name +
               "\" is fixed: a load on it would have no effect");
  return static_cast<int>(vertex);
}

}  // namespace

ReadResult<std::vector<PointLoad>> read_loads(const JsonValue& value, const Model& model) {
  ReadResult<std::vector<PointLoad>> result{{}, nlohmann::json::array()};
  for (const JsonValue& entry : value.elements("an array of loads")) {
    const ObjectReader reader = entry.object({"rod", "vertex", "force", "ramp"});
    PointLoad load;
    load.rod = read_load_rod(reader.require("rod"), model);
    load.vertex = read_load_vertex(reader.require("vertex"), model.rods[load.rod]);
    load.force = reader.require("force").vector(model.dimension);
    if (const auto ramp = reader.find("ramp")) load.ramp = ramp->non_negative_number();
    result.value.push_back(load);
    result.expanded.push_back({{"rod", model.rods[load.rod].name},
                               {"vertex", load.vertex},
                               {"force", vector_json(load.force, model.dimension)},
                               {"ramp", load.ramp}});
  }
  return result;
}

}  // namespace bristle

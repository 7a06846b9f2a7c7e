// Readers of materials: the named table `materials` and single material objects (named or
// inline in a rod).

#include "bristle/scene/scene_blocks.hpp"

namespace bristle {

ReadResult<Material> read_material(const JsonValue& value) {
  const ObjectReader reader = value.object({"density", "radius", "youngs_modulus"});
  Material material;
  material.density = reader.require("density").positive_number();
  material.radius = reader.require("radius").positive_number();
  material.youngs_modulus = reader.require("youngs_modulus").positive_number();
  const nlohmann::json expanded = {{"density", material.density},
                                   {"radius", material.radius},
                                   {"youngs_modulus", material.youngs_modulus}};
  return {material, expanded};
}

ReadResult<MaterialTable> read_materials(const JsonValue& value) {
  if (!value.is_object()) value.fail_expected("an object of named materials");
  ReadResult<MaterialTable> result{{}, nlohmann::json::object()};
  for (const auto& [name, member] : value.json().items()) {
    const JsonValue entry(value.source(), member, pointer_append(value.pointer(), name));
    if (name.empty()) entry.fail("a material needs a non-empty name");
    auto material = read_material(entry);
    result.value[name] = material.value;
    result.expanded[name] = material.expanded;
  }
  return result;
}

}  // namespace bristle

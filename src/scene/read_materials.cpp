// Readers of materials: the named table `materials` and single material objects (named or
// inline in a rod).

#include <cmath>

#include "bristle/scene/scene_blocks.hpp"

namespace bristle {

ReadResult<Material> read_material(const JsonValue& value) {
  const ObjectReader reader =
      value.object({"density", "radius", "youngs_modulus", "shear_modulus", "poissons_ratio"});
  Material material;
  material.density = reader.require("density").positive_number();
  material.radius = reader.require("radius").positive_number();
  material.youngs_modulus = reader.require("youngs_modulus").positive_number();
  nlohmann::json expanded = {{"density", material.density},
                             {"radius", material.radius},
                             {"youngs_modulus", material.youngs_modulus}};
  // What resists twist (rods with twist): G directly, or from Poisson's ratio,
  // G = E / (2 (1 + nu)); neither: nu = 0.5. Recorded only when given, as G, so the expanded
  // scenes of materials without them stay as they were.
  if (reader.has("shear_modulus") && reader.has("poissons_ratio"))
    reader.fail_at("poissons_ratio", "give either \"shear_modulus\" or \"poissons_ratio\", not both");
  if (const auto g = reader.find("shear_modulus")) material.shear_modulus = g->positive_number();
  if (const auto nu = reader.find("poissons_ratio")) {
    // -1 < nu <= 0.5 for an isotropic solid; G must be positive and finite.
    const double ratio = nu->number();
    if (!(ratio > -1.0 && ratio <= 0.5)) nu->fail_expected("a number in (-1, 0.5]");
    material.shear_modulus = material.youngs_modulus / (2.0 * (1.0 + ratio));
    if (!std::isfinite(material.shear_modulus))
      nu->fail("the shear modulus E / (2 (1 + nu)) overflows a double");
  }
  if (material.shear_modulus > 0.0) expanded["shear_modulus"] = material.shear_modulus;
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

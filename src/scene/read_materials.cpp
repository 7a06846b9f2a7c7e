// Readers of materials: the named table `materials` and single material objects (named or
// inline in a rod).

#include <cmath>

#include "bristle/scene/scene_blocks.hpp"

namespace bristle {

namespace {

// `cross_section`: {"type": "circle", "radius"}, {"type": "ellipse", "a", "b"} (semi-axes) or
// {"type": "rectangle", "width", "thickness"}; the first size lies along the material director
// m1 (docs/physics.md, "Cross-sections").
ReadResult<CrossSection> read_cross_section(const JsonValue& value) {
  if (!value.is_object()) value.fail_expected("a cross-section object (\"type\": \"circle\", \"ellipse\" or \"rectangle\")");
  const ObjectReader peek = value.object({"type", "radius", "a", "b", "width", "thickness"});
  const std::string type = peek.require("type").choice({"circle", "ellipse", "rectangle"});
  CrossSection section;
  nlohmann::json expanded = {{"type", type}};
  if (type == "circle") {
    const ObjectReader reader = value.object({"type", "radius"});
    section = CrossSection::circle(reader.require("radius").positive_number());
    expanded["radius"] = section.size1;
  } else if (type == "ellipse") {
    const ObjectReader reader = value.object({"type", "a", "b"});
    section = CrossSection::ellipse(reader.require("a").positive_number(), reader.require("b").positive_number());
    expanded["a"] = section.size1;
    expanded["b"] = section.size2;
  } else {
    const ObjectReader reader = value.object({"type", "width", "thickness"});
    section = CrossSection::rectangle(reader.require("width").positive_number(),
                                      reader.require("thickness").positive_number());
    expanded["width"] = section.size1;
    expanded["thickness"] = section.size2;
  }
  return {section, expanded};
}

}  // namespace

ReadResult<Material> read_material(const JsonValue& value) {
  const ObjectReader reader =
      value.object({"density", "radius", "cross_section", "youngs_modulus", "shear_modulus", "poissons_ratio"});
  Material material;
  material.density = reader.require("density").positive_number();
  // The section: a circle of `radius`, or a `cross_section`; exactly one of the two.
  if (reader.has("radius") && reader.has("cross_section"))
    reader.fail_at("cross_section", "give either \"radius\" or \"cross_section\", not both");
  if (!reader.has("radius") && !reader.has("cross_section"))
    reader.fail_at("radius", "missing required key \"radius\" (or \"cross_section\")");
  nlohmann::json expanded = {{"density", material.density}};
  if (const auto section = reader.find("cross_section")) {
    const auto read = read_cross_section(*section);
    material.set_cross_section(read.value);
    expanded["cross_section"] = read.expanded;
  } else {
    material.radius = reader.require("radius").positive_number();
    expanded["radius"] = material.radius;
  }
  material.youngs_modulus = reader.require("youngs_modulus").positive_number();
  expanded["youngs_modulus"] = material.youngs_modulus;
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

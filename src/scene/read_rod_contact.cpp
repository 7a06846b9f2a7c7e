// Reader of `rod_contact`: whether the surfaces of rods (capsules of each rod's radius) keep
// out of each other, with what friction, and whether a rod meets itself
// (docs/scene-format.md, "rod_contact"; the method: docs/contact.md, "Rod-rod contact").

#include "bristle/scene/scene_blocks.hpp"

namespace bristle {

ReadResult<RodContactSettings> read_rod_contact(const JsonValue& value) {
  RodContactSettings settings;
  if (value.json().is_boolean()) {
    // The shorthand "rod_contact": true | false is {"enabled": true | false}.
    settings.enabled = value.boolean();
  } else {
    if (!value.is_object()) value.fail_expected("true, false or an object with \"enabled\", \"friction\", \"self\" and \"method\"");
    const ObjectReader reader = value.object({"enabled", "friction", "self", "method"});
    if (const auto enabled = reader.find("enabled")) settings.enabled = enabled->boolean();
    if (const auto friction = reader.find("friction")) settings.friction = friction->non_negative_number();
    if (const auto self = reader.find("self")) settings.self = self->boolean();
    if (const auto method = reader.find("method"))
      settings.method = method->choice({"barrier", "constraints"}) == "constraints" ? RodContactMethod::Constraints
                                                                                   : RodContactMethod::Barrier;
  }
  const nlohmann::json expanded = {
      {"enabled", settings.enabled},
      {"friction", settings.friction},
      {"self", settings.self},
      {"method", settings.method == RodContactMethod::Constraints ? "constraints" : "barrier"}};
  return {settings, expanded};
}

}  // namespace bristle

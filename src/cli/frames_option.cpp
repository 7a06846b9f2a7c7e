#include "bristle/cli/frames_option.hpp"

namespace bristle::cli {

FrameLayout frames_option(const ParsedArgs& parsed) {
  const auto value = parsed.value("--frames");
  if (!value || *value == "json") return FrameLayout::Json;
  if (*value == "binary" || *value == "npz") return FrameLayout::Npz;
  throw UsageError("--frames expects json or binary, found '" + *value + "'");
}

const char* frames_option_value(FrameLayout layout) { return layout == FrameLayout::Npz ? "binary" : "json"; }

}  // namespace bristle::cli

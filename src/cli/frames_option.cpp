#include "bristle/cli/frames_option.hpp"

namespace bristle::cli {

FramesChoice frames_option(const ParsedArgs& parsed) {
  const auto value = parsed.value("--frames");
  if (!value || *value == "json") return {FrameLayout::Json, NpzCompression::Stored};
  if (*value == "binary" || *value == "npz") return {FrameLayout::Npz, NpzCompression::Stored};
  if (*value == "compressed") return {FrameLayout::Npz, NpzCompression::Deflated};
  throw UsageError("--frames expects json, binary or compressed, found '" + *value + "'");
}

const char* frames_option_value(const FramesChoice& choice) {
  if (choice.layout == FrameLayout::Json) return "json";
  return choice.compression == NpzCompression::Deflated ? "compressed" : "binary";
}

}  // namespace bristle::cli

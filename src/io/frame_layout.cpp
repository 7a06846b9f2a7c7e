#include "bristle/io/frame_layout.hpp"

#include <cstdio>
#include <cstring>

namespace bristle {

const char* frame_layout_name(FrameLayout layout) { return layout == FrameLayout::Npz ? "npz" : "json"; }

std::optional<FrameLayout> frame_layout_from_name(const std::string& name) {
  if (name == "json") return FrameLayout::Json;
  if (name == "npz") return FrameLayout::Npz;
  return std::nullopt;
}

const char* frame_file_extension(FrameLayout layout) { return layout == FrameLayout::Npz ? ".npz" : ".json"; }

std::string frame_file_name(int index, FrameLayout layout) {
  char buffer[40];
  std::snprintf(buffer, sizeof(buffer), "frames/%06d%s", index, frame_file_extension(layout));
  return buffer;
}

bool is_frame_file_name(const std::string& name, FrameLayout layout) {
  const std::string prefix = "frames/", suffix = frame_file_extension(layout);
  if (name.size() < prefix.size() + 6 + suffix.size() || name.size() > prefix.size() + 10 + suffix.size()) return false;
  if (name.compare(0, prefix.size(), prefix) != 0) return false;
  if (name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0) return false;
  for (std::size_t i = prefix.size(); i < name.size() - suffix.size(); ++i)
    if (name[i] < '0' || name[i] > '9') return false;
  return true;
}

}  // namespace bristle

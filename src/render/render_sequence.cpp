#include "bristle/render/render_sequence.hpp"

#include <cstdio>

#include "bristle/render/render_frame.hpp"

namespace bristle {

Bounds sequence_bounds(const Manifest& manifest, int frame_count, const FrameLoader& load) {
  Bounds b;
  for (int k = 0; k < frame_count; ++k) b.extend(frame_bounds(manifest, load(k)));
  return b;
}

std::string frame_image_name(int k) {
  char name[32];
  std::snprintf(name, sizeof name, "%06d.png", k);
  return name;
}

void render_sequence(const Manifest& manifest, int frame_count, const FrameLoader& load,
                     const RenderSetup& setup, const std::string& out_dir,
                     const std::function<void(int)>& progress) {
  for (int k = 0; k < frame_count; ++k) {
    render_frame(manifest, load(k), setup.colliders, setup.camera, setup.options,
                 out_dir + "/" + frame_image_name(k));
    if (progress) progress(k);
  }
}

}  // namespace bristle

#include "bristle/export/export_colliders.hpp"

#include <algorithm>
#include <cmath>

#include "bristle/io/output_error.hpp"
#include "bristle/scene/load_scene.hpp"
#include "bristle/scene/scene_error.hpp"

namespace bristle {

bool ExportColliders::any_moves() const {
  return std::any_of(handle_of.begin(), handle_of.end(), [](int h) { return h >= 0; });
}

RigidTransform ExportColliders::pose(std::size_t i, double time) const {
  if (!moves(i)) return RigidTransform{};
  return handles[static_cast<std::size_t>(handle_of[i])].pose(time);
}

ExportColliders export_colliders(const nlohmann::json& scene, const std::string& manifest_path) {
  ExportColliders out;
  // Most scenes have no colliders: they need not be loaded again (a large scene's rods take
  // a noticeable time to build).
  if (!scene.is_object()) return out;
  const auto list = scene.find("colliders");
  if (list == scene.end() || (list->is_array() && list->empty())) return out;

  // The loader is the one place that knows what a collider and a handle are (defaults,
  // brushes named by their entry, handles naming colliders by index); reading the recorded
  // scene with it gives exactly the geometry that was simulated.
  Scene loaded;
  try {
    loaded = load_scene_from_string(scene.dump(), manifest_path);
  } catch (const SceneError& error) {
    // Its line numbers would count lines of the re-serialised text: name the pointer only.
    throw OutputError(manifest_path, "/scene" + error.pointer() + ": the recorded scene does not load: " +
                                         error.message());
  }
  out.rest = loaded.model.colliders;
  out.handles = loaded.handles;
  out.handle_of.assign(out.rest.size(), -1);
  for (std::size_t c = 0; c < out.rest.size(); ++c) {
    const std::string& name = out.rest[c].handle;
    if (name.empty()) continue;
    for (std::size_t h = 0; h < out.handles.size(); ++h)
      if (out.handles[h].name == name) out.handle_of[c] = static_cast<int>(h);
  }
  return out;
}

void fit_planes(ExportColliders& colliders, const Vec3& lo, const Vec3& hi) {
  if (!(lo.array() <= hi.array()).all()) return;
  const Vec3 focus = 0.5 * (lo + hi);
  const double half_size = std::max((hi - lo).norm(), 1e-3);
  // Coordinates near the largest doubles (which `bristle run` accepts) overflow the diagonal:
  // keep the defaults rather than write a square of infinite size.
  if (!focus.allFinite() || !std::isfinite(half_size)) return;
  colliders.focus = focus;
  colliders.plane_half_size = half_size;
}

void extend_rod_box(const Frame& frame, Vec3& lo, Vec3& hi) {
  for (const RodFrame& rod : frame.rods) {
    for (const Vec3& p : rod.positions) {
      lo = lo.cwiseMin(p);
      hi = hi.cwiseMax(p);
    }
  }
}

}  // namespace bristle

#pragma once
/// The colliders of an output folder's scene, for the exporters: each collider as the scene
/// built it (its rest geometry), the handle that moves it, and the square an infinite plane is
/// cut to so that a file can hold it.
///
/// A handled collider's pose at time t is its handle's P(t) applied to the rest geometry
/// (model/handle.hpp), which is where the simulation had it when it wrote the frame at t
/// (HandleDriver::place at the start, prepare_step before each step). So frame k exports the
/// colliders at pose(frame.time) and nothing has to be stored in the frames.

#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bristle/io/frame.hpp"
#include "bristle/math/types.hpp"
#include "bristle/model/collider.hpp"
#include "bristle/model/handle.hpp"

namespace bristle {

struct ExportColliders {
  std::vector<Collider> rest;  ///< as the scene loader built them, before any handle moved them
  std::vector<Handle> handles;
  std::vector<int> handle_of;  ///< per collider: index into `handles`, -1 when it never moves
  /// Planes are exported as a square of half size `plane_half_size` [m] centred on the
  /// projection of `focus` [m] onto the (rest) plane; fit_planes() sets both from the rods.
  Vec3 focus = Vec3::Zero();
  double plane_half_size = 1.0;

  std::size_t size() const { return rest.size(); }
  bool empty() const { return rest.empty(); }
  bool moves(std::size_t i) const { return handle_of[i] >= 0; }
  /// True when at least one collider follows a handle.
  bool any_moves() const;
  /// The rigid map from collider i's rest geometry to its geometry at `time` [s] (the
  /// identity for a collider no handle moves).
  RigidTransform pose(std::size_t i, double time) const;
};

/// The colliders and handles of `scene` (a manifest's "scene": the scene as loaded, which
/// `bristle run` wrote and the scene loader reads back the same), built by the scene loader
/// itself so that the exported geometry is the simulated one. A scene without colliders is
/// not loaded at all. Throws OutputError naming `manifest_path` and the JSON pointer
/// (/scene/...) when the recorded scene does not load.
ExportColliders export_colliders(const nlohmann::json& scene, const std::string& manifest_path);

/// Sets `focus` to the centre of the box [lo, hi] that the rods occupy over the frames and
/// `plane_half_size` to the box's diagonal (at least 1 mm), so a plane is drawn under every
/// rod with room around it. An empty box (lo > hi), or one too large for a finite diagonal,
/// leaves the defaults.
void fit_planes(ExportColliders& colliders, const Vec3& lo, const Vec3& hi);

/// The box [lo, hi] of the rods' vertices (centre lines) in `frame`, merged into lo, hi.
void extend_rod_box(const Frame& frame, Vec3& lo, Vec3& hi);

}  // namespace bristle

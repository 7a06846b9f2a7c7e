#pragma once
/// The readers of a scene's blocks, in src/scene/read_*.cpp (one file per topic). Each
/// validates its block, returns what it describes and returns the block with every default
/// filled in (and generators expanded) for Scene::expanded. load_scene.cpp calls them in
/// order; a new top-level block gets a reader here and a line there.

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bristle/model/handle.hpp"
#include "bristle/model/model.hpp"
#include "bristle/scene/json_value.hpp"
#include "bristle/scene/limits.hpp"
#include "bristle/scene/scene.hpp"

namespace bristle {

template <typename T>
struct ReadResult {
  T value;
  nlohmann::json expanded;
};

/// `time`: dt, frame_dt, duration; frame_dt a whole multiple of dt, a sane frame count.
ReadResult<TimeSettings> read_time(const JsonValue& value);

struct SolverBlock {
  SolverSettings settings;
  SolverMode mode = SolverMode::Dynamic;
};
/// `solver`: cg_tolerance, cg_max_iterations, newton_iterations, mode.
ReadResult<SolverBlock> read_solver(const JsonValue& value);

struct Damping {
  double mass = 0.0;       ///< [1/s]
  double stiffness = 0.0;  ///< [s]
};
/// `damping`: Rayleigh coefficients, >= 0.
ReadResult<Damping> read_damping(const JsonValue& value);

/// One material object {density, radius, youngs_modulus}, all > 0.
ReadResult<Material> read_material(const JsonValue& value);

using MaterialTable = std::map<std::string, Material>;
/// `materials`: name -> material.
ReadResult<MaterialTable> read_materials(const JsonValue& value);

/// A rod as the scene describes it, before make_rod.
struct RodSpec {
  std::string name;
  Material material;
  std::vector<Vec3> vertices;  ///< [m], z = 0 in 2D
  std::vector<int> fixed;
  RestShape rest = RestShape::Initial;
  /// Accepted input worth a message ("file:line: pointer: text"), e.g. a pose target out of reach.
  std::vector<std::string> warnings;
  std::string pointer;           ///< the `rods` entry it comes from ("/rods/3")
  std::string material_pointer;  ///< where its material is defined ("/materials/nylon")
  bool twist = false;                    ///< Rod::twist
  Vec3 material_normal = Vec3::Zero();   ///< Rod::material_normal
  double rest_twist = 0.0;               ///< Rod::rest_twist [rad/m]
  Rod::TwistEnd twist_root = Rod::TwistEnd::Default;  ///< Rod::twist_root
  Rod::TwistEnd twist_tip = Rod::TwistEnd::Default;   ///< Rod::twist_tip
};

/// Refuses a built model whose derived quantities overflow although every number in the
/// scene is finite (density 1e300 with gravity 1e300): vertex masses, stretch and bending
/// stiffnesses, gravity forces and the initial gravity and load energies must be finite.
/// The error names the key responsible: the material's density or Young's modulus, the
/// gravity, or the load. `rods` are the specs the model's rods were made from, in order.
void check_model_finite(const Model& model, const std::vector<RodSpec>& rods, const JsonSource& source);

/// Refuses, at /rod_contact, a scene whose rod-contact barrier (the default method) would have
/// a stiffness, sized to its rods' weights, or an energy near a touching pair that overflows a
/// double. Called once model.rod_contact is read.
void check_rod_contact_finite(const Model& model, const JsonSource& source);

/// Refuses handles whose pose at t = 0, at a key within the run or at its end puts one of
/// their rods' vertices or one of their colliders at a non-finite position (finite numbers that
/// overflow together: a pivot of -1.7e308 with a quarter turn), or that place a rod at t = 0
/// where its edges round to zero length or frame 0's gravity or load energy overflows. The error
/// names the handle's entry. For dynamic runs (a static solve ignores handles).
void check_handles_finite(const Model& model, const std::vector<Handle>& handles, double duration,
                          const JsonSource& source);

/// `rods`: every entry validated, generators expanded (a brush entry becomes many rods),
/// names unique. `expanded` lists every resulting rod with explicit vertices.
ReadResult<std::vector<RodSpec>> read_rods(const JsonValue& value, int dimension,
                                           const MaterialTable& materials);

/// The rods one `generator` object makes: one for "straight", one per bristle for "brush".
struct GeneratorOutput {
  std::vector<std::vector<Vec3>> rods;
  bool is_brush = false;
};
/// `rods[i].generator`. `bristle_radius` is the rod material's radius (a brush refuses
/// bristles that would overlap at the roots).
GeneratorOutput read_generator(const JsonValue& value, int dimension, double bristle_radius);

/// What a `pose` makes of a 3-vertex rod.
struct PoseResult {
  std::vector<Vec3> vertices;  ///< root unchanged, middle and tip placed [m]
  nlohmann::json expanded;     ///< the pose with its defaults filled in
  std::string warning;         ///< "" or why the target was not reached
};
/// `rods[i].pose` (src/scene/read_pose.cpp): {"target", "bend" (2D, +1 or -1, default +1)} or
/// {"target", "normal" (3D, default the given vertices' bending plane)} on a rod of exactly 3
/// vertices; the bone lengths are those of `vertices`.
PoseResult read_pose(const JsonValue& value, const std::vector<Vec3>& vertices, int dimension);

/// `loads`: point forces on named rods' free vertices.
ReadResult<std::vector<PointLoad>> read_loads(const JsonValue& value, const Model& model);

/// `colliders`: planes, spheres, capsules and boxes.
ReadResult<std::vector<Collider>> read_colliders(const JsonValue& value, int dimension);

/// `rod_contact` (src/scene/read_rod_contact.cpp): {"enabled" (default false), "friction"
/// (>= 0, default 0), "self" (default true)}, or the shorthand true | false for {"enabled": b}.
/// Allowed in 2D and 3D.
ReadResult<RodContactSettings> read_rod_contact(const JsonValue& value);

/// `render`: how `bristle render` draws the frames (docs/rendering.md). Validated like every
/// block; returned with vectors in the scene's dimension and directions normalised, nothing
/// defaulted (the renderer fits what is missing to the frames).
nlohmann::json read_render(const JsonValue& value, int dimension);

/// `handles`: keyframed rigid motions of named rods' fixed vertices and of colliders (by
/// index); sets the `handle` of every collider a handle moves. After the rods and colliders.
ReadResult<std::vector<Handle>> read_handles(const JsonValue& value, Model& model);

/// A vector as JSON with `dimension` components.
nlohmann::json vector_json(const Vec3& v, int dimension);

}  // namespace bristle

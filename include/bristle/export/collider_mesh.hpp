#pragma once
/// Colliders as triangle meshes, for the formats that have no primitive shapes (OBJ, VTK), and
/// the local frame each collider is built in (USD's primitives are placed with it).
///
/// Every shape is built in a local frame (collider_placement) and then placed:
///   sphere   a UV sphere of kSphereSegments longitudes and kSphereRings latitude bands about
///            local z, centred at the origin (placed at the centre);
///   capsule  a cylinder from z = -h/2 to h/2 (h = |b - a|) closed by two hemispheres, built
///            like the sphere (placed at (a + b) / 2, local z along b - a);
///   box      the 8 corners (+-hx, +-hy, +-hz) and 12 triangles (placed by its rotation at its
///            centre); a zero half extent (a 2D box's z) gives one flat rectangle, not two;
///   plane    a square of half size s in local xy (placed with local z along the normal, its
///            centre the projection of ExportColliders::focus onto the plane).
/// Triangles turn counter-clockwise seen from outside (from the side the normal points to,
/// for a plane), so normals computed by any reader point out of the obstacle. A sphere or
/// capsule of radius 0 (a point or segment obstacle, which `bristle run` accepts) has no
/// surface and gives an empty mesh.

#include <array>
#include <vector>

#include "bristle/export/export_colliders.hpp"
#include "bristle/math/types.hpp"
#include "bristle/model/collider.hpp"
#include "bristle/model/handle.hpp"

namespace bristle {

inline constexpr int kSphereSegments = 32;  ///< longitudes of a sphere or capsule mesh
inline constexpr int kSphereRings = 16;     ///< latitude bands of a sphere (even: capsules split it)

struct TriangleMesh {
  std::vector<Vec3> vertices;              ///< [m]
  std::vector<std::array<int, 3>> triangles;  ///< 0-based vertex indices
};

/// The rigid map from a collider's local frame (above) to the world, at rest. A box's half
/// extents and a plane's square are not part of it (they are in the local mesh).
RigidTransform collider_placement(const Collider& c, const ExportColliders& region);

/// The collider's mesh in its local frame.
TriangleMesh collider_local_mesh(const Collider& c, const ExportColliders& region);

/// Collider i of `colliders` as a world-space mesh at `time` [s]: the local mesh, placed,
/// then moved by the collider's handle.
TriangleMesh collider_mesh_at(const ExportColliders& colliders, std::size_t i, double time);

/// "plane", "sphere", "capsule" or "box".
const char* collider_type_name(ColliderType type);

}  // namespace bristle

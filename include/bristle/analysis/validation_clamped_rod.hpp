#pragma once
/// What a validation scene means to the continuum theory: a single straight rod, clamped by
/// its first two vertices, loaded by gravity and/or one point force on its tip.
///
/// Where the clamp is. Holding vertices 0 and 1 fixes the first edge, so the discrete rod
/// leaves the clamp along that edge; its bending energy starts at vertex 1, whose Voronoi
/// region begins at the first edge's midpoint. The continuum rod it converges to is therefore
/// clamped at that midpoint, with length L = (N - 1/2) h for N equal edges of length h
/// (physics-notes.md, "Discretisation that converges to the continuum rod"). Measuring L from
/// vertex 0 instead leaves an O(1/N) error in the tip (about 10% at N = 10); from the midpoint
/// the error falls like 1/N^2, which case 5 of the suite measures.
///
/// The dimensionless numbers are computed from the scene's own values, never assumed:
///
///   Gamma = rho A |g| L^3 / (E I)   (gravito-bending number),
///   alpha = |P| L^2 / (E I)         (tip-load parameter).

#include <stdexcept>
#include <string>

#include "bristle/math/types.hpp"
#include "bristle/model/model.hpp"

namespace bristle {

/// A scene that is not the validation case it is used for (the message says why). The
/// `bristle verify` command reports it as bad input (exit code 2).
class ValidationError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct ClampedRod {
  int segments = 0;             ///< N, the number of edges
  int tip = 0;                  ///< index of the free end's vertex (N)
  Vec3 clamp = Vec3::Zero();    ///< effective clamp: the first edge's midpoint [m]
  Vec3 axis = Vec3::UnitX();    ///< unit direction of the rod at the clamp
  double h = 0.0;               ///< edge length [m]
  double length = 0.0;          ///< L = (N - 1/2) h, measured from the clamp [m]
  double bending_stiffness = 0.0;  ///< E I [N m^2]
  double linear_density = 0.0;  ///< rho A [kg/m]
  double gravity = 0.0;         ///< |g| [m/s^2]
  Vec3 tip_force = Vec3::Zero();  ///< the point load on the tip, fully applied [N]
  double gamma = 0.0;           ///< rho A |g| L^3 / (E I)
  double alpha = 0.0;           ///< |P| L^2 / (E I)
};

/// Reads the clamped rod out of a (finalized) model. Throws ValidationError unless the model
/// has exactly one rod, straight (vertices on one line, zero rest angles) with equal edges
/// (relative spread below 1e-9), vertices 0 and 1 and no other fixed, at most one load, on the
/// tip vertex, and no colliders.
ClampedRod describe_clamped_rod(const Model& model);

/// The same rod with `segments` equal edges: the same clamp point, axis, length L, material,
/// gravity and tip load (moved to the new tip). Vertex i sits at clamp + (i - 1/2) h axis,
/// h = L / (segments - 1/2). segments >= 2.
Model resample_clamped_rod(const Model& model, const ClampedRod& rod, int segments);

/// The model with gravity rescaled so that its gravito-bending number is `gamma` (> 0; the
/// model must have gravity).
Model with_gravito_bending_number(const Model& model, const ClampedRod& rod, double gamma);

/// A vertex position relative to the clamp, in units of L.
Vec3 relative_to_clamp(const Model& model, const VecX& positions, const ClampedRod& rod, int vertex);

}  // namespace bristle

#pragma once
/// Contacts between rod vertices and colliders as constraint rows, for rod contact as
/// constraints (RodContactMethod::Constraints): the colliders' contacts join the rods' in one
/// Coulomb impulse solve (contact/rod_contact_rows.hpp, coulomb_solver.hpp) instead of the
/// active-set solver (contact_solver.hpp). docs/contact.md, "Colliders as constraints".
///
/// A free vertex x of a rod of radius r near collider c gives one row: weights (1, 0, 0, 0) on
/// the vertex, the normal n = grad d_c at x and the gap d_c(x) - r, d_c the collider's signed
/// distance (signed_distance.hpp) in its pose at the step's end, where the model holds it (the
/// handle driver moves it before the step; its step's motion is x -> R x + T from the start's
/// pose). The end-of-step gap is then d_c(x1) - r, linearised about a Newton iterate like the
/// segment pairs' rows; the slip is measured against the velocity of the surface point at x,
/// which was at R^T (x - T) at the start: (x - R^T (x - T)) / h. In 2D a box's z extent is
/// taken as unbounded (as the active-set solver takes it).

#include <vector>

#include "bristle/contact/rod_contact_rows.hpp"
#include "bristle/math/types.hpp"
#include "bristle/model/model.hpp"

namespace bristle {

/// The rows of every free vertex that comes within its path's length (plus half its radius)
/// of a collider's surface at x_from or x_to (both finite, all DOFs), vertex by vertex in the
/// layout's order, colliders in the model's order. Frames are left for
/// linearise_collider_rows.
std::vector<RodContactRow> collider_contact_rows(const Model& model, const VecX& x_from, const VecX& x_to);

/// Each row's frame about x = x^ + h v_lin (v_lin null: about x^), as RodContact::linearise_rows
/// does for pairs: gap = d_end(x) - r - h n . v_lin, the collider's friction, and the surface's
/// tangential velocity in velocity_offset.
void linearise_collider_rows(const Model& model, std::vector<RodContactRow>& rows, const VecX& x, const VecX* v_lin,
                             double h);

/// How far vertex x (radius r) is inside collider c at the step's end: max(0, r - d_c(x)).
double collider_penetration(const Collider& collider, const Vec3& x, double radius, int dimension);

}  // namespace bristle

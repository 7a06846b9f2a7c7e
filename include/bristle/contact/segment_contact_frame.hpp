#pragma once
/// The linearised contact between the capsules of two rod segments: the three rows (normal,
/// two tangents) of a rod-rod contact constraint, the first building block of rod-rod
/// contacts as constraints (docs/contact.md, "A plan for the pressed brush: rod-rod contacts
/// as constraints").
///
/// Segment P runs p0 -> p1 with radius r_p, Q runs q0 -> q1 with radius r_q; the closest
/// points are P(s) and Q(t) (contact/segment_distance.hpp). The gap and the relative velocity
/// at the contact are
///
///   g = |P(s) - Q(t)| - (r_p + r_q),     u = [n t1 t2]^T sum_k w_k v_k,
///   w = (1 - s, s, -(1 - t), -t)  for the vertices (p0, p1, q0, q1),
///
/// n the unit normal from Q(t) to P(s). Where the closest points are unique, grad_k g = w_k n
/// (the minimiser's own variation does not count: it is stationary, or on a bound of its
/// square; the envelope theorem, derived in docs/contact.md, "Distance between segments"), so
/// the normal row is the gap's gradient and g + h u_n is the gap after a velocity change over
/// the step h, to first order.

#include "bristle/math/types.hpp"

namespace bristle {

struct SegmentContactFrame {
  double gap = 0.0;  ///< surface distance |P(s) - Q(t)| - (r_p + r_q) [m]; negative: overlap
  double s = 0.0, t = 0.0;  ///< the closest points' parameters on P and Q
  Vec3 normal = Vec3::UnitX();    ///< unit, from Q(t) to P(s)
  Vec3 tangent1 = Vec3::UnitY();  ///< (normal, tangent1, tangent2) is orthonormal, right-handed
  Vec3 tangent2 = Vec3::UnitZ();
  Vec4 weights = Vec4::Zero();  ///< (1 - s, s, -(1 - t), -t): the vertices' share of u
};

/// The contact frame of segments p0-p1 (radius radius_p) and q0-q1 (radius radius_q), in
/// `dimension` 3 or 2 (points in the xy plane, z = 0; the normal and tangent1 then lie in it).
/// Where the axes touch (distance 0) the normal is not defined by the points: in 3D it is then
/// perpendicular to both axes, on the side of `fallback_normal` (the caller's last normal of
/// the pair, or the direction between the segments at the step's start), and for parallel
/// axes that touch, `fallback_normal`'s part across P; in 2D it is the in-plane direction
/// across P on the fallback's side. Inputs finite.
SegmentContactFrame segment_contact_frame(const Vec3& p0, const Vec3& p1, const Vec3& q0, const Vec3& q1,
                                          double radius_p, double radius_q, const Vec3& fallback_normal,
                                          int dimension = 3);

/// Two unit tangents completing the unit `normal` to a right-handed orthonormal frame, chosen
/// from the normal alone (the same normal gives the same bits). For a normal in the xy plane
/// (2D scenes) tangent1 lies in the plane and tangent2 is -z.
void tangent_basis(const Vec3& normal, Vec3& tangent1, Vec3& tangent2);

}  // namespace bristle

#pragma once
/// Contact shadow: how much of the sky a rod segment hides from a point of a collider's
/// surface, so a bristle lying on the paper darkens the paper around it.
///
/// The ambient light reaching a surface point p with unit normal n from a uniform sky is
/// scaled by 1 - F, F the cosine-weighted fraction of the hemisphere that rods cover (the
/// configuration factor of radiative transfer). For a cylinder of radius r whose axis passes
/// at distance d from p, seen across its axis it covers the angles [phi0 - alpha, phi0 + alpha]
/// of the cross-section, alpha = asin(r / d), phi0 the angle between n and the direction to the
/// axis; along its axis it covers [u_a, u_b] (the segment's ends relative to the foot of the
/// perpendicular from p). The configuration factor from a differential area to an infinitely
/// long object parallel to it, seen between the cross-section angles phi1 < phi2 from the
/// normal, is (sin phi2 - sin phi1) / 2 (the two-dimensional factors of Howell, Menguc and
/// Siegel, "Thermal Radiation Heat Transfer"); we take the segment's share of its line by the
/// same law along the axis,
///     F_seg = (sin phi2 - sin phi1) / 2 * (u_b / sqrt(u_b^2 + d^2) - u_a / sqrt(u_a^2 + d^2)) / 2,
/// with the cross-section angles clipped to the visible hemisphere [-pi/2, pi/2]. The axial
/// shares of consecutive segments of one rod add up to the whole line's, so the result does
/// not depend on how a rod is cut into segments. The product separates what the exact factor
/// does not, so it is an approximation, exact for a long rod parallel to the surface and good
/// to a few per cent of the sky for tilted ones; it is a depth cue, not a radiometric result.
/// Several rods combine as 1 - prod(1 - F_i): each hides part of what the others leave.

#include "bristle/math/types.hpp"

namespace bristle {

/// F_seg above for the segment [a, b] of radius r [m] seen from p with unit normal n; in
/// [0, 1]; 1 when p lies inside the segment's tube.
double segment_occlusion(const Vec3& p, const Vec3& n, const Vec3& a, const Vec3& b, double radius);

}  // namespace bristle

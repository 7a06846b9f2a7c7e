// The rows of a rod-rod contact constraint (contact/segment_contact_frame.hpp): the normal row
// is the gradient of the surface gap (central differences, random pairs in 3D and in a plane,
// skew, nearly parallel and nearly folded), the frame is orthonormal and right-handed, and
// the normal is defined where the axes touch.

#include <cmath>
#include <random>

#include <doctest/doctest.h>

#include "bristle/contact/segment_contact_frame.hpp"

using namespace bristle;

namespace {

using Stencil = Mat<3, 4>;  // columns p0, p1, q0, q1

double gap_of(const Stencil& x, double rp, double rq) {
  return segment_contact_frame(x.col(0), x.col(1), x.col(2), x.col(3), rp, rq, Vec3::UnitZ()).gap;
}

void check_frame(const SegmentContactFrame& f) {
  CHECK(f.normal.norm() == doctest::Approx(1.0).epsilon(1e-12));
  CHECK(f.tangent1.norm() == doctest::Approx(1.0).epsilon(1e-12));
  CHECK(f.tangent2.norm() == doctest::Approx(1.0).epsilon(1e-12));
  CHECK(std::abs(f.normal.dot(f.tangent1)) < 1e-12);
  CHECK(std::abs(f.normal.dot(f.tangent2)) < 1e-12);
  CHECK(std::abs(f.tangent1.dot(f.tangent2)) < 1e-12);
  CHECK(f.normal.cross(f.tangent1).dot(f.tangent2) == doctest::Approx(1.0).epsilon(1e-12));
}

/// Checks grad_k gap = w_k n against central differences on every coordinate the pair has
/// (3, or 2 in a plane), where the closest points are unique and away from a change of kind.
void check_gradient(const Stencil& x, double rp, double rq, int dimension) {
  const SegmentContactFrame f =
      segment_contact_frame(x.col(0), x.col(1), x.col(2), x.col(3), rp, rq, Vec3::UnitZ(), dimension);
  check_frame(f);
  const double step = 1e-7;
  for (int k = 0; k < 4; ++k)
    for (int i = 0; i < dimension; ++i) {
      Stencil plus = x, minus = x;
      plus(i, k) += step;
      minus(i, k) -= step;
      const double numeric = (gap_of(plus, rp, rq) - gap_of(minus, rp, rq)) / (2.0 * step);
      const double analytic = f.weights[k] * f.normal[i];
      INFO("vertex " << k << " coordinate " << i << " s " << f.s << " t " << f.t);
      CHECK(numeric == doctest::Approx(analytic).epsilon(1e-6).scale(1.0));
    }
}

}  // namespace

TEST_CASE("segment contact frame: a crossing above, its gap, normal, weights and frame") {
  // P along x at height 1, Q along y at height 0: closest points at the middles.
  const SegmentContactFrame f = segment_contact_frame(Vec3(-1, 0, 1), Vec3(1, 0, 1), Vec3(0, -1, 0), Vec3(0, 1, 0),
                                                      0.1, 0.2, Vec3::UnitX());
  CHECK(f.gap == doctest::Approx(0.7));
  CHECK(f.s == doctest::Approx(0.5));
  CHECK(f.t == doctest::Approx(0.5));
  CHECK((f.normal - Vec3::UnitZ()).norm() < 1e-15);
  CHECK((f.weights - Vec4(0.5, 0.5, -0.5, -0.5)).norm() < 1e-15);
  check_frame(f);
  // The relative normal velocity of P's point moving down onto Q at 2 m/s is -2.
  const Vec3 down(0, 0, -2);
  const Vec3 relative = f.weights[0] * down + f.weights[1] * down;
  CHECK(f.normal.dot(relative) == doctest::Approx(-2.0));
}

TEST_CASE("segment contact frame: the normal row is the gap's gradient (3D, random pairs)") {
  std::mt19937 random(20261129);
  std::uniform_real_distribution<double> coordinate(-1.0, 1.0);
  std::uniform_real_distribution<double> small(-1e-3, 1e-3);
  auto point = [&] { return Vec3(coordinate(random), coordinate(random), coordinate(random)); };
  int checked = 0, interior = 0, ends = 0;
  for (int trial = 0; trial < 300; ++trial) {
    Stencil x;
    const int kind = trial % 3;
    x.col(0) = point();
    x.col(1) = point();
    if (kind == 0) {  // skew, anywhere
      x.col(2) = point();
      x.col(3) = point();
    } else if (kind == 1) {  // nearly parallel, offset sideways
      const Vec3 offset = point();
      x.col(2) = x.col(0) + offset + Vec3(small(random), small(random), small(random));
      x.col(3) = x.col(1) + offset + Vec3(small(random), small(random), small(random));
    } else {  // nearly folded: Q runs back along P from near its end
      const Vec3 offset = 0.05 * point();
      x.col(2) = x.col(1) + offset;
      x.col(3) = x.col(0) + offset + Vec3(small(random), small(random), small(random));
    }
    const SegmentContactFrame f =
        segment_contact_frame(x.col(0), x.col(1), x.col(2), x.col(3), 0.01, 0.02, Vec3::UnitZ());
    // Skip pairs at a change of kind (a parameter within 1e-4 of a bound, or touching axes):
    // there the gap is only C^1 and central differences straddle two formulas.
    auto near_bound = [](double u) { return (u > 0.0 && u < 1e-4) || (u < 1.0 && u > 1.0 - 1e-4); };
    if (near_bound(f.s) || near_bound(f.t) || f.gap + 0.03 < 1e-3) continue;
    // Nearly parallel with both parameters inside: the closest points are not unique.
    const bool inside = f.s > 0.0 && f.s < 1.0 && f.t > 0.0 && f.t < 1.0;
    const Vec3 ep = (x.col(1) - x.col(0)).normalized(), eq = (x.col(3) - x.col(2)).normalized();
    if (inside && ep.cross(eq).norm() < 1e-2) continue;
    check_gradient(x, 0.01, 0.02, 3);
    ++checked;
    (inside ? interior : ends) += 1;
  }
  // Both kinds of minimiser were exercised.
  CHECK(interior > 20);
  CHECK(ends > 20);
  CHECK(checked > 100);
}

TEST_CASE("segment contact frame: pairs in a plane (2D) keep the normal and first tangent in it") {
  std::mt19937 random(7);
  std::uniform_real_distribution<double> coordinate(-1.0, 1.0);
  auto point = [&] { return Vec3(coordinate(random), coordinate(random), 0.0); };
  int checked = 0;
  for (int trial = 0; trial < 200; ++trial) {
    Stencil x;
    for (int k = 0; k < 4; ++k) x.col(k) = point();
    const SegmentContactFrame f =
        segment_contact_frame(x.col(0), x.col(1), x.col(2), x.col(3), 0.01, 0.01, Vec3::UnitZ(), 2);
    if (f.gap + 0.02 < 1e-3) continue;  // crossing in the plane
    auto near_bound = [](double u) { return (u > 0.0 && u < 1e-4) || (u < 1.0 && u > 1.0 - 1e-4); };
    if (near_bound(f.s) || near_bound(f.t)) continue;
    CHECK(f.normal.z() == 0.0);
    CHECK(f.tangent1.z() == 0.0);
    CHECK((f.tangent2 + Vec3::UnitZ()).norm() < 1e-15);
    check_gradient(x, 0.01, 0.01, 2);
    ++checked;
  }
  CHECK(checked > 50);
}

TEST_CASE("segment contact frame: axes that touch get a normal across both, on the fallback's side") {
  // Crossing axes: P along x, Q along y, both through the origin.
  const SegmentContactFrame crossing =
      segment_contact_frame(Vec3(-1, 0, 0), Vec3(1, 0, 0), Vec3(0, -1, 0), Vec3(0, 1, 0), 0.1, 0.1, Vec3(0, 0, -1));
  CHECK(crossing.gap == doctest::Approx(-0.2));
  CHECK((crossing.normal - Vec3(0, 0, -1)).norm() < 1e-15);
  check_frame(crossing);
  // Collinear, overlapping: across P, along the fallback's part across it.
  const SegmentContactFrame collinear =
      segment_contact_frame(Vec3(0, 0, 0), Vec3(1, 0, 0), Vec3(0.5, 0, 0), Vec3(2, 0, 0), 0.1, 0.1, Vec3(1, 1, 0));
  CHECK((collinear.normal - Vec3::UnitY()).norm() < 1e-15);
  check_frame(collinear);
  // A fallback along the axis itself: still some unit normal across it.
  const SegmentContactFrame along =
      segment_contact_frame(Vec3(0, 0, 0), Vec3(1, 0, 0), Vec3(0.5, 0, 0), Vec3(2, 0, 0), 0.1, 0.1, Vec3::UnitX());
  CHECK(std::abs(along.normal.dot(Vec3::UnitX())) < 1e-15);
  check_frame(along);
  // In a plane (2D) the normal stays in it: across P on the fallback's side, for crossing
  // axes and for touching parallel ones alike, whatever the fallback's z.
  const SegmentContactFrame planar = segment_contact_frame(Vec3(-1, 0, 0), Vec3(1, 0, 0), Vec3(0, -1, 0),
                                                           Vec3(0, 1, 0), 0.1, 0.1, Vec3(0.3, -1, 5), 2);
  CHECK((planar.normal - Vec3(0, -1, 0)).norm() < 1e-15);
  CHECK(planar.tangent1.z() == 0.0);
  check_frame(planar);
  const SegmentContactFrame planar_collinear = segment_contact_frame(
      Vec3(0, 0, 0), Vec3(1, 1, 0), Vec3(0.5, 0.5, 0), Vec3(2, 2, 0), 0.1, 0.1, Vec3::UnitZ(), 2);
  CHECK(planar_collinear.normal.z() == 0.0);
  CHECK(std::abs(planar_collinear.normal.dot(Vec3(1, 1, 0))) < 1e-15);
  CHECK(planar_collinear.normal.norm() == doctest::Approx(1.0));
  // Two points on top of each other (zero-length segments).
  const SegmentContactFrame points =
      segment_contact_frame(Vec3(1, 1, 1), Vec3(1, 1, 1), Vec3(1, 1, 1), Vec3(1, 1, 1), 0.1, 0.1, Vec3(0, 2, 0));
  CHECK((points.normal - Vec3::UnitY()).norm() < 1e-15);
  check_frame(points);
}

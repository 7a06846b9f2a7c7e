// `bristle check-contact`'s checks (contact/contact_check.hpp): centre lines meeting on a
// straight motion (against a dense sampling), overlaps beyond a tolerance, the pairs that
// count (the same as rod-rod contact's), and whole frames.

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <doctest/doctest.h>

#include "bristle/contact/box_pairs.hpp"
#include "bristle/contact/uniform_grid.hpp"
#include "bristle/contact/contact_check.hpp"
#include "bristle/contact/rod_contact.hpp"
#include "bristle/contact/segment_distance.hpp"
#include "support/rod_builders.hpp"

using namespace bristle;
using namespace bristle::test;

namespace {

struct Motion {
  Vec3 p0, p1, q0, q1;      // at t = 0
  Vec3 dp0, dp1, dq0, dq1;  // displacements over the motion
};

CentreLineMeeting meet(const Motion& m, double delta) {
  return centre_lines_meet(m.p0, m.p1, m.q0, m.q1, m.dp0, m.dp1, m.dq0, m.dq1, delta);
}

double distance_at(const Motion& m, double t) {
  return segment_distance(m.p0 + t * m.dp0, m.p1 + t * m.dp1, m.q0 + t * m.dq0, m.q1 + t * m.dq1).distance;
}

/// A rigid translation of segment P by `shift`, Q still.
Motion translate_p(const Vec3& p0, const Vec3& p1, const Vec3& q0, const Vec3& q1, const Vec3& shift) {
  return {p0, p1, q0, q1, shift, shift, Vec3::Zero(), Vec3::Zero()};
}

}  // namespace

TEST_CASE("centre lines meeting: a segment moved through another is found, at the time it passes") {
  // P along x at z = 1 moves down to z = -1 across Q along y at z = 0: they meet at t = 1/2.
  const Motion m = translate_p(Vec3(-1, 0, 1), Vec3(1, 0, 1), Vec3(0, -1, 0), Vec3(0, 1, 0), Vec3(0, 0, -2));
  const CentreLineMeeting r = meet(m, 1e-6);
  CHECK(r.met);
  CHECK_FALSE(r.undecided);
  CHECK(r.t == doctest::Approx(0.5).epsilon(1e-5));
  CHECK(r.distance <= 1e-6);

  // The same, fast: 1000 units in one motion, crossing at t = 0.5005 (a dip 2e-9 of the
  // motion wide at delta = 1e-6).
  const Motion fast = translate_p(Vec3(-1, 0, 500.5), Vec3(1, 0, 500.5), Vec3(0, -1, 0), Vec3(0, 1, 0),
                                  Vec3(0, 0, -1000));
  const CentreLineMeeting f = meet(fast, 1e-6);
  CHECK(f.met);
  CHECK(f.t == doctest::Approx(0.5005).epsilon(1e-6));

  // Turning as it goes down: P's ends move by different amounts and meet Q level at t = 1/2.
  const Motion turn{Vec3(-1, 0.5, 1), Vec3(1, 0.5, 3), Vec3(0, -1, 0), Vec3(0, 1, 0),
                    Vec3(0, 0, -2),   Vec3(0, 0, -6),  Vec3::Zero(),   Vec3::Zero()};
  CHECK(meet(turn, 1e-6).met);
  CHECK(meet(turn, 1e-6).t == doctest::Approx(0.5).epsilon(1e-5));

  // In a plane (2D scenes): P sweeps across Q in z = 0.
  const Motion planar = translate_p(Vec3(-1, 2, 0), Vec3(1, 2, 0), Vec3(0, -1, 0), Vec3(0, 1, 0), Vec3(0, -4, 0));
  const CentreLineMeeting p = meet(planar, 1e-6);
  CHECK(p.met);
  CHECK(p.t == doctest::Approx(0.25).epsilon(1e-5));  // P's line reaches Q's end y = 1 a quarter of the way

  // Already meeting at the start.
  CHECK(meet(translate_p(Vec3(-1, 0, 0), Vec3(1, 0, 0), Vec3(0, -1, 0), Vec3(0, 1, 0), Vec3(0, 0, 1)), 1e-6).t == 0.0);
}

TEST_CASE("centre lines meeting: segments that pass beside or slide along each other do not meet") {
  // P's line crosses Q's line (at y = 2, beyond Q's end y = 1) as P goes down: the lines meet,
  // the segments pass a unit apart. A test on the sign of the triple product alone would
  // take this for a crossing.
  const Motion beside = translate_p(Vec3(-1, 2, 1), Vec3(1, 2, 1), Vec3(0, -1, 0), Vec3(0, 1, 0), Vec3(0, 0, -2));
  const CentreLineMeeting b = meet(beside, 1e-6);
  CHECK_FALSE(b.met);
  CHECK(b.evaluations == 2);  // ruled out from the two ends: (sqrt 2 + sqrt 2 - L) / 2 > 0, L = 2

  // Two rods of radius 1 mm side by side, 2.0004 mm apart (a resting contact), one sliding
  // 5 cm along the other: never closer than 2 mm.
  const Motion slide = translate_p(Vec3(0, 0.0020004, 0), Vec3(0.01, 0.0020004, 0), Vec3(0, 0, 0), Vec3(0.01, 0, 0),
                                   Vec3(0.05, 0, 0));
  const CentreLineMeeting s = meet(slide, 1e-9);
  CHECK_FALSE(s.met);
  CHECK(s.distance == doctest::Approx(0.0020004));

  // Crossing rods at right angles, one sliding over the other 2 mm above it: skew lines all along.
  const Motion over = translate_p(Vec3(-0.01, 0, 0.002), Vec3(0.01, 0, 0.002), Vec3(0, -0.01, 0), Vec3(0, 0.01, 0),
                                  Vec3(0, 0.015, 0));
  CHECK_FALSE(meet(over, 1e-9).met);

  // No motion at all: decided from the two ends.
  const Motion still = translate_p(Vec3(0, 0, 1), Vec3(1, 0, 1), Vec3(0, 0, 0), Vec3(1, 0, 0), Vec3::Zero());
  const CentreLineMeeting n = meet(still, 1e-6);
  CHECK_FALSE(n.met);
  CHECK(n.evaluations == 2);
}

TEST_CASE("centre lines meeting: agrees with a dense sampling of random motions") {
  std::mt19937 rng(16);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  auto random_vector = [&](double scale) { return Vec3(scale * u(rng), scale * u(rng), scale * u(rng)); };
  int met = 0, apart = 0;
  for (int trial = 0; trial < 400; ++trial) {
    Motion m{random_vector(1), random_vector(1), random_vector(1), random_vector(1),
             random_vector(2), random_vector(2), random_vector(2), random_vector(2)};
    if (trial % 4 == 0) {  // coplanar motions (2D)
      for (Vec3* v : {&m.p0, &m.p1, &m.q0, &m.q1, &m.dp0, &m.dp1, &m.dq0, &m.dq1}) v->z() = 0.0;
    }
    const double delta = 0.02;
    const CentreLineMeeting r = meet(m, delta);
    // d is L-Lipschitz in t: 20001 samples find the minimum within L / 40000 (L <= 16 here).
    double sampled = 1e300;
    for (int k = 0; k <= 20000; ++k) sampled = std::min(sampled, distance_at(m, k / 20000.0));
    CAPTURE(trial);
    CAPTURE(sampled);
    CHECK_FALSE(r.undecided);
    if (r.met) {
      ++met;
      CHECK(r.distance <= delta);
      CHECK(distance_at(m, r.t) == doctest::Approx(r.distance));
      CHECK(sampled <= delta + 16.0 / 40000.0);
      // No earlier meeting: the distance stays above delta before r.t (to the search's resolution).
      for (int k = 0; 20000.0 * r.t - k > 1.0; ++k) CHECK(distance_at(m, k / 20000.0) > delta - 1e-12);
    } else {
      ++apart;
      CHECK(sampled > delta);
    }
  }
  MESSAGE(met << " motions met, " << apart << " stayed apart");
  CHECK(met > 40);
  CHECK(apart > 40);
}

TEST_CASE("contact check: overlaps beyond the tolerance, as a fraction of the smaller radius") {
  // Rod 0 (radius 1 mm) along x; rod 1 (radius 0.5 mm) along y above it; the centre lines are
  // h apart. Depth = (1.5 mm - h) / 0.5 mm.
  const std::vector<ContactCheckRod> rods{{0.001, {0.01, 0.01}}, {0.0005, {0.01, 0.01}}};
  const ContactChecker checker(rods, true);
  auto at_height = [](double h) {
    return CentreLines{{Vec3(-0.01, 0, 0), Vec3(0, 0, 0), Vec3(0.01, 0, 0)},
                       {Vec3(0.002, -0.01, h), Vec3(0.002, 0, h), Vec3(0.002, 0.01, h)}};
  };
  // 0.5% of the smaller radius deep: within the default 1%.
  FrameOverlaps within = checker.overlaps(at_height(0.0015 - 0.005 * 0.0005), 0.01);
  CHECK(within.beyond.empty());
  REQUIRE(within.has_deepest);
  CHECK(within.deepest.depth == doctest::Approx(0.005));
  // 2% deep: beyond 1%, within 3%; every segment pair that overlaps is listed, sorted.
  const FrameOverlaps beyond = checker.overlaps(at_height(0.0015 - 0.02 * 0.0005), 0.01);
  REQUIRE(beyond.beyond.size() == 2);  // rod 0 segment 1 against rod 1 segments 0 and 1 (they meet at y = 0)
  CHECK(beyond.beyond[0].rod_a == 0);
  CHECK(beyond.beyond[0].segment_a == 1);
  CHECK(beyond.beyond[0].rod_b == 1);
  CHECK(beyond.beyond[0].segment_b == 0);
  CHECK(beyond.beyond[1].segment_b == 1);
  CHECK(beyond.beyond[0].depth == doctest::Approx(0.02));
  CHECK(checker.overlaps(at_height(0.0015 - 0.02 * 0.0005), 0.03).beyond.empty());
  // A gap: nothing beyond, the deepest negative (the gap as a fraction). Rod 1 parallel to
  // rod 0, offset diagonally by 1.2 mm in y and z (their grown boxes overlap).
  const CentreLines parallel{{Vec3(-0.01, 0, 0), Vec3(0, 0, 0), Vec3(0.01, 0, 0)},
                             {Vec3(-0.01, 0.0012, 0.0012), Vec3(0, 0.0012, 0.0012), Vec3(0.01, 0.0012, 0.0012)}};
  const FrameOverlaps apart = checker.overlaps(parallel, 0.0);
  CHECK(apart.beyond.empty());
  REQUIRE(apart.has_deepest);
  CHECK(apart.deepest.depth == doctest::Approx((0.0015 - 0.0012 * std::sqrt(2.0)) / 0.0005));
}

TEST_CASE("contact check: the pairs checked are exactly those rod-rod contact acts on") {
  // A straight rod of uneven rest lengths (so the pi r rule falls between segments at
  // different index gaps), stretched by 30% (so lengths now and at rest differ), and a second
  // rod of another radius lying across it.
  const Material wide = make_material(1000.0, 0.0012, 1e6), thin = make_material(1000.0, 0.0004, 1e6);
  std::vector<Vec3> vertices{Vec3::Zero()};
  const double lengths[] = {0.001, 0.0005, 0.002, 0.0007, 0.0011, 0.0009, 0.0015, 0.0004, 0.001, 0.0013,
                            0.0006, 0.001, 0.0021, 0.0008, 0.001, 0.0005};
  for (const double l : lengths) vertices.push_back(vertices.back() + Vec3(l, 0, 0));
  for (const bool self : {true, false}) {
    CAPTURE(self);
    std::vector<Rod> rods;
    rods.push_back(rod_from_vertices(vertices, 3, {}, wide, RestShape::Initial, "a"));
    rods.push_back(rod_from_vertices(straight_vertices(Vec3(0.004, -0.01, 0.005), Vec3(0.004, 0.01, 0.005), 6), 3,
                                     {}, thin, RestShape::Initial, "b"));
    Model model = make_model(3, std::move(rods));
    model.rod_contact.enabled = true;
    model.rod_contact.self = self;
    RodContact contact(model, model.dof_masses());

    // Stretched by 30% along x (rod a's axis); the motion is so large that every pair's swept
    // boxes overlap and RodContact keeps every pair it does not exclude.
    VecX from = initial_state(model).positions;
    for (int v = 0; v < model.layout.vertex_count(); ++v) from[model.layout.vertex_dof(v)] *= 1.3;
    // Mirrored through the origin and scaled: every swept box then holds the origin.
    const VecX to = -1000.0 * from;
    std::set<std::pair<int, int>> expected;
    for (const RodContactPair& pair : contact.find_pairs(from, to)) expected.insert({pair.segment_a, pair.segment_b});
    REQUIRE(contact.overlapping() == 0);  // no pair left out for overlapping at the start

    std::vector<ContactCheckRod> check_rods;
    for (const Rod& rod : model.rods) check_rods.push_back({rod.material.radius, rod.rest_lengths});
    const ContactChecker checker(check_rods, self);
    std::vector<std::pair<int, int>> segments;  // (rod, segment) of every global segment
    for (int r = 0; r < 2; ++r)
      for (int j = 0; j < model.rods[r].edge_count(); ++j) segments.emplace_back(r, j);
    std::set<std::pair<int, int>> checked;
    for (int i = 0; i < static_cast<int>(segments.size()); ++i)
      for (int j = i + 1; j < static_cast<int>(segments.size()); ++j)
        if (checker.subject_to_contact(segments[i].first, segments[i].second, segments[j].first, segments[j].second))
          checked.insert({i, j});
    CHECK(checked == expected);
    // Both kinds are there: pairs of one rod (with self) and pairs of two.
    const int same_rod = static_cast<int>(std::count_if(checked.begin(), checked.end(), [&](const auto& p) {
      return segments[p.first].first == segments[p.second].first;
    }));
    CHECK((same_rod > 0) == self);
    CHECK(static_cast<int>(checked.size()) > same_rod);
  }
}

TEST_CASE("contact check: crossings between frames name the pair; sliding and adjacent segments are not crossings") {
  const double r = 0.001;
  const std::vector<ContactCheckRod> rods{{r, {0.01, 0.01, 0.01}}, {r, {0.01, 0.01, 0.01}}};
  const ContactChecker checker(rods, true);
  const std::vector<Vec3> lower{Vec3(-0.015, 0, 0), Vec3(-0.005, 0, 0), Vec3(0.005, 0, 0), Vec3(0.015, 0, 0)};
  auto upper_at = [](double x, double z) {
    return std::vector<Vec3>{Vec3(x, -0.015, z), Vec3(x, -0.005, z), Vec3(x, 0.005, z), Vec3(x, 0.015, z)};
  };
  // Rod 1 drops from 3 mm above rod 0 to 3 mm below it, across its segment 1 (x = -0.002).
  const auto through = checker.crossings({lower, upper_at(-0.002, 0.003)}, {lower, upper_at(-0.002, -0.003)});
  REQUIRE(through.size() == 1);
  CHECK(through[0].rod_a == 0);
  CHECK(through[0].segment_a == 1);
  CHECK(through[0].rod_b == 1);
  CHECK(through[0].segment_b == 1);
  CHECK(through[0].t == doctest::Approx(0.5).epsilon(1e-5));
  // Sliding along x over it, 2 mm above: resting contact, no crossing (and no overlap).
  CHECK(checker.crossings({lower, upper_at(-0.012, 0.002)}, {lower, upper_at(0.012, 0.002)}).empty());
  CHECK(checker.overlaps({lower, upper_at(0.012, 0.002)}, 0.01).beyond.empty());
  // Lying through each other at both frames (rods that met before) and moving so: no new crossing.
  CHECK(checker.crossings({lower, upper_at(-0.002, 0.0)}, {lower, upper_at(0.002, 0.0)}).empty());
  // A rod folding at a vertex: its adjacent segments always meet there, and do not count.
  std::vector<Vec3> folded = lower;
  folded[3] = Vec3(-0.004, 0.0005, 0);
  CHECK(checker.crossings({lower, upper_at(0.05, 0.0)}, {folded, upper_at(0.05, 0.0)}).empty());
}

TEST_CASE("contact check: the same result for every thread count") {
  // 40 random rods tumbling through each other.
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<ContactCheckRod> rods;
  CentreLines from, to;
  for (int k = 0; k < 40; ++k) {
    rods.push_back({0.001 * (1.0 + 0.5 * u(rng)), std::vector<double>(8, 0.005)});
    std::vector<Vec3> a, b;
    const Vec3 start(0.02 * u(rng), 0.02 * u(rng), 0.02 * u(rng)), dir = Vec3(u(rng), u(rng), u(rng)).normalized();
    const Vec3 shift(0.01 * u(rng), 0.01 * u(rng), 0.01 * u(rng));
    for (int i = 0; i <= 8; ++i) {
      a.push_back(start + 0.005 * i * dir);
      b.push_back(start + 0.005 * i * dir + shift + 0.001 * i * Vec3(u(rng), u(rng), u(rng)));
    }
    from.push_back(a);
    to.push_back(b);
  }
  const ContactChecker one(rods, true, 1), two(rods, true, 2);
  const auto c1 = one.crossings(from, to), c2 = two.crossings(from, to);
  REQUIRE(c1.size() == c2.size());
  CHECK(c1.size() > 10);
  for (std::size_t k = 0; k < c1.size(); ++k) {
    CHECK(c1[k].rod_a == c2[k].rod_a);
    CHECK(c1[k].segment_a == c2[k].segment_a);
    CHECK(c1[k].rod_b == c2[k].rod_b);
    CHECK(c1[k].segment_b == c2[k].segment_b);
    CHECK(c1[k].t == c2[k].t);
  }
  const FrameOverlaps o1 = one.overlaps(to, 0.01), o2 = two.overlaps(to, 0.01);
  REQUIRE(o1.beyond.size() == o2.beyond.size());
  CHECK(o1.beyond.size() > 10);
  for (std::size_t k = 0; k < o1.beyond.size(); ++k) CHECK(o1.beyond[k].depth == o2.beyond[k].depth);
}

TEST_CASE("contact check: a run's count of crossings in a step (RodContact::crossings) is the checker's, in 2D and 3D") {
  // 30 random rods of 8 edges tumbling through each other, near the origin and 1e12 m away
  // (where the coordinates' rounding, not the radii, sets how close centre lines must come),
  // with and without self-contact, on one thread and two.
  for (const int dimension : {2, 3}) {
    for (const double offset : {0.0, 1e12}) {
      for (const bool self : {true, false}) {
        CAPTURE(dimension);
        CAPTURE(offset);
        CAPTURE(self);
        std::mt19937 rng(11);
        std::uniform_real_distribution<double> u(-1.0, 1.0);
        auto random_vector = [&](double size) {
          return Vec3(size * u(rng), size * u(rng), dimension == 3 ? size * u(rng) : 0.0);
        };
        std::vector<Rod> rods;
        std::vector<std::vector<Vec3>> ends;
        for (int k = 0; k < 30; ++k) {
          const Material material = make_material(1000.0, 0.001 * (1.0 + 0.5 * u(rng)), 1e6);
          const Vec3 start = Vec3::Constant(offset) + random_vector(0.02);
          const Vec3 direction = random_vector(1.0).normalized();
          std::vector<Vec3> a, b;
          const Vec3 shift = random_vector(0.01);
          for (int i = 0; i <= 8; ++i) {
            a.push_back(start + 0.005 * i * direction);
            b.push_back(a.back() + shift + random_vector(0.001 * i));
          }
          if (dimension == 2) {
            for (Vec3& x : a) x.z() = 0.0;
          }
          rods.push_back(rod_from_vertices(a, dimension, {}, material, RestShape::Initial, "r" + std::to_string(k)));
          ends.push_back(b);
        }
        Model model = make_model(dimension, std::move(rods));
        model.rod_contact.enabled = true;
        model.rod_contact.self = self;
        const VecX from = initial_state(model).positions;
        VecX to = from;
        CentreLines from_lines, to_lines;
        std::vector<ContactCheckRod> check_rods;
        for (int r = 0; r < static_cast<int>(model.rods.size()); ++r) {
          std::vector<Vec3> f, t;
          for (int i = 0; i <= 8; ++i) {
            const int dof = model.layout.vertex_dof(r, i);
            Vec3 x = Vec3::Zero(), y = ends[r][i];
            x.head(dimension) = from.segment(dof, dimension);
            if (dimension == 2) y.z() = 0.0;
            to.segment(dof, dimension) = y.head(dimension);
            f.push_back(x);
            t.push_back(y);
          }
          from_lines.push_back(f);
          to_lines.push_back(t);
          check_rods.push_back({model.rods[r].material.radius, model.rods[r].rest_lengths});
        }
        const std::size_t expected = ContactChecker(check_rods, self).crossings(from_lines, to_lines).size();
        CHECK(expected > 10);
        // The same path moved as a whole, for the checker: a later step's boxes near this one's
        // relative to the segments' mean, where RodContact reuses its kept list.
        const Vec3 moved = dimension == 3 ? Vec3(0.003, -0.002, 0.001) : Vec3(0.003, -0.002, 0.0);
        CentreLines from_moved = from_lines, to_moved = to_lines;
        VecX from_shifted = from, to_shifted = to;
        for (int r = 0; r < static_cast<int>(model.rods.size()); ++r)
          for (int i = 0; i <= 8; ++i) {
            from_moved[r][i] += moved;
            to_moved[r][i] += moved;
            const int dof = model.layout.vertex_dof(r, i);
            from_shifted.segment(dof, dimension) += moved.head(dimension);
            to_shifted.segment(dof, dimension) += moved.head(dimension);
          }
        const std::size_t expected_moved = ContactChecker(check_rods, self).crossings(from_moved, to_moved).size();
        // And a next step from `to` on, each rod carried its own way: other pairs.
        CentreLines next_lines = to_lines;
        VecX next = to;
        for (int r = 0; r < static_cast<int>(model.rods.size()); ++r) {
          const Vec3 carry = random_vector(0.01);
          for (int i = 0; i <= 8; ++i) {
            const Vec3 y = to_lines[r][i] + carry + random_vector(0.001 * i);
            next_lines[r][i] = y;
            next.segment(model.layout.vertex_dof(r, i), dimension) = y.head(dimension);
          }
        }
        const std::size_t expected_next = ContactChecker(check_rods, self).crossings(to_lines, next_lines).size();
        CHECK(expected_next > 0);
        // And the first path with a common drag longer than the bundle added to its end (a
        // brush's stroke): RodContact sweeps its boxes in the frame moving with the segments'
        // mean, the checker in the world's. The same crossings.
        const Vec3 drag = dimension == 3 ? Vec3(0.09, -0.07, 0.05) : Vec3(0.09, -0.07, 0.0);
        CentreLines dragged_lines = to_lines;
        VecX dragged = to;
        for (int r = 0; r < static_cast<int>(model.rods.size()); ++r)
          for (int i = 0; i <= 8; ++i) {
            dragged_lines[r][i] += drag;
            dragged.segment(model.layout.vertex_dof(r, i), dimension) += drag.head(dimension);
          }
        const std::size_t expected_dragged =
            ContactChecker(check_rods, self).crossings(from_lines, dragged_lines).size();
        CHECK(expected_dragged > 10);
        for (const int threads : {1, 2}) {
          RodContact contact(model, model.dof_masses());
          contact.set_threads(threads);
          CHECK(contact.crossings(from, to) == static_cast<int>(expected));
          // Called again, as each step does: no motion, the path moved, and the first again.
          CHECK(contact.crossings(from, from) == 0);
          CHECK(contact.crossings(from_shifted, to_shifted) == static_cast<int>(expected_moved));
          CHECK(contact.crossings(to, next) == static_cast<int>(expected_next));
          CHECK(contact.crossings(from, dragged) == static_cast<int>(expected_dragged));
          CHECK(contact.crossings(from, to) == static_cast<int>(expected));
        }
      }
    }
  }
}

TEST_CASE("box pairs: many pairs, sorted in parts on threads and merged, as on one thread") {
  // Boxes dense enough for more than 16384 pairs: the final sort runs in parts on threads; and
  // more than 4096 boxes with more than 16384 cell entries, so that the entries are counted,
  // placed and sorted by cell on threads too.
  std::mt19937 rng(9);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<AxisBox> boxes;
  for (int k = 0; k < 5000; ++k) {
    const Vec3 lo(u(rng), u(rng), u(rng));
    boxes.push_back({lo, lo + Vec3::Constant(0.12 * u(rng))});
  }
  // The cell entries, counted on the grid overlapping_box_pairs lays (cells the mean box's
  // largest side): more than 16384, or the sort by cell would stay on one thread.
  {
    const UniformGrid grid = UniformGrid::over(boxes);
    long long entries = 0;
    for (const AxisBox& b : boxes) {
      const UniformGrid::Cell a = grid.cell(b.lo), c = grid.cell(b.hi);
      const long long cells = (c[0] - a[0] + 1) * (c[1] - a[1] + 1) * (c[2] - a[2] + 1);
      if (cells <= 64) entries += cells;  // larger boxes are tested apart, with no entries
    }
    MESSAGE(entries << " cell entries");
    REQUIRE(entries > 16384);
  }
  const auto one = overlapping_box_pairs(boxes, {}, 1);
  REQUIRE(one.size() > 16384);
  CHECK(std::is_sorted(one.begin(), one.end()));
  CHECK(std::adjacent_find(one.begin(), one.end()) == one.end());
  for (const int threads : {2, 3}) {
    CAPTURE(threads);
    CHECK(overlapping_box_pairs(boxes, {}, threads) == one);
  }
}

TEST_CASE("box pairs: a list kept across calls gives overlapping_box_pairs' pairs, updated only when a box leaves its margin") {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(0.0, 1.0), v(-1.0, 1.0);
  const int n = 3000;
  std::vector<AxisBox> boxes;
  for (int k = 0; k < n; ++k) {
    const Vec3 lo(u(rng), u(rng), u(rng));
    boxes.push_back({lo, lo + Vec3::Constant(0.05 * u(rng))});
  }
  const double margin = 0.01;
  auto skip = [](int i, int j) { return (i + j) % 5 == 0; };
  for (const int threads : {1, 2}) {
    CAPTURE(threads);
    BoxPairList list;
    std::vector<AxisBox> moved = boxes;
    for (int call = 0; call < 12; ++call) {
      CAPTURE(call);
      const int rebuilds_before = list.rebuilds();
      // Every fourth call one box jumps; otherwise all drift by less than the margin in all
      // (the drift is measured from where the list was built: it never adds up past it).
      const bool jump = call % 4 == 3;
      std::vector<AxisBox> now = boxes;
      for (int k = 0; k < n; ++k) {
        const Vec3 drift(0.9 * margin * v(rng), 0.9 * margin * v(rng), 0.9 * margin * v(rng));
        now[k].lo = moved[k].lo + drift;
        now[k].hi = moved[k].hi + drift;
      }
      if (jump) {
        now[call].lo += Vec3::Constant(0.3);
        now[call].hi += Vec3::Constant(0.3);
      }
      const int regrowths_before = list.regrowths();
      const std::vector<std::pair<int, int>> expected = overlapping_box_pairs(now, skip, 1);
      CHECK(list.pairs(now, [&](int) { return margin; }, skip, threads) == expected);
      // The first call builds the list; a jump of one box grows only that box again.
      CHECK(list.rebuilds() - rebuilds_before == (call == 0 ? 1 : 0));
      CHECK(list.regrowths() - regrowths_before == (jump ? 1 : 0));
      if (call == 0) moved = now;  // the boxes the list was built around
      if (jump) moved[call] = now[call];
    }
    // Larger boxes than the grown ones, in place: that box grown again.
    std::vector<AxisBox> grown = moved;
    grown[5].hi += Vec3::Constant(2.0 * margin);
    const int before = list.regrowths();
    CHECK(list.pairs(grown, [&](int) { return margin; }, skip, threads) == overlapping_box_pairs(grown, skip, 1));
    CHECK(list.regrowths() == before + 1);
    // More than n / 64 boxes out: the whole list rebuilt.
    std::vector<AxisBox> far = grown;
    for (int k = 0; k < n / 32; ++k) {
      far[k * 17].lo += Vec3::Constant(0.2);
      far[k * 17].hi += Vec3::Constant(0.2);
    }
    const int rebuilds = list.rebuilds();
    CHECK(list.pairs(far, [&](int) { return margin; }, skip, threads) == overlapping_box_pairs(far, skip, 1));
    CHECK(list.rebuilds() == rebuilds + 1);
  }
}

TEST_CASE("box pairs: boxes that leave their margin a few at a time are grown again, with the rebuilt list's pairs") {
  // A kept list's boxes jump a few at a time, call after call, near each other and far (pairs
  // of two jumping boxes, a jumping box onto a still one, boxes leaving all their pairs): each
  // call's pairs, and each of pairs_touching's (just after a change, and on an unchanged list),
  // are a fresh broad phase's, on 1 and 2 threads; the list is built once and grown again box
  // by box from then on.
  std::mt19937 rng(23);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  const int n = 4000;
  std::vector<AxisBox> boxes;
  for (int k = 0; k < n; ++k) {
    const Vec3 lo(u(rng), u(rng), u(rng));
    boxes.push_back({lo, lo + Vec3::Constant(0.04 * u(rng))});
  }
  const double margin = 0.005;
  auto skip = [](int i, int j) { return (i * 7 + j) % 11 == 0; };
  for (const int threads : {1, 2}) {
    CAPTURE(threads);
    BoxPairList list;
    std::vector<AxisBox> now = boxes;
    std::vector<char> moving(n, 0);
    for (int call = 0; call < 30; ++call) {
      CAPTURE(call);
      std::fill(moving.begin(), moving.end(), 0);
      const int jumps = call == 0 ? 0 : 1 + call % 9;  // 1 to 9 boxes
      for (int m = 0; m < jumps; ++m) {
        const int k = static_cast<int>(u(rng) * n) % n;
        // Half onto another box (a new pair with a box that did not move), half anywhere.
        const Vec3 to = m % 2 == 0 ? now[static_cast<int>(u(rng) * n) % n].lo : Vec3(u(rng), u(rng), u(rng));
        const Vec3 size = now[k].hi - now[k].lo;
        now[k].lo = to;
        now[k].hi = to + size;
        moving[k] = 1;
      }
      if (call % 5 == 4) {  // two boxes jumping onto each other (the last two: a pair after every kept one)
        const int a = call == 29 ? n - 2 : (call * 131) % n, b = a + 1;
        now[b].lo = now[a].lo + Vec3::Constant(0.2);
        now[b].hi = now[a].hi + Vec3::Constant(0.2);
        now[a].lo += Vec3::Constant(0.2);
        now[a].hi += Vec3::Constant(0.2);
        moving[a] = moving[b] = 1;
      }
      const auto expected = overlapping_box_pairs(now, skip, 1);
      if (call % 2 == 0) {
        CHECK(list.pairs(now, [&](int) { return margin; }, skip, threads) == expected);
      } else {
        std::vector<std::pair<int, int>> touching;
        for (const auto& pair : expected)
          if (moving[pair.first] || moving[pair.second]) touching.push_back(pair);
        CHECK(list.pairs_touching(now, moving, [&](int) { return margin; }, skip, threads) == touching);
        // The same boxes again with other boxes marked: the list unchanged, read through each
        // box's own pairs (BoxPairList's index) instead of in one pass as just after a change.
        std::vector<char> others(n, 0);
        for (int k = call; k < n; k += 97) others[k] = 1;
        std::vector<std::pair<int, int>> touching_others;
        for (const auto& pair : expected)
          if (others[pair.first] || others[pair.second]) touching_others.push_back(pair);
        CHECK(!touching_others.empty());
        CHECK(list.pairs_touching(now, others, [&](int) { return margin; }, skip, threads) == touching_others);
      }
    }
    CHECK(list.rebuilds() == 1);
    CHECK(list.regrowths() == 29);
  }
}

TEST_CASE("box pairs: updates find the pairs of a box grown wider than any before, and of boxes not finite") {
  // An update tests a regrown box only against the boxes whose lower bound along one axis lies
  // within the widest box's width below it (BoxPairList's sweep index). A box that jumps and
  // widens must widen that reach for the updates after it; a box that is not finite leaves
  // the index (every box tested) until a rebuild. Each call's pairs are a fresh broad phase's.
  std::mt19937 rng(71);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  const int n = 3000;
  std::vector<AxisBox> boxes;
  for (int k = 0; k < n; ++k) {
    const Vec3 lo(u(rng), u(rng), u(rng));
    boxes.push_back({lo, lo + Vec3::Constant(0.01)});
  }
  for (const int threads : {1, 2}) {
    CAPTURE(threads);
    BoxPairList list;
    std::vector<AxisBox> now = boxes;
    auto check = [&](const std::string& what) {
      CAPTURE(what);
      CHECK(list.pairs(now, [](int) { return 0.002; }, {}, threads) == overlapping_box_pairs(now, {}, 1));
    };
    check("first");
    now[3].lo = Vec3(0.2, 0.4, 0.6);
    now[3].hi = now[3].lo + Vec3::Constant(0.01);
    check("a small jump");  // the first update, which builds the index
    // Box 5 becomes the whole unit cube.
    now[5].lo = Vec3::Zero();
    now[5].hi = Vec3::Ones();
    check("widened");
    // Boxes jump into its far corner, far above its lower bound on any axis.
    for (const int k : {17, 18, 19}) {
      now[k].lo = Vec3(0.95 + 0.01 * (k - 17), 0.97, 0.96);
      now[k].hi = now[k].lo + Vec3::Constant(0.01);
    }
    check("into the cube's corner");
    // Two boxes tied on every lower bound.
    now[40].lo = now[41].lo = Vec3(0.3, 0.3, 0.3);
    now[40].hi = now[41].hi = Vec3(0.31, 0.31, 0.31);
    check("tied");
    // A box reaching to infinity, then one not a number, then both back.
    now[60].hi.x() = std::numeric_limits<double>::infinity();
    check("infinite");
    now[61].lo.y() = std::numeric_limits<double>::quiet_NaN();
    for (const int k : {62, 63, 64}) {  // moved while the index is left
      now[k].lo = Vec3(0.6, 0.6, 0.6 + 0.001 * (k - 62));
      now[k].hi = now[k].lo + Vec3::Constant(0.01);
    }
    check("not a number");
    for (const int k : {70, 71}) {
      now[k].lo = Vec3(0.6, 0.6, 0.6);
      now[k].hi = Vec3(0.62, 0.62, 0.62);
    }
    check("after them");
    // Box 60 out of its infinite grown box (lower on x), box 61 back: all finite again, and
    // the index built anew.
    now[60].lo = Vec3(-0.5, 0.1, 0.1);
    now[60].hi = now[60].lo + Vec3::Constant(0.01);
    now[61] = boxes[61];
    check("finite again");
    for (const int k : {72, 73}) {  // onto the boxes moved while the index was left
      now[k].lo = Vec3(0.6005, 0.6005, 0.6005 + 0.001 * (k - 72));
      now[k].hi = now[k].lo + Vec3::Constant(0.01);
    }
    check("onto the moved boxes");
    now[5].lo = Vec3(0.1, 0.2, 0.3);
    now[5].hi = now[5].lo + Vec3::Constant(0.01);
    now[17].lo = Vec3(0.1, 0.2, 0.305);
    now[17].hi = now[17].lo + Vec3::Constant(0.01);
    check("narrow again");
    CHECK(list.rebuilds() == 1);
    CHECK(list.regrowths() == 10);
    // All but the three updates with a box not finite (infinite, not a number, after them).
    CHECK(list.indexed_updates() == 7);
  }
}

TEST_CASE("box pairs: every overlapping pair once, as a test of all pairs finds them") {
  // 300 boxes: more cells than the counting sort's buckets, so buckets hold several cells;
  // 3000 on two threads: more than 256 cells, so cells are shared among the threads.
  for (const int n : {300, 3000, 6000}) {  // 6000: the grid's entries made on threads
    CAPTURE(n);
    std::mt19937 rng(5);
    std::uniform_real_distribution<double> u(0.0, 1.0);
    std::vector<AxisBox> boxes;
    for (int k = 0; k < n; ++k) {
      const Vec3 lo(u(rng), u(rng), u(rng));
      // Mostly small boxes, a few long ones (kept out of the grid).
      const double size = k % 50 == 0 ? 0.8 : 0.15 * u(rng) * std::cbrt(300.0 / n);
      boxes.push_back({lo, lo + Vec3(size * u(rng), size * u(rng), size * u(rng))});
    }
    std::vector<std::pair<int, int>> expected;
    for (int i = 0; i < n; ++i)
      for (int j = i + 1; j < n; ++j)
        if (boxes_overlap(boxes[i], boxes[j]) && (i + j) % 3 != 0) expected.emplace_back(i, j);
    for (const int threads : {1, 2}) {
      const auto found = overlapping_box_pairs(boxes, [](int i, int j) { return (i + j) % 3 == 0; }, threads);
      CHECK(found == expected);
    }
    CHECK(expected.size() > 20);
  }
}

TEST_CASE("box pairs: a kept list follows boxes moved together by the caller's shift, with the same pairs") {
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> u(0.0, 1.0), v(-1.0, 1.0);
  const int n = 2000;
  std::vector<AxisBox> boxes;
  for (int k = 0; k < n; ++k) {
    const Vec3 lo(u(rng), u(rng), u(rng));
    boxes.push_back({lo, lo + Vec3::Constant(0.06 * u(rng))});
  }
  // Pairs that touch exactly, face on face: the subtraction of the shift must keep them.
  for (int k = 0; k + 1 < 40; k += 2) {
    boxes[k + 1].lo = boxes[k].hi;
    boxes[k + 1].hi = boxes[k].hi + Vec3::Constant(0.01);
  }
  const double margin = 0.01;
  auto skip = [](int i, int j) { return (i + j) % 7 == 0; };
  for (const int threads : {1, 2}) {
    CAPTURE(threads);
    BoxPairList list;
    for (int call = 0; call < 8; ++call) {
      CAPTURE(call);
      // The whole set goes 3.7 units further each call (hundreds of margins), each box also
      // drifting within its margin; the shift follows the common part.
      const Vec3 offset = Vec3(3.7, -1.3, 0.9) * call + Vec3::Constant(1e-3 * v(rng));
      std::vector<AxisBox> now = boxes;
      for (int k = 0; k < n; ++k) {
        const Vec3 drift = 0.4 * margin * Vec3(v(rng), v(rng), v(rng));
        now[k].lo = boxes[k].lo + offset + (k < 40 ? Vec3::Zero() : drift);
        now[k].hi = boxes[k].hi + offset + (k < 40 ? Vec3::Zero() : drift);
      }
      const int rebuilds_before = list.rebuilds();
      const auto expected = overlapping_box_pairs(now, skip, 1);
      CHECK(list.pairs(now, [&](int) { return margin; }, skip, threads, Vec3(3.7, -1.3, 0.9) * call) == expected);
      CHECK(list.rebuilds() == rebuilds_before + (call == 0 ? 1 : 0));
      int touching = 0;
      for (int k = 0; k + 1 < 40; k += 2)
        touching += std::binary_search(expected.begin(), expected.end(), std::make_pair(k, k + 1)) ? 1 : 0;
      CHECK(touching >= 15);  // all but the skipped ones (k + k + 1 divisible by 7)
    }
    // Without the shift the moved boxes leave their grown ones: a rebuild, the same pairs.
    std::vector<AxisBox> moved = boxes;
    for (AxisBox& b : moved) {
      b.lo += Vec3::Constant(5.0);
      b.hi += Vec3::Constant(5.0);
    }
    const int before = list.rebuilds();
    CHECK(list.pairs(moved, [&](int) { return margin; }, skip, threads) == overlapping_box_pairs(moved, skip, 1));
    CHECK(list.rebuilds() == before + 1);
  }
}

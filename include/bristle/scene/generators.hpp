#pragma once
/// Rod generators: the geometry behind `rods[].generator` (docs/scene-format.md). Pure
/// functions of plain specs, with no JSON, so they can be tested on their own; the scene
/// reader validates the spec before calling them.

#include <cstdint>
#include <utility>
#include <vector>

#include "bristle/math/types.hpp"

namespace bristle {

/// `segments` + 1 evenly spaced vertices from `from` to `to`, both ends exact.
std::vector<Vec3> straight_rod(const Vec3& from, const Vec3& to, int segments);

enum class BrushLayout {
  Grid,  ///< rows x columns, `spacing` apart, centred on the root
  Disk,  ///< hexagonal packing, `spacing` apart, clipped to a disk of `disk_radius`
};

/// Random perturbation of each bristle; zero means none.
struct BrushJitter {
  double length = 0.0;     ///< relative: length_k = length (1 + length * U(-1, 1)), in [0, 1)
  double direction = 0.0;  ///< largest tilt away from `direction` [rad], in [0, pi/2)
  std::uint64_t seed = 0;
};

enum class CurlHandedness {
  Right,   ///< every bristle coils counter-clockwise seen from the tip of its axis
  Left,    ///< every bristle clockwise
  Random,  ///< each bristle either way, with probability 1/2
};

/// Curly bristles (3D): each bristle a circular helix about its straight axis (the straight
/// bristle it would otherwise be), docs/scene-format.md "Curly bristles".
struct BrushCurl {
  bool enabled = false;  ///< false: straight bristles
  double radius = 0.0;   ///< coil radius [m], > 0
  double pitch = 0.0;    ///< advance per turn along the axis [m], > 0
  CurlHandedness handedness = CurlHandedness::Right;
  /// Relative, in [0, 1): radius_k = radius (1 + jitter U(-1, 1)), pitch_k likewise.
  double jitter = 0.0;

  /// The largest coil radius any bristle gets: radius (1 + jitter); 0 without a curl.
  double max_radius() const { return enabled ? radius * (1.0 + jitter) : 0.0; }
};

/// A tuft of straight (or curly) bristles whose roots lie on the base plane through `root`
/// perpendicular to `direction` (in 2D, the base line).
struct BrushSpec {
  int dimension = 3;
  BrushLayout layout = BrushLayout::Grid;
  int rows = 1, columns = 1;   ///< grid; rows is 1 in 2D
  double disk_radius = 0.0;    ///< disk [m]
  double spacing = 0.0;        ///< distance between neighbouring roots [m], > 0
  Vec3 root = Vec3::Zero();    ///< centre of the tuft's base [m]
  Vec3 direction = Vec3::UnitY();  ///< unit bristle direction
  double length = 0.0;         ///< bristle length before jitter [m], > 0
  int segments = 1;            ///< edges per bristle
  BrushJitter jitter;
  /// The bristles' radius [m]. When > 0 and the direction jitter is on, bristles are planted
  /// clear of each other (plant_brush); 0 plants them as drawn.
  double bristle_radius = 0.0;
  BrushCurl curl;  ///< 3D only
};

/// Orthonormal (u, v) spanning the base plane, with (u, v, direction) right-handed.
/// u is the world x axis projected onto the plane, or the y axis when `direction` is within
/// about 25 degrees of x (|direction.x| > 0.9). In 2D, u is `direction` turned by +90 degrees
/// and v is zero.
std::pair<Vec3, Vec3> brush_base_axes(const Vec3& direction, int dimension);

/// Root offsets from `root`, in bristle order: grid row by row (v from negative to positive),
/// each row along u; disk likewise, row by row of the hexagonal lattice. In 2D a single row
/// along u (for a disk, across its diameter).
std::vector<Vec3> brush_root_offsets(const BrushSpec& spec);

/// Approximate number of bristles (exact for a grid), cheap enough to check before
/// generating a brush whose size might be absurd.
double brush_bristle_estimate(const BrushSpec& spec);

/// Most draws of its direction jitter a bristle may take to stay clear of the earlier ones.
inline constexpr int kMaxBristleDraws = 1000;

/// Most work of the overlap check of one brush: grid cells visited plus candidate bristles
/// tested, over all bristles and draws (docs/limits.md): under 0.4 s in a Release build, and
/// within the fuzzer's time limit in its instrumented build. brush_stroke.json needs 27 000;
/// 100 000 bristles 0.5 mm apart, 26 mm long and tilted up to 0.12 rad need 3.7 10^6.
inline constexpr std::int64_t kMaxBrushOverlapWork = 10'000'000;

/// Why a brush could not be planted without bristles overlapping.
struct BrushConflict {
  int bristle = -1;    ///< the first bristle (in root order) no draw placed clear of the earlier ones
  int neighbour = -1;  ///< an earlier bristle its last draw overlapped
  int draws = 0;       ///< draws tried (kMaxBristleDraws)
  /// The check gave up at `bristle` after kMaxBrushOverlapWork units of work (then
  /// `neighbour` may be -1): the bristles are too long and tilted for their spacing to be
  /// checked in bounded time.
  bool out_of_work = false;
};

struct BrushPlanting {
  /// Every bristle's vertices, root first, in the order of brush_root_offsets; empty when
  /// `failed`.
  std::vector<std::vector<Vec3>> bristles;
  bool failed = false;
  BrushConflict conflict;  ///< when failed
  int redrawn = 0;         ///< bristles whose first draw overlapped an earlier bristle
  /// Each bristle's straight axis, from its root lattice point to the axis tip (for a
  /// straight bristle, its first and last vertex); empty when `failed`.
  std::vector<std::pair<Vec3, Vec3>> axes;
};

/// Plants the brush's bristles.
///
/// Jitter draws three numbers per bristle from SplitMix64(seed) (length, tilt, azimuth)
/// whether or not each jitter is enabled, so turning one jitter on does not change the other.
///
/// With a bristle radius r > 0 and direction jitter, each bristle, as a straight capsule from
/// root to tip, is checked against the earlier bristles that could reach it (those whose
/// shadows on the base plane come near its own, found with a uniform grid). If its centre line
/// passes closer than 2 r to one of theirs, its direction is drawn again (tilt and azimuth,
/// two numbers from a second SplitMix64 stream seeded with seed ^ kBrushRedrawSalt, shared
/// by all redraws in bristle order; its length stays), up to kMaxBristleDraws draws in all.
/// A bristle none of whose draws fits fails the planting. Bristles whose first draw fits are
/// exactly as without the check, and the result is a function of the spec alone. A check
/// that would need more than kMaxBrushOverlapWork fails the planting too (`out_of_work`).
///
/// With a curl, the axis is planted as above, then the bristle becomes the helix
///   x(t) = base + R_k (cos(phi + theta_k) u_k + s_k sin(phi + theta_k) v_k) + L_k t d_k,
///   phi = 2 pi (L_k / p_k) t, t = i / segments,
/// about its axis from base along d_k (length L_k), with (u_k, v_k) = brush_base_axes(d_k, 3),
/// R_k = radius (1 + jitter a_k), p_k = pitch (1 + jitter b_k), theta_k = 2 pi c_k and
/// s_k = +1 (right) or -1 (left; Random: h_k < 1/2 is right): four numbers a_k, b_k
/// (in [-1, 1)), c_k, h_k (in [0, 1)) per bristle from a third SplitMix64 stream seeded with
/// seed ^ kBrushCurlSalt, drawn only for a curl, so straight brushes are unchanged and a curl
/// leaves the axes as they were. The overlap check then treats each bristle as its axis
/// inflated by the largest coil radius, a capsule of radius r + radius (1 + jitter): every
/// vertex lies R_k from the axis and every edge (a chord) within it, so this is conservative.
BrushPlanting plant_brush(const BrushSpec& spec);

/// The second stream's seed is the brush's seed XOR this (an arbitrary odd constant).
inline constexpr std::uint64_t kBrushRedrawSalt = 0x5851F42D4C957F2Dull;
/// The curl stream's seed is the brush's seed XOR this (another arbitrary odd constant).
inline constexpr std::uint64_t kBrushCurlSalt = 0x2545F4914F6CDD1Dull;

/// plant_brush(spec).bristles: every bristle's vertices, or none when they cannot be planted
/// clear of each other.
std::vector<std::vector<Vec3>> brush_bristles(const BrushSpec& spec);

/// A circular helix around `axis` through `centre` (issue 15's `helix` generator).
struct HelixSpec {
  Vec3 centre = Vec3::Zero();     ///< a point of the axis, level with the first vertex [m]
  Vec3 axis = Vec3::UnitZ();      ///< unit; the helix advances along it
  double radius = 0.0;            ///< [m], > 0
  double pitch = 0.0;             ///< advance per turn along the axis [m]; 0 gives a circle
  double turns = 1.0;             ///< > 0
  bool right_handed = true;       ///< turns counter-clockwise seen from the tip of `axis`
  int segments = 1;               ///< edges along the whole helix
};

/// `segments` + 1 vertices evenly spaced in angle: x(phi) = centre + r (cos phi u + s sin phi v)
/// + pitch phi / (2 pi) axis, phi in [0, 2 pi turns], s = +1 right-handed, -1 left-handed, with
/// (u, v) = brush_base_axes(axis, 3), so the first vertex is at centre + r u.
std::vector<Vec3> helix_rod(const HelixSpec& spec);

}  // namespace bristle

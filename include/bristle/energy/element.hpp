#pragma once
/// What an energy term declares to the one generic assembly (integrator/element_table.hpp):
/// its stencil as a list of DOF slots, and the kinds of local Hessian its kernel can return.
///
/// A term is a struct with
///   - `kSlots`: the stencil's slots in increasing DOF order, each a vertex (D DOFs) or an
///     edge (1 twist DOF), e.g. {Vertex, Vertex} for a stretched edge;
///   - `Constants`: what one element keeps (rest length, stiffness, ...);
///   - `kEnergyTerm`: which entry of the energy breakdown it adds to; or, for a term that fuses
///     several energies on one stencil (the bend-twist stencil), `kEnergyTerms`, an array of
///     entries, with `energy` returning and `evaluate` passing a std::array of as many values;
///   - `for_each_element(rod, emit)`: calls emit(slots, constants) for each of the rod's
///     stencils, slots given as indices within the rod (vertex i, edge j);
///   - `energy<D>(x, constants)`: the energy of one stencil from its DOF vector x;
///   - `evaluate<D>(x, constants, request, sink)`: calls sink(energy, gradient, hessian) once,
///     the Hessian in whichever representation below suits the kernel.
/// Optionally, a term whose consecutive stencils on a rod overlap (the bend-twist stencils
/// share an edge) declares `Chain`, state an element hands to the next, and
/// `continues(previous element's DOFs, element's DOFs)`, whether an element starts where the
/// one before it ends; `energy`, `evaluate` and `advance` then take a `Chain&` last. The table
/// evaluates a rod's elements in order, passing one Chain along and resetting it (Chain{})
/// before an element that does not continue its predecessor. A chain may carry only what the
/// next element would compute itself, bit for bit: results do not depend on it.
/// Kernels are pure functions of the stencil's DOFs: the table gathers, calls and scatters,
/// so a new term (twist, rod-rod contact) adds a struct and not a new assembly loop. The
/// model is IPC Toolkit's local-to-global assembly (Ferguson et al., "IPC Toolkit", 2020).

#include <array>
#include <type_traits>

#include "bristle/math/types.hpp"

namespace bristle {

/// How element Hessians are made positive semi-definite before assembly.
enum class HessianProjection {
  Exact,        ///< none: the true Hessian (modal analysis, tests)
  Projected,    ///< springs clamped, bending eigen-clamped, both in closed form (energy/bend.hpp)
  GaussNewton,  ///< springs clamped, bending K g g^T
  BendingModes, ///< springs clamped, bending: the stiffness of its two bending modes only (energy/bend.hpp)
};

/// The entry of the energy breakdown a term adds to.
enum class EnergyTerm { Stretch, Bend, Twist, Contact, Friction };

/// The breakdown entries a term's energy adds to, in the order of its energy values.
template <class Term, class = void>
struct EnergyEntries {
  static constexpr std::array<EnergyTerm, 1> value{Term::kEnergyTerm};
};
template <class Term>
struct EnergyEntries<Term, std::void_t<decltype(Term::kEnergyTerms)>> {
  static constexpr auto value = Term::kEnergyTerms;
};

/// A stencil slot: a vertex's D position DOFs or an edge's one twist DOF.
enum class SlotKind { Vertex, Edge };

/// What the assembly asks a kernel for.
struct LocalRequest {
  HessianProjection projection = HessianProjection::Projected;
  bool energy = true;   ///< the energy is used (kernels that fuse it may return it anyway)
  bool hessian = true;  ///< a Hessian is used (matrix or product)
  /// Terms with committed state (Term::advance) keep the state they carry to these DOFs, so
  /// that committing the same positions takes it instead of carrying it again
  /// (ElementTable::advance with reuse_kept, called by SystemAssembler::advance).
  bool keep_state = false;
  /// Terms that keep their local results too (Term::KeptLocal) replay those of the last pass
  /// with keep_state instead of evaluating: the caller has checked that the DOFs are that
  /// pass's, bit for bit, and that the committed state is what that pass carried
  /// (SystemAssembler::assemble). Evaluating would give the same values only because a term
  /// carries its state to the DOFs it was committed at as it is (for the frames:
  /// carried_director in energy/discrete_elastic_rod.cpp).
  bool replay_kept = false;
};

/// Shape of a term's stencil in dimension D: slot sizes, offsets into the local vector, and
/// the local vector's length N.
template <class Term, int D>
struct StencilShape {
  static constexpr int kSlotCount = static_cast<int>(Term::kSlots.size());
  static constexpr int size(int slot) { return Term::kSlots[slot] == SlotKind::Vertex ? D : 1; }
  static constexpr int offset(int slot) {
    int sum = 0;
    for (int a = 0; a < slot; ++a) sum += size(a);
    return sum;
  }
  static constexpr int kDofs = offset(kSlotCount);
  static constexpr int kPairs = kSlotCount * (kSlotCount + 1) / 2;
};

// Local Hessian representations a kernel may hand to its sink. The assembly scatters each
// without forming a dense matrix where the structure allows.

/// No Hessian (not requested).
struct NoHessian {};

/// A two-vertex stencil's Hessian [[B, -B], [-B, B]], B symmetric D x D (a spring).
template <int D>
struct DifferenceBlock {
  Mat<D, D> block;
};

/// A Hessian as the sum of value_k v_k v_k^T over the terms with value_k > 0 (the rest are
/// skipped: a projected spectrum). `Spectrum` has kCount, value[] and vector[] (e.g.
/// BendHessianSpectrum).
template <class Spectrum>
struct PositiveSpectrum {
  const Spectrum& spectrum;
};

}  // namespace bristle

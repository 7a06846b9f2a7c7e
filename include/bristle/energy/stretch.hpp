#pragma once
/// Stretch energy of one edge (2-vertex stencil), in 2D or 3D.
///
///   E = 1/2 k (|d| - L)^2,   d = x1 - x0,   k = E A / L   (interface.md section 2)
///
/// DOF order of the stencil vector: [x0, x1], D entries each.
/// Gradient: dE/dx1 = k (|d| - L) d^ = -dE/dx0.
/// Hessian: [[B, -B], [-B, B]] with B = k [d^ d^T + (1 - L/|d|)(I - d^ d^T)]
/// (physics-notes.md, "Definiteness"). B is indefinite when the edge is compressed; the
/// projected Hessian replaces (1 - L/|d|) by max(0, 1 - L/|d|), which is exactly the
/// projection of the 2D x 2D block matrix onto the PSD cone (the block pattern [[1,-1],[-1,1]]
/// has eigenvalues 0 and 2, so the eigenvalues of the whole are 0 and 2 x those of B).

#include <array>

#include "bristle/energy/element.hpp"
#include "bristle/math/types.hpp"
#include "bristle/model/rod.hpp"

namespace bristle {

template <int D>
struct StretchStencil {
  Vec<D> x0, x1;
};

template <int D>
double stretch_energy(const StretchStencil<D>& s, double rest_length, double stiffness);

template <int D>
Vec<2 * D> stretch_gradient(const StretchStencil<D>& s, double rest_length, double stiffness);

/// The exact Hessian (indefinite when compressed).
template <int D>
Mat<2 * D, 2 * D> stretch_hessian(const StretchStencil<D>& s, double rest_length, double stiffness);

/// The nearest PSD matrix to the exact Hessian (closed form, no eigen-decomposition).
template <int D>
Mat<2 * D, 2 * D> stretch_hessian_projected(const StretchStencil<D>& s, double rest_length,
                                            double stiffness);

/// The D x D block B of the Hessian; the projected variant clamps (1 - L/|d|) at zero.
template <int D>
Mat<D, D> stretch_hessian_block(const StretchStencil<D>& s, double rest_length, double stiffness,
                                bool project);

/// Energy, gradient and Hessian block of one edge in one pass: the assembler's kernel, the
/// same values as the functions above. The Hessian is [[B, -B], [-B, B]].
template <int D>
struct StretchLocal {
  double energy = 0.0;
  Vec<D> gradient1;  ///< dE/dx1 = -dE/dx0
  Mat<D, D> block;   ///< B, projected or exact
};

template <int D>
StretchLocal<D> stretch_local(const StretchStencil<D>& s, double rest_length, double stiffness, bool project);

/// The stretch term for the element table (energy/element.hpp): one element per edge.
struct StretchTerm {
  static constexpr std::array<SlotKind, 2> kSlots{SlotKind::Vertex, SlotKind::Vertex};
  static constexpr EnergyTerm kEnergyTerm = EnergyTerm::Stretch;
  struct Constants {
    double rest_length;
    double stiffness;  ///< E A / L [N/m]
  };

  template <class Emit>
  static void for_each_element(const Rod& rod, Emit&& emit) {
    for (int j = 0; j < rod.edge_count(); ++j)
      emit(std::array<int, 2>{j, j + 1}, Constants{rod.rest_lengths[j], rod.stretch_stiffness(j)});
  }

  template <int D>
  static double energy(const Vec<2 * D>& x, const Constants& c) {
    return stretch_energy<D>({x.template head<D>(), x.template tail<D>()}, c.rest_length, c.stiffness);
  }

  /// The Hessian as its block B; springs are clamped unless the exact Hessian is asked for.
  template <int D, class Sink>
  EIGEN_ALWAYS_INLINE static void evaluate(const Vec<2 * D>& x, const Constants& c, const LocalRequest& request, Sink&& sink) {
    const StretchLocal<D> local = stretch_local<D>({x.template head<D>(), x.template tail<D>()}, c.rest_length,
                                                   c.stiffness, request.projection != HessianProjection::Exact);
    Vec<2 * D> gradient;
    gradient.template head<D>() = -local.gradient1;
    gradient.template tail<D>() = local.gradient1;
    sink(local.energy, gradient, DifferenceBlock<D>{local.block});
  }
};

}  // namespace bristle

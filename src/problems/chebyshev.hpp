// The polynomial preconditioner of the implicit step (time.cg_preconditioner = "chebyshev",
// TeaLeaf's PPCG): z = q(A) r, where q is the polynomial that `degree` steps of the Chebyshev
// iteration for A z = r, started from z = 0, apply on an interval [lo, hi] holding A's spectrum.
// It costs `degree` operator applications (halo exchanges included) and vector updates, and no
// sum over the ranks: the CG's global sums per step fall about as its iterations do.
//
// The interval comes from the first solve: its first `lanczos_steps` CG iterations run without
// a preconditioner, and their coefficients are a Lanczos tridiagonal whose extreme eigenvalues
// approach A's from inside. hi is the largest one raised by kHiMargin (above hi the polynomial
// could turn q negative, and the CG would break down), lo the smallest lowered by kLoMargin.
#pragma once

#include <optional>
#include <utility>
#include <vector>

#include "problems/grid_operator.hpp"

namespace gridsim {

struct SpectrumBounds {
    double lo = 0.0;
    double hi = 0.0;
};

// Margins on the Lanczos estimates (docs/tuning.md, "Chebyshev interval").
inline constexpr double kChebyshevHiMargin = 1.05;
inline constexpr double kChebyshevLoMargin = 0.95;

// The smallest and largest eigenvalues of the symmetric tridiagonal matrix with diagonal `diag`
// and off-diagonal `off` (one shorter), by bisection on Sturm counts.
std::pair<double, double> tridiagonal_extremes(const std::vector<double>& diag,
                                               const std::vector<double>& off);

// The Lanczos tridiagonal of plain CG iterations with step lengths `alpha` and direction
// updates `beta` (beta[k] = r_{k+1}.r_{k+1} / r_k.r_k), and the interval it gives with the
// margins above.
SpectrumBounds lanczos_bounds(const std::vector<double>& alpha, const std::vector<double>& beta);

// q(lambda): what the preconditioner of degree `degree` on `b` multiplies an eigenvector of
// eigenvalue lambda by (the recurrence of ChebyshevPreconditioner::apply on scalars).
double chebyshev_q(const SpectrumBounds& b, int degree, double lambda);

// Whole-field passes (reads + writes, in field sizes) of one application of degree `degree`.
int chebyshev_passes(int degree);

template <class T>
class ChebyshevPreconditioner {
public:
    // The polynomial in `grid`'s operator; allocates its three work fields.
    ChebyshevPreconditioner(GridOperator<T>& grid, int degree);

    void set_bounds(const SpectrumBounds& b) { bounds_ = b; }
    [[nodiscard]] const std::optional<SpectrumBounds>& bounds() const { return bounds_; }
    [[nodiscard]] int degree() const { return degree_; }
    // z = q(A) r, or z += q(A) r where `accumulate` (bounds set); r and z are zero outside the
    // updated points, and stay so.
    void apply(FieldView<T> r, FieldView<T> z, bool accumulate = false);

private:
    GridOperator<T>& grid_;
    int degree_;
    std::optional<SpectrumBounds> bounds_;
    Field<T> w_, d_, q_;  // the inner residual, the inner direction, A d
};

}  // namespace gridsim

#include "problems/chebyshev.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "mesh/box.hpp"

namespace gridsim {

namespace {

// How many eigenvalues of the tridiagonal matrix lie below x (Sturm count of its LDL^T).
int eigenvalues_below(const std::vector<double>& diag, const std::vector<double>& off, double x) {
    int count = 0;
    double pivot = 1.0;
    for (std::size_t i = 0; i < diag.size(); ++i) {
        const double coupling = i == 0 ? 0.0 : off[i - 1] * off[i - 1] / pivot;
        pivot = diag[i] - x - coupling;
        if (pivot == 0.0) pivot = -1e-300;  // x is an eigenvalue: count it below
        if (pivot < 0.0) ++count;
    }
    return count;
}

// The smallest x with at least `k` eigenvalues at or below it, within [lo, hi].
double kth_eigenvalue(const std::vector<double>& diag, const std::vector<double>& off, int k,
                      double lo, double hi) {
    for (int i = 0; i < 200 && hi - lo > 1e-15 * std::max(std::abs(lo), std::abs(hi)); ++i) {
        const double mid = 0.5 * (lo + hi);
        (eigenvalues_below(diag, off, mid) >= k ? hi : lo) = mid;
    }
    return 0.5 * (lo + hi);
}

}  // namespace

std::pair<double, double> tridiagonal_extremes(const std::vector<double>& diag,
                                               const std::vector<double>& off) {
    if (diag.empty() || off.size() + 1 != diag.size())
        throw std::invalid_argument("tridiagonal_extremes: off must be one shorter than diag");
    // Gershgorin's discs hold every eigenvalue.
    double lo = HUGE_VAL;
    double hi = -HUGE_VAL;
    for (std::size_t i = 0; i < diag.size(); ++i) {
        const double radius =
            (i > 0 ? std::abs(off[i - 1]) : 0.0) + (i < off.size() ? std::abs(off[i]) : 0.0);
        lo = std::min(lo, diag[i] - radius);
        hi = std::max(hi, diag[i] + radius);
    }
    const int n = static_cast<int>(diag.size());
    return {kth_eigenvalue(diag, off, 1, lo, hi), kth_eigenvalue(diag, off, n, lo, hi)};
}

SpectrumBounds lanczos_bounds(const std::vector<double>& alpha, const std::vector<double>& beta) {
    const std::size_t n = alpha.size();
    if (n == 0 || beta.size() + 1 < n)
        throw std::invalid_argument("lanczos_bounds: one beta per alpha but the last needed");
    std::vector<double> diag(n);
    std::vector<double> off(n - 1);
    for (std::size_t k = 0; k < n; ++k) {
        diag[k] = 1.0 / alpha[k] + (k > 0 ? beta[k - 1] / alpha[k - 1] : 0.0);
        if (k + 1 < n) off[k] = std::sqrt(beta[k]) / alpha[k];
    }
    const auto [lo, hi] = tridiagonal_extremes(diag, off);
    return {lo * kChebyshevLoMargin, hi * kChebyshevHiMargin};
}

double chebyshev_q(const SpectrumBounds& b, int degree, double lambda) {
    const double theta = 0.5 * (b.hi + b.lo);
    const double delta = 0.5 * (b.hi - b.lo);
    double w = 1.0;
    double d = 1.0 / theta;
    double z = d;
    double rho = delta / theta;
    for (int k = 0; k < degree; ++k) {
        w -= lambda * d;
        const double rho_next = 1.0 / (2.0 * theta / delta - rho);
        d = rho_next * rho * d + 2.0 * rho_next / delta * w;
        z += d;
        rho = rho_next;
    }
    return z;
}

// The first pass reads r and writes w, d and z (4); then per degree A d (2) and a pass that
// reads q, w, d, z and writes w, d, z (7).
int chebyshev_passes(int degree) { return 4 + 9 * degree; }

template <class T>
ChebyshevPreconditioner<T>::ChebyshevPreconditioner(GridOperator<T>& grid, int degree)
    : grid_(grid),
      degree_(degree),
      w_(grid.make_field()),
      d_(grid.make_field()),
      q_(grid.make_field()) {}

// The Chebyshev iteration for A z = r from z = 0 (theta the interval's centre, delta its
// half-width, sigma = theta / delta): d_0 = r / theta; then w_{k+1} = w_k - A d_k,
// rho_{k+1} = 1 / (2 sigma - rho_k), d_{k+1} = rho_{k+1} rho_k d_k + 2 rho_{k+1} / delta w_{k+1},
// with rho_0 = 1 / sigma; z is the sum of the d_k. Each update is one fused pass over the
// updated points (VectorOps::chebyshev_step); outside them w, d and z stay zero, but for the
// halos the operator's exchange writes into d.
template <class T>
void ChebyshevPreconditioner<T>::apply(FieldView<T> r, FieldView<T> z, bool accumulate) {
    if (!bounds_) throw std::logic_error("chebyshev: applied before its interval is known");
    const double theta = 0.5 * (bounds_->hi + bounds_->lo);
    const double delta = 0.5 * (bounds_->hi - bounds_->lo);
    const Box& box = grid_.updated_points();
    auto& ops = grid_.backend().vector_ops();
    {
        auto t = grid_.timer().on_lane(Phase::vector, Lane::boundary);
        ops.chebyshev_step(
            {true, accumulate, T(0), static_cast<T>(1.0 / theta), r, w_.view(), d_.view(), z}, box);
    }
    if (degree_ == 0) return;
    const double sigma = theta / delta;
    double rho = 1.0 / sigma;
    for (int k = 0; k < degree_; ++k) {
        grid_.apply(d_.view(), q_.view());
        const double rho_next = 1.0 / (2.0 * sigma - rho);
        auto t = grid_.timer().on_lane(Phase::vector, Lane::boundary);
        ops.chebyshev_step(
            {false, false, static_cast<T>(rho_next * rho), static_cast<T>(2.0 * rho_next / delta),
             q_.view(), w_.view(), d_.view(), z},
            box);
        rho = rho_next;
    }
}

template class ChebyshevPreconditioner<float>;
template class ChebyshevPreconditioner<double>;

}  // namespace gridsim

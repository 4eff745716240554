// The Chebyshev preconditioner's interval: extreme eigenvalues of a symmetric tridiagonal
// matrix against the analytic spectrum of the 1D Laplacian, and the Lanczos interval of plain
// CG iterations (run here on a diagonal matrix with known eigenvalues) around that spectrum.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "problems/chebyshev.hpp"

using namespace gridsim;

TEST(Chebyshev, TridiagonalExtremesOfTheLaplacian) {
    // tridiag(-1, 2, -1) of order n: 2 - 2 cos(k pi / (n + 1)), k = 1..n.
    for (int n : {1, 2, 7, 50}) {
        const std::vector<double> diag(n, 2.0);
        const std::vector<double> off(n - 1, -1.0);
        const auto [lo, hi] = tridiagonal_extremes(diag, off);
        const double pi = std::acos(-1.0);
        EXPECT_NEAR(lo, 2.0 - 2.0 * std::cos(pi / (n + 1)), 1e-12) << n;
        EXPECT_NEAR(hi, 2.0 - 2.0 * std::cos(n * pi / (n + 1)), 1e-12) << n;
    }
    EXPECT_THROW(tridiagonal_extremes({1.0, 2.0}, {}), std::invalid_argument);
}

// Plain CG on diag(1, 2, ..., n) from x = 0, b = ones: its step lengths and direction updates.
void cg_coefficients(int n, int steps, std::vector<double>& alpha, std::vector<double>& beta) {
    std::vector<double> r(n, 1.0), p(n, 1.0), q(n);
    double rr = n;
    for (int k = 0; k < steps; ++k) {
        double pq = 0.0;
        for (int i = 0; i < n; ++i) pq += p[i] * (q[i] = (i + 1) * p[i]);
        const double a = rr / pq;
        double next = 0.0;
        for (int i = 0; i < n; ++i) next += (r[i] -= a * q[i]) * r[i];
        alpha.push_back(a);
        beta.push_back(next / rr);
        for (int i = 0; i < n; ++i) p[i] = r[i] + next / rr * p[i];
        rr = next;
    }
}

TEST(Chebyshev, LanczosIntervalOfPlainCgHoldsTheSpectrum) {
    std::vector<double> alpha, beta;
    cg_coefficients(100, 30, alpha, beta);
    const SpectrumBounds b = lanczos_bounds(alpha, beta);
    // Ritz values lie inside [1, 100] and the largest converges first: hi is 100 raised by the
    // margin, give or take; lo is at most the smallest Ritz value lowered by it.
    EXPECT_GE(b.hi, 100.0);
    EXPECT_LE(b.hi, 100.0 * kChebyshevHiMargin * (1 + 1e-9));
    EXPECT_GE(b.lo, 1.0 * kChebyshevLoMargin);
    EXPECT_LT(b.lo, 10.0);
    // Every iteration of an n = 8 system: the Ritz values are the eigenvalues.
    alpha.clear();
    beta.clear();
    cg_coefficients(8, 8, alpha, beta);
    const SpectrumBounds exact = lanczos_bounds(alpha, beta);
    EXPECT_NEAR(exact.lo, 1.0 * kChebyshevLoMargin, 1e-9);
    EXPECT_NEAR(exact.hi, 8.0 * kChebyshevHiMargin, 1e-9);
    EXPECT_THROW(lanczos_bounds({}, {}), std::invalid_argument);
}

// chebyshev_q is the Chebyshev iteration's polynomial: the residual polynomial 1 - lambda q(lambda)
// of degree m + 1 equioscillates on [lo, hi] with amplitude 1 / T_{m+1}((hi + lo) / (hi - lo)),
// the minimax bound, and q(lambda) > 0 there (the preconditioner is positive definite).
TEST(Chebyshev, ScalarPolynomialMeetsTheMinimaxBound) {
    const SpectrumBounds b{2.0, 50.0};
    const double sigma = (b.hi + b.lo) / (b.hi - b.lo);
    for (int m : {0, 1, 2, 5}) {
        const double bound = 1.0 / std::cosh((m + 1) * std::acosh(sigma));
        double most = 0.0;
        for (int i = 0; i <= 1000; ++i) {
            const double lambda = b.lo + (b.hi - b.lo) * i / 1000.0;
            const double q = chebyshev_q(b, m, lambda);
            EXPECT_GT(q, 0.0) << m;
            most = std::max(most, std::abs(1.0 - lambda * q));
        }
        EXPECT_NEAR(most, bound, 1e-9) << m;
    }
}

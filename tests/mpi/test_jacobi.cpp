// Jacobi: the 2D `benchmark` boundary against an independent implementation written here
// with the benchmark's own full-array loops (boundary columns, periodic mirror rows), and a 3D
// Dirichlet problem whose exact steady state is known.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cmath>

#include "support/mpi_helpers.hpp"

using namespace gridsim;

namespace {

constexpr double kPi = 3.14159265358979323846;

// The standard multi-GPU Jacobi benchmark on an nx x ny float array, serially: returns the
// array after `sweeps` sweeps and the residual every `norm_every` sweeps.
struct Reference {
    std::vector<float> a;
    std::vector<double> residuals;
};

Reference benchmark_reference(int nx, int ny, int sweeps, int norm_every) {
    std::vector<float> a(static_cast<std::size_t>(nx) * ny, 0.0f);
    for (int iy = 0; iy < ny; ++iy) {
        const auto v = static_cast<float>(std::sin(2.0 * kPi * iy / (ny - 1)));
        a[iy * nx + 0] = v;
        a[iy * nx + nx - 1] = v;
    }
    std::vector<float> b = a;
    Reference ref;
    for (int s = 1; s <= sweeps; ++s) {
        double sum = 0.0;
        for (int iy = 1; iy < ny - 1; ++iy)
            for (int ix = 1; ix < nx - 1; ++ix) {
                const float v = 0.25f * (a[iy * nx + ix - 1] + a[iy * nx + ix + 1] +
                                         a[(iy - 1) * nx + ix] + a[(iy + 1) * nx + ix]);
                b[iy * nx + ix] = v;
                sum += (double(v) - a[iy * nx + ix]) * (double(v) - a[iy * nx + ix]);
            }
        for (int ix = 1; ix < nx - 1; ++ix) {  // periodic in y over the updated rows
            b[0 * nx + ix] = b[(ny - 2) * nx + ix];
            b[(ny - 1) * nx + ix] = b[1 * nx + ix];
        }
        std::swap(a, b);
        if (s % norm_every == 0) ref.residuals.push_back(std::sqrt(sum));
    }
    ref.a = a;
    return ref;
}

}  // namespace

TEST(JacobiBenchmark, MatchesAnIndependentImplementation) {
    const int nx = 14, ny = 12, sweeps = 9, every = 3;
    const std::string deck = fmt::format(
        "[problem]\nname = \"jacobi\"\n[grid]\ncells = [{}, {}]\n[boundary]\nkind = \"benchmark\"\n"
        "[time]\nsteps = {}\nnorm_every = {}\n",
        nx, ny, sweeps, every);
    const RunResult r = test::run_on_ranks(test::world_size(), deck, {});
    if (test::world_rank() != 0) return;
    const Reference ref = benchmark_reference(nx, ny, sweeps, every);
    // gridsim stores the solved rows 1..ny-2 (rows 0 and ny-1 are their mirrors).
    ASSERT_EQ(r.global_field.size(), static_cast<std::size_t>(nx) * (ny - 2));
    for (int iy = 1; iy < ny - 1; ++iy)
        for (int ix = 0; ix < nx; ++ix) {
            EXPECT_NEAR(r.global_field[(iy - 1) * nx + ix], ref.a[iy * nx + ix], 1e-6)
                << "ix " << ix << " iy " << iy;
        }
    ASSERT_EQ(r.residual_history.size(), ref.residuals.size());
    for (std::size_t n = 0; n < ref.residuals.size(); ++n) {
        EXPECT_EQ(r.residual_history[n].first, static_cast<std::int64_t>((n + 1) * every));
        EXPECT_NEAR(r.residual_history[n].second, ref.residuals[n], 1e-5 * ref.residuals[n]);
    }
    EXPECT_GT(ref.residuals.front(), 0.0);
}

TEST(Jacobi3D, ConvergesToTheConstantSteadyState) {
    // All faces at 1, zero interior: the harmonic solution is u = 1 everywhere.
    const std::string deck =
        "[problem]\nname = \"jacobi\"\nprecision = \"double\"\n[grid]\ncells = [10, 9, 8]\n"
        "[boundary]\nvalue = 1.0\n[time]\nsteps = 5000\ntolerance = 1e-9\nnorm_every = 5\n";
    const RunResult r = test::run_on_ranks(test::world_size(), deck, {});
    if (test::world_rank() != 0) return;
    EXPECT_TRUE(r.converged);
    EXPECT_LT(r.steps, 5000);
    EXPECT_LT(r.final_norm, 1e-9);
    for (std::size_t n = 1; n < r.residual_history.size(); ++n) {
        EXPECT_LT(r.residual_history[n].second, r.residual_history[n - 1].second);
    }
    double worst = 0.0;
    for (double v : r.global_field) worst = std::max(worst, std::abs(v - 1.0));
    EXPECT_LT(worst, 1e-7);
}

// The residual of sweep n is read after sweep n+1 was issued; a run that converges at n must
// stop exactly there: the sweep it reports, its history and its field are those of a run that
// was told to stop at n. The tolerance is placed between two residuals of a reference run.
TEST(JacobiTolerance, StopsAtExactlyTheSweepThatConverged) {
    const std::string deck =
        "[problem]\nname = \"jacobi\"\nprecision = \"double\"\n[grid]\ncells = [17, 13]\n"
        "[boundary]\nkind = \"benchmark\"\n[time]\nsteps = 60\nnorm_every = 1\n";
    const int n = test::world_size();
    const RunResult all = test::run_on_ranks(n, deck, {});
    double tol = 0.0;
    std::int64_t expected = 0;
    if (test::world_rank() == 0) {
        ASSERT_EQ(all.residual_history.size(), 60u);
        expected = all.residual_history[36].first;  // sweep 37 is the first below tol
        tol = 0.5 * (all.residual_history[35].second + all.residual_history[36].second);
        ASSERT_LT(all.residual_history[36].second, all.residual_history[35].second);
    }
    MPI_Bcast(&tol, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    MPI_Bcast(&expected, 1, MPI_INT64_T, 0, MPI_COMM_WORLD);
    for (int every : {1, 37}) {
        const RunResult stopped = test::run_on_ranks(
            n, deck,
            {fmt::format("time.tolerance={:.17g}", tol), fmt::format("time.norm_every={}", every)});
        const RunResult fixed = test::run_on_ranks(
            n, deck, {fmt::format("time.steps={}", expected), "time.norm_every=1"});
        if (test::world_rank() != 0) continue;
        SCOPED_TRACE(every);
        EXPECT_TRUE(stopped.converged);
        EXPECT_EQ(stopped.steps, expected);
        ASSERT_FALSE(stopped.residual_history.empty());
        EXPECT_EQ(stopped.residual_history.back().first, expected);
        EXPECT_EQ(stopped.residual_history.back().second, fixed.residual_history.back().second);
        EXPECT_EQ(stopped.global_field, fixed.global_field);
    }
}

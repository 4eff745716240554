// Implicit heat (problem.scheme = "implicit": backward Euler, CG) against references computed
// here from the README's definitions, not from the solver's own analytic code:
//  - one step multiplies a Fourier mode by exactly 1 / (1 + sum_d 4 r_d sin^2(kappa_d h_d / 2)),
//    up to the CG tolerance (2D and 3D, Dirichlet and periodic, float and double, both vector
//    kernels, with and without the preconditioner);
//  - dt = 100 x the explicit limit stays bounded, and the error against the continuous solution
//    at a fixed time halves with dt (first order);
//  - the field does not depend on the decomposition (1, 2, 4 ranks, overlap on and off) beyond
//    the CG tolerance, nor on the vector kernels;
//  - a solve that cannot converge ends the run with RunFailure.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cmath>

#include "support/mpi_helpers.hpp"
#include "support/sine_mode.hpp"

using namespace gridsim;

namespace {

struct ModeCase {
    const char* name;
    int dims;
    const char* precision;
    std::array<bool, 3> periodic;
    const char* extra;  // more --set overrides, ';'-separated
    double tolerance;   // max abs error against the exact discrete solution (amplitude 1)
};

void PrintTo(const ModeCase& c, std::ostream* os) { *os << c.name; }

std::vector<std::string> split(const std::string& text) {
    std::vector<std::string> out;
    std::size_t start = 0;
    while (start < text.size()) {
        const std::size_t end = text.find(';', start);
        out.push_back(text.substr(start, end - start));
        if (end == std::string::npos) break;
        start = end + 1;
    }
    return out;
}

// The sine mode of the deck after `steps` backward-Euler steps, at every point of the grid.
std::vector<double> exact_implicit(const Config& c) {
    return test::sine_mode_after_steps(c, [](double drop) { return 1.0 / (1.0 + drop); });
}

// Modes (1, 2, 1) / (2, 1) plus a second mode would make CG take several iterations; the
// hot spot below does that. Here the first guess is a scaled eigenvector, so the test is of
// the operator, the boundary handling and the stopping rule.
std::string mode_deck(const ModeCase& m) {
    return test::sine_mode_deck(m.dims, m.precision, m.periodic, "scheme = \"implicit\"\n",
                                "cfl = 20.0\nsteps = 12\n");
}

double max_abs_difference(const std::vector<double>& a, const std::vector<double>& b) {
    double worst = 0.0;
    for (std::size_t p = 0; p < a.size(); ++p) worst = std::max(worst, std::abs(a[p] - b[p]));
    return worst;
}

class ImplicitModeTest : public testing::TestWithParam<ModeCase> {};

}  // namespace

TEST_P(ImplicitModeTest, MatchesTheExactDiscreteSolutionToTheCgTolerance) {
    const ModeCase& m = GetParam();
    const std::string deck = mode_deck(m);
    const std::vector<std::string> sets = split(m.extra);
    const RunResult r = test::run_on_ranks(test::world_size(), deck, sets);
    if (test::world_rank() != 0) return;
    const std::vector<double> expect = exact_implicit(load_config(deck, "t.toml", sets));
    ASSERT_EQ(r.global_field.size(), expect.size());
    EXPECT_LT(max_abs_difference(r.global_field, expect), m.tolerance);
    EXPECT_GT(r.problem_report["cg"]["iterations_per_step"]["total"].get<int>(), 0);
}

INSTANTIATE_TEST_SUITE_P(
    Modes, ImplicitModeTest,
    testing::Values(ModeCase{"d2_double_dirichlet", 2, "double", {false, false, false}, "", 1e-9},
                    ModeCase{"d2_double_periodic_x", 2, "double", {true, false, false}, "", 1e-9},
                    ModeCase{"d3_double_dirichlet", 3, "double", {false, false, false}, "", 1e-9},
                    ModeCase{"d3_double_periodic", 3, "double", {true, true, true}, "", 1e-9},
                    ModeCase{"d3_double_fused_jacobi",
                             3,
                             "double",
                             {false, true, false},
                             "parallel.cg_kernels=\"fused\";time.cg_preconditioner=\"jacobi\"",
                             1e-9},
                    ModeCase{"d2_float_dirichlet",
                             2,
                             "float",
                             {false, false, false},
                             "time.cg_tolerance=1e-5",
                             2e-5},
                    ModeCase{"d3_float_mixed_fused",
                             3,
                             "float",
                             {false, true, false},
                             "time.cg_tolerance=1e-5;parallel.cg_kernels=\"fused\"",
                             2e-5}),
    [](const testing::TestParamInfo<ModeCase>& info) { return info.param.name; });

// 100 x the explicit limit: the explicit scheme would blow up at once; backward Euler decays.
// At a fixed end time, halving dt halves the error against the continuous solution.
TEST(ImplicitHeat, UnconditionallyStableAndFirstOrderInTime) {
    const std::string deck =
        "[problem]\nscheme = \"implicit\"\n[grid]\ncells = [33, 33]\n[time]\ncfl = 100.0\n"
        "steps = 8\ncg_tolerance = 1e-12\n";
    const RunResult big = test::run_on_ranks(test::world_size(), deck, {});
    std::vector<double> errors;
    for (int refine : {1, 2, 4}) {
        const RunResult r = test::run_on_ranks(
            test::world_size(), deck,
            {fmt::format("time.cfl={}", 100.0 / refine), fmt::format("time.steps={}", 8 * refine)});
        if (test::world_rank() == 0) errors.push_back(r.error_continuous->max_abs);
    }
    if (test::world_rank() != 0) return;
    EXPECT_LE(big.final_stats.max, 1.0);  // the initial amplitude
    EXPECT_GE(big.final_stats.min, 0.0);  // a positive mode stays positive
    EXPECT_GT(big.final_stats.max, 0.0);
    // Backward Euler's time error dominates at this dt (the space error is O(h^2) ~ 1e-3 of
    // it): each halving of dt roughly halves the error.
    for (std::size_t n = 1; n < errors.size(); ++n) {
        const double ratio = errors[n - 1] / errors[n];
        EXPECT_GT(ratio, 1.7) << "refinement " << n;
        EXPECT_LT(ratio, 2.3) << "refinement " << n;
    }
}

// A hot spot with mixed faces needs many CG iterations; 1, 2 and 4 ranks, overlap on and off,
// the BLAS and the fused vector kernels all land within the CG tolerance of one another.
TEST(ImplicitHeat, DecompositionAndKernelsAgreeWithinTheTolerance) {
    const std::string deck =
        "[problem]\nscheme = \"implicit\"\n[grid]\ncells = [21, 17, 13]\n[boundary]\n"
        "x = \"periodic\"\nface_values = [0, 0, 1.5, -0.5, 0.25, 0]\n[initial]\nkind = "
        "\"hotspot\"\ncenter = [0.2, 0.6, 0.5]\nradius = 0.3\n[time]\ncfl = 30.0\nsteps = 6\n"
        "cg_tolerance = 1e-10\n";
    const RunResult one = test::run_on_ranks(1, deck, {});
    for (int n : {1, 2, 4}) {
        if (n > test::world_size()) continue;
        for (const char* kernels : {"cublas", "fused"}) {
            for (const char* overlap : {"true", "false"}) {
                const RunResult r =
                    test::run_on_ranks(n, deck,
                                       {fmt::format("parallel.cg_kernels=\"{}\"", kernels),
                                        fmt::format("parallel.overlap={}", overlap)});
                if (test::world_rank() != 0) continue;
                SCOPED_TRACE(fmt::format("{} ranks, {} kernels, overlap {}", n, kernels, overlap));
                ASSERT_EQ(r.global_field.size(), one.global_field.size());
                EXPECT_LT(max_abs_difference(r.global_field, one.global_field), 1e-8);
                EXPECT_GE(r.problem_report["cg"]["iterations_per_step"]["min"].get<int>(), 5);
                // The CPU backend's ranks all-reduce on the host (NCCL needs GPUs).
                EXPECT_EQ(r.problem_report["cg"]["allreduce"].get<std::string>(), "mpi");
            }
        }
    }
}

TEST(ImplicitHeat, ACgThatCannotConvergeEndsTheRun) {
    const std::string deck =
        "[problem]\nscheme = \"implicit\"\n[grid]\ncells = [21, 17]\n[initial]\nkind = "
        "\"hotspot\"\n[time]\ncfl = 50.0\nsteps = 3\ncg_max_iterations = 2\n";
    EXPECT_THROW(test::run_on_ranks(test::world_size(), deck, {}), RunFailure);
}

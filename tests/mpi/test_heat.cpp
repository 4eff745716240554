// Explicit heat against its analytic solutions, with the references computed here from the
// formulas of the README ("Deck keys") (not from the solver's own analytic code):
//  - one step multiplies a Fourier mode by exactly lambda = 1 - sum_d 4 r_d sin^2(kappa_d h_d/2);
//  - the continuous solution decays as exp(-alpha sum_d kappa_d^2 t): second order in h;
//  - a periodic problem conserves the sum of u.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cmath>
#include <numeric>

#include "problems/problem.hpp"
#include "support/mpi_helpers.hpp"
#include "support/sine_mode.hpp"

using namespace gridsim;

namespace {

constexpr double kPi = 3.14159265358979323846;

struct ModeCase {
    const char* name;
    int dims;
    const char* precision;
    std::array<bool, 3> periodic;
    double tolerance;  // max abs error against the exact discrete solution (amplitude 1)
};

void PrintTo(const ModeCase& c, std::ostream* os) { *os << c.name; }

// Exact discrete solution at every point of the solved grid after `steps` steps.
std::vector<double> exact_discrete(const Config& c) {
    return test::sine_mode_after_steps(c, [](double drop) { return 1.0 - drop; });
}

std::string mode_deck(const ModeCase& m) {
    return test::sine_mode_deck(m.dims, m.precision, m.periodic, "", "cfl = 0.9\nsteps = 40\n");
}

class HeatModeTest : public testing::TestWithParam<ModeCase> {};

}  // namespace

TEST_P(HeatModeTest, MatchesTheExactDiscreteSolutionToRounding) {
    const ModeCase& m = GetParam();
    const std::string deck = mode_deck(m);
    const RunResult r = test::run_on_ranks(test::world_size(), deck, {});
    if (test::world_rank() != 0) return;
    const std::vector<double> expect = exact_discrete(load_config(deck, "t.toml", {}));
    ASSERT_EQ(r.global_field.size(), expect.size());
    double max_err = 0.0;
    for (std::size_t p = 0; p < expect.size(); ++p)
        max_err = std::max(max_err, std::abs(r.global_field[p] - expect[p]));
    EXPECT_LT(max_err, m.tolerance);
    // The solver's own report agrees (it uses the same definition).
    ASSERT_TRUE(r.error_discrete.has_value());
    EXPECT_LT(r.error_discrete->max_abs, m.tolerance);
    EXPECT_NEAR(r.error_discrete->max_abs, max_err, m.tolerance);
}

INSTANTIATE_TEST_SUITE_P(
    Modes, HeatModeTest,
    testing::Values(ModeCase{"d2_double_dirichlet", 2, "double", {false, false, false}, 1e-13},
                    ModeCase{"d2_double_periodic_x", 2, "double", {true, false, false}, 1e-13},
                    ModeCase{"d3_double_dirichlet", 3, "double", {false, false, false}, 1e-13},
                    ModeCase{"d3_double_periodic", 3, "double", {true, true, true}, 1e-13},
                    ModeCase{"d2_float_dirichlet", 2, "float", {false, false, false}, 2e-6},
                    ModeCase{"d3_float_mixed", 3, "float", {false, true, false}, 2e-6}),
    [](const testing::TestParamInfo<ModeCase>& info) { return info.param.name; });

// Max abs error against the continuous solution of the 2D sin(pi x) sin(pi y) mode at t = T,
// on an n x n grid with dt = T / steps and steps chosen so alpha*dt/h^2 stays about 0.2.
double continuous_error(int n) {
    const double T = 0.02;
    const double h = 1.0 / (n - 1);
    const auto steps = static_cast<long>(std::ceil(T / (0.2 * h * h)));
    const std::string deck = fmt::format(
        "[grid]\ncells = [{0}, {0}]\n[time]\ndt = {1:.17g}\nsteps = {2}\n", n, T / steps, steps);
    const RunResult r = test::run_on_ranks(test::world_size(), deck, {});
    double err = 0.0;
    if (test::world_rank() != 0) return err;
    const double decay = std::exp(-2 * kPi * kPi * T);
    for (int j = 0; j < n; ++j)
        for (int i = 0; i < n; ++i) {
            const double exact = decay * std::sin(kPi * i * h) * std::sin(kPi * j * h);
            err = std::max(err,
                           std::abs(r.global_field[i + static_cast<std::size_t>(n) * j] - exact));
        }
    return err;
}

TEST(HeatConvergence, SecondOrderAgainstTheContinuousSolution) {
    const double e1 = continuous_error(17);
    const double e2 = continuous_error(33);
    const double e3 = continuous_error(65);
    if (test::world_rank() != 0) return;
    const double p1 = std::log2(e1 / e2);
    const double p2 = std::log2(e2 / e3);
    EXPECT_NEAR(p1, 2.0, 0.15) << "errors " << e1 << " " << e2;
    EXPECT_NEAR(p2, 2.0, 0.15) << "errors " << e2 << " " << e3;
    EXPECT_LT(e3, e2);
}

TEST(HeatPeriodic, ConservesTheSumOfU) {
    const std::string deck =
        "[grid]\ncells = [14, 11, 9]\n[boundary]\nkind = \"periodic\"\n"
        "[initial]\nkind = \"hotspot\"\nradius = 0.25\namplitude = 3.0\n";
    const RunResult early = test::run_on_ranks(test::world_size(), deck, {"time.steps=1"});
    const RunResult late = test::run_on_ranks(test::world_size(), deck, {"time.steps=60"});
    if (test::world_rank() != 0) return;
    const double s1 = std::accumulate(early.global_field.begin(), early.global_field.end(), 0.0);
    const double s2 = std::accumulate(late.global_field.begin(), late.global_field.end(), 0.0);
    EXPECT_GT(s1, 1.0);
    EXPECT_NEAR(s2, s1, 1e-11 * s1);
    // ... and diffuses: the peak drops.
    EXPECT_LT(*std::max_element(late.global_field.begin(), late.global_field.end()),
              *std::max_element(early.global_field.begin(), early.global_field.end()));
}

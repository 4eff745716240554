// The initial condition every backend evaluates (kernels/initial.hpp), against the definitions
// written out here independently: sine modes, the hot spot (points on its sphere are inside),
// constant, Dirichlet faces (x wins over y, y over z where faces meet) and the benchmark columns.
#include <gtest/gtest.h>

#include <cmath>

#include "config/config.hpp"
#include "engine/initial.hpp"
#include "mesh/domain.hpp"
#include "problems/problem.hpp"

using namespace gridsim;

namespace {

constexpr double kPi = 3.14159265358979323846;

double at(const InitialParams& p, int i, int j, int k) {
    const int g[3] = {i, j, k};
    return initial_value(p, g);
}

InitialParams params(const std::string& deck) {
    const Config cfg = load_config(deck, "t.toml", {});
    return make_initial_params(cfg, make_domain(cfg));
}

}  // namespace

TEST(InitialValue, SineModeOnDirichletAndPeriodicAxes) {
    // x Dirichlet (sin, zero at both ends), y periodic (cos over the period N h), 2D.
    const InitialParams p = params(
        "[grid]\ncells = [11, 8]\nlength = [2.0, 1.0]\n[boundary]\ny = \"periodic\"\n"
        "[initial]\nkind = \"sine\"\nmodes = [2, 1]\namplitude = 3.0\n");
    const double hx = 2.0 / 10;
    const double hy = 1.0 / 7;
    for (int j = 0; j < 8; ++j) {
        for (int i = 1; i < 10; ++i) {
            const double want = 3.0 * std::sin(2 * kPi / 2.0 * (i * hx)) *
                                std::cos(2 * kPi * 1 / (8 * hy) * (j * hy));
            EXPECT_NEAR(at(p, i, j, 0), want, 1e-14) << i << " " << j;
        }
        EXPECT_EQ(at(p, 0, j, 0), 0.0);  // Dirichlet faces hold their value (0)
        EXPECT_EQ(at(p, 10, j, 0), 0.0);
    }
}

TEST(InitialValue, HotSpotIncludesItsSphere) {
    // Centre (0.5, 0.5, 0.5), radius 0.25 of the shortest length 1, h = 1/8: the point two
    // steps from the centre along x lies exactly on the sphere (0.25^2 in binary is exact).
    const InitialParams p = params(
        "[grid]\ncells = [9, 9, 9]\n[boundary]\nkind = \"periodic\"\n[initial]\nkind = "
        "\"hotspot\"\nradius = 0.25\namplitude = 5.0\nvalue = -1.0\n");
    EXPECT_EQ(at(p, 4, 4, 4), 5.0);
    EXPECT_EQ(at(p, 6, 4, 4), 5.0);  // on the sphere: inside
    EXPECT_EQ(at(p, 4, 2, 4), 5.0);
    EXPECT_EQ(at(p, 7, 4, 4), -1.0);
    EXPECT_EQ(at(p, 6, 5, 4), -1.0);  // (0.25^2 + 0.125^2) > 0.25^2
}

TEST(InitialValue, DirichletFacesXWinsThenY) {
    const InitialParams p = params(
        "[grid]\ncells = [5, 6, 7]\n[boundary]\nface_values = [1, 2, 3, 4, 5, 6]\n"
        "[initial]\nkind = \"constant\"\nvalue = 9.0\n");
    EXPECT_EQ(at(p, 2, 2, 2), 9.0);
    EXPECT_EQ(at(p, 0, 0, 0), 1.0);  // x low beats y low and z low
    EXPECT_EQ(at(p, 4, 5, 6), 2.0);  // x high beats y high and z high
    EXPECT_EQ(at(p, 2, 0, 6), 3.0);  // y low beats z high
    EXPECT_EQ(at(p, 2, 5, 0), 4.0);  // y high beats z low
    EXPECT_EQ(at(p, 2, 2, 0), 5.0);
    EXPECT_EQ(at(p, 2, 2, 6), 6.0);
}

TEST(InitialValue, BenchmarkColumnsHoldTheSine) {
    const InitialParams p = params(
        "[problem]\nname = \"jacobi\"\n[grid]\ncells = [7, 9]\n[boundary]\nkind = \"benchmark\"\n");
    for (int j = 0; j < 9; ++j) {
        const double want = std::sin(2.0 * kPi * j / 8);
        EXPECT_EQ(at(p, 0, j, 0), want);
        EXPECT_EQ(at(p, 6, j, 0), want);
        EXPECT_EQ(at(p, 3, j, 0), 0.0);  // zero interior
    }
}

// The density field: the background, then each region over the points it holds, box ends
// included, a later region over an earlier one; Dirichlet faces hold densities too.
TEST(InitialValue, DensityRegionsInDeckOrder) {
    // h = 1/8 on both axes: x = i/8, y = j/8. Box x in [0.25, 0.5], y in [0, 0.75]; sphere at
    // (0.5, 0.5) of radius 0.25 (0.25^2 exact in binary) over it.
    const Config cfg = load_config(
        "[problem]\nconductivity = \"density\"\n[grid]\ncells = [9, 9]\n[initial]\ndensity = 2.0\n"
        "[[initial.regions]]\nshape = \"box\"\nlo = [0.25, 0.0]\nhi = [0.5, 0.75]\ndensity = "
        "7.0\n[[initial.regions]]\nshape = \"sphere\"\ncenter = [0.5, 0.5]\nradius = 0.25\n"
        "density = 0.5\n",
        "t.toml", {});
    ASSERT_EQ(cfg.regions.size(), 2u);
    const InitialParams p = make_density_params(cfg, make_domain(cfg));
    EXPECT_EQ(at(p, 0, 0, 0), 2.0);  // a Dirichlet corner: the background, not a face value
    EXPECT_EQ(at(p, 2, 0, 0), 7.0);  // the box's lower ends are inside
    EXPECT_EQ(at(p, 4, 6, 0), 0.5);  // on both; the sphere comes later
    EXPECT_EQ(at(p, 3, 1, 0), 7.0);  // the box only
    EXPECT_EQ(at(p, 2, 7, 0), 2.0);  // above the box's hi (0.875 > 0.75), outside the sphere
    EXPECT_EQ(at(p, 6, 4, 0), 0.5);  // on the sphere (0.25 from the centre along x): inside
    EXPECT_EQ(at(p, 6, 5, 0), 2.0);  // (0.25^2 + 0.125^2) > 0.25^2
    EXPECT_EQ(at(p, 1, 4, 0), 2.0);  // left of the box
}

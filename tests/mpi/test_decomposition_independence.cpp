// The same deck on 1, 2 and 4 ranks, over several process-grid shapes, with overlap on, off,
// "auto" and "fused", gives bitwise identical global fields (double): the per-point arithmetic
// must not depend on where the block boundaries fall or on the order of the step's phases.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "support/mpi_helpers.hpp"

using namespace gridsim;

namespace {

struct Case {
    const char* name;
    std::string deck;
    std::vector<std::vector<int>> grids;  // process grids to try (those that fit the rank count)
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

int product(const std::vector<int>& g) {
    int p = 1;
    for (int v : g) p *= v;
    return p;
}

// Up to 8 ranks (2x2x2, a whole node's GPUs); a grid needing more ranks than run is skipped.
const std::vector<std::vector<int>> k3D = {{2, 1, 1}, {1, 2, 1}, {1, 1, 2}, {4, 1, 1}, {2, 2, 1},
                                           {1, 2, 2}, {2, 1, 2}, {1, 1, 4}, {2, 2, 2}};
const std::vector<std::vector<int>> k2D = {{2, 1}, {1, 2}, {4, 1}, {2, 2}, {1, 4}, {4, 2}, {2, 4}};

const std::vector<Case> kCases = {
    {"heat3d_dirichlet_sine", "[grid]\ncells = [13, 11, 9]\n[time]\nsteps = 20\n", k3D},
    {"heat3d_periodic_hotspot",
     "[grid]\ncells = [12, 10, 9]\n[boundary]\nkind = \"periodic\"\n[initial]\nkind = "
     "\"hotspot\"\nradius = 0.3\n"
     "[time]\nsteps = 25\n",
     k3D},
    {"heat2d_mixed_faces",
     "[grid]\ncells = [17, 13]\n[boundary]\nx = \"periodic\"\nface_values = [0, 0, 1.5, -0.5]\n"
     "[initial]\nkind = \"hotspot\"\ncenter = [0.2, 0.6]\n[time]\nsteps = 30\n",
     k2D},
    {"jacobi2d_benchmark",
     "[problem]\nname = \"jacobi\"\nprecision = \"double\"\n[grid]\ncells = [16, 14]\n"
     "[boundary]\nkind = \"benchmark\"\n[time]\nsteps = 30\nnorm_every = 5\n",
     k2D},
    {"jacobi3d_face_values",
     "[problem]\nname = \"jacobi\"\nprecision = \"double\"\n[grid]\ncells = [9, 8, 7]\n"
     "[boundary]\nface_values = [1, 2, 3, 4, 5, 6]\n[time]\nsteps = 15\n",
     k3D},
};

class DecompositionIndependence : public testing::TestWithParam<Case> {};

}  // namespace

TEST_P(DecompositionIndependence, GlobalFieldIsBitwiseIdentical) {
    const Case& c = GetParam();
    const std::vector<double> reference = test::run_on_ranks(1, c.deck, {}).global_field;
    for (const auto& grid : c.grids) {
        const int n = product(grid);
        if (n > test::world_size()) continue;
        for (const char* overlap : {"true", "false", "\"auto\"", "\"fused\""}) {
            const std::vector<std::string> sets = {
                fmt::format("parallel.process_grid=[{}]", fmt::join(grid, ",")),
                fmt::format("parallel.overlap={}", overlap)};
            const RunResult r = test::run_on_ranks(n, c.deck, sets);
            if (test::world_rank() != 0) continue;
            SCOPED_TRACE(fmt::format("process grid {} overlap {}", fmt::join(grid, "x"), overlap));
            ASSERT_EQ(r.global_field.size(), reference.size());
            std::size_t differ = 0;
            for (std::size_t p = 0; p < reference.size(); ++p)
                differ += r.global_field[p] != reference[p] ? 1 : 0;
            EXPECT_EQ(differ, 0u) << "points that differ from the 1-rank run";
        }
    }
}

INSTANTIATE_TEST_SUITE_P(Decks, DecompositionIndependence, testing::ValuesIn(kCases),
                         [](const testing::TestParamInfo<Case>& info) { return info.param.name; });

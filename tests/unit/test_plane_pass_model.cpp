// The 3D pass's modelled time on a rank's block (src/parallel/plane_pass_model.hpp), against the
// launch grids Nsight Compute reported for the CUDA pass and the times measured on one H200
// (heat 3D double, `gridsim run inputs/bench_heat3d.toml --set grid.cells=[...] --set
// parallel.time_block=k`, us per step, 2026-11-28).
#include <gtest/gtest.h>

#include <array>

#include "kernels/levels_3d_tile.hpp"
#include "parallel/plane_pass_model.hpp"

using namespace gridsim;

namespace {
using Block = std::array<long long, 3>;
}  // namespace

// The launches Nsight Compute profiled at 2 levels in double: 512 x 256 x 256 in a grid of
// 19 x 6 x 1 blocks (114 tiles, one chunk: fewer blocks than multiprocessors), 512^3 in 19 x 12 x 4
// (228 tiles, four chunks of 128 planes). By hand at 3 levels (tiles 26 x 42 points): a 512 x 256
// cross-section takes 20 x 7 tiles, 256 x 512 takes 10 x 13.
TEST(PlanePassModel, CountsTheTilesAndChunksOfTheCudaPass) {
    const PlanePassShape slab = plane_pass_shape(Block{512, 256, 256}, 8, 2);
    EXPECT_EQ(slab.tiles, 19 * 6);
    EXPECT_EQ(slab.blocks, 19 * 6);
    EXPECT_EQ(slab.waves, 1);
    EXPECT_EQ(slab.steps, 256 + 3 * 2);
    const PlanePassShape cube = plane_pass_shape(Block{512, 512, 512}, 8, 2);
    EXPECT_EQ(cube.tiles, 19 * 12);
    EXPECT_EQ(cube.planes, 128);
    EXPECT_EQ(cube.blocks, 19 * 12 * 4);
    EXPECT_EQ(plane_pass_shape(Block{512, 256, 256}, 8, 3).tiles, 20 * 7);
    EXPECT_EQ(plane_pass_shape(Block{256, 512, 256}, 8, 3).tiles, 10 * 13);
    // Float lanes hold two points: tiles 64 points wide, 60 written at 2 levels.
    EXPECT_EQ(plane_pass_shape(Block{512, 256, 256}, 4, 2).tiles, 9 * 6);
    EXPECT_THROW(plane_pass_shape(Block{64, 64, 64}, 8, kMaxLevels3d + 1), std::logic_error);
}

// A box off the origin: its first tile starts at its first point less the ring, rounded down to
// a lane's points, and each tile writes the stride beyond its ring. By hand: float (2 points a
// lane) at 2 levels over x in [3, 259): the first tile from x = 0 writes [2, 62), so five tiles
// reach 259; at 3 levels from x = 0 the first tile starts at -4. Double at 2 levels over y in
// [5, 93): 44 rows a tile, two tiles.
TEST(PlanePassModel, TilesOfABoxOffTheOrigin) {
    EXPECT_EQ(levels_3d_first_x(3, 2, 2), 0);
    EXPECT_EQ(levels_3d_first_x(0, 2, 3), -4);
    EXPECT_EQ(levels_3d_first_x(0, 1, 2), -2);
    EXPECT_EQ(levels_3d_tiles_x(3, 259, 2, 2), 5);
    EXPECT_EQ(levels_3d_tiles_x(3, 242, 2, 2), 4);
    EXPECT_EQ(levels_3d_tiles_y(5, 93, 2), 2);
    EXPECT_EQ(levels_3d_tiles_y(5, 94, 2), 3);
}

// Every block a 512^3 grid of 4 ranks holds, at every k, within 6% of the measured time, and the
// fastest k the measured one: 512x256x256 (1x2x2) 97.0 / 109.3 / 107.3 us at k = 2 / 3 / 4,
// 256x512x256 (2x1x2) 101.6 / 81.8 / 108.4, 512x512x128 (1x1x4) 103.5 / 83.6 / 108.2; the whole
// 512^3 at k = 3 321.1.
TEST(PlanePassModel, MatchesTheMeasuredTimesOfTheBlocksOfFourRanks) {
    struct Measured {
        Block block;
        std::array<double, 3> us;  // k = 2, 3, 4
        int fastest;
    };
    for (const Measured& m : {Measured{{512, 256, 256}, {97.0, 109.3, 107.3}, 2},
                              Measured{{256, 512, 256}, {101.6, 81.8, 108.4}, 3},
                              Measured{{512, 512, 128}, {103.5, 83.6, 108.2}, 3}}) {
        SCOPED_TRACE(m.block[0] * 1000000 + m.block[1] * 1000 + m.block[2]);
        int fastest = 2;
        for (int k = 2; k <= 4; ++k) {
            const double us = modelled_plane_pass_seconds(m.block, 8, k) * 1e6;
            EXPECT_NEAR(us, m.us[k - 2], 0.06 * m.us[k - 2]) << "k = " << k;
            if (us < modelled_plane_pass_seconds(m.block, 8, fastest) * 1e6) fastest = k;
        }
        EXPECT_EQ(fastest, m.fastest);
    }
    EXPECT_NEAR(modelled_plane_pass_seconds(Block{512, 512, 512}, 8, 3) * 1e6, 321.1, 0.06 * 321.1);
}

// One sweep per pass reads and writes the block once at the copy bandwidth.
TEST(PlanePassModel, OneSweepPerPassMovesTheBlockOnce) {
    PlanePassCosts costs;
    costs.copy_bandwidth = 1e12;
    EXPECT_DOUBLE_EQ(modelled_single_sweep_seconds(Block{100, 100, 100}, 8, costs),
                     2.0 * 1e6 * 8 / 1e12);
}

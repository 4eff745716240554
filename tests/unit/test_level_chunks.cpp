// How a levels launch cuts its tiles into chunks along the walk axis (kernels/level_chunks.hpp),
// against the waves and steps counted by hand: a block steps through its chunk's rows and
// 3 x levels more; `slots` blocks run at once; at most 4 x ceil(slots / tiles) chunks a tile.
// And how a summing pass groups the boxes it sums by their columns (kernels/sum_columns.hpp).
#include <gtest/gtest.h>

#include <utility>
#include <vector>

#include "kernels/level_chunks.hpp"
#include "kernels/sum_columns.hpp"

using gridsim::Box;
using gridsim::chunks_meeting;
using gridsim::ChunkSpan;
using gridsim::column_ranges;
using gridsim::ColumnRange;
using gridsim::level_chunk_rows;
using gridsim::sum_pass_chunk_rows;

// 140 tiles of 256 planes at 3 levels, 132 slots (a 512 x 256 x 256 box in double on a GPU of
// 132 multiprocessors): 1, 2, 3 or 4 chunks take 2 x 265, 3 x 137, 4 x 95 or 5 x 73 steps; 4
// chunks of 64 planes are the fewest steps.
TEST(LevelChunks, TilesJustPastAWaveTakeTheFewestStepsNotTheFewestWaves) {
    EXPECT_EQ(level_chunk_rows(140, 256, 3, 132, 512), 64);
}

// Tiles that fill whole waves keep one chunk each: 264 tiles of 128 planes take 2 waves of 137
// steps (2 chunks: 4 x 73; 3: 6 x 52; 4: 8 x 41).
TEST(LevelChunks, WholeWavesKeepOneChunk) {
    EXPECT_EQ(level_chunk_rows(264, 128, 3, 132, 512), 128);
    EXPECT_EQ(level_chunk_rows(132, 256, 3, 132, 512), 256);
}

// Few tiles: 6 tiles of 64 planes at 2 levels fill one wave of 132 blocks with 22 chunks of 3
// planes (3 + 6 steps); 21 chunks of 4 take 10, 32 chunks of 2 take 2 waves of 8.
TEST(LevelChunks, FewTilesTakeShortChunksThatFillAWave) {
    EXPECT_EQ(level_chunk_rows(6, 64, 2, 132, 512), 3);
}

// Chunks are at most `most_rows` rows (1000 tiles of 2000 planes: 4 chunks of 500), and a whole
// number of `granule` rows: 33 tiles of 1000 rows in granules of 8 (125 granules) at 4 levels
// on 264 slots: 8 chunks of 16 granules, one wave of 128 + 12 steps (7 chunks: 156; 16: 2 x 76;
// 32: 4 x 44).
TEST(LevelChunks, ChunksKeepTheirLimitAndTheirGranule) {
    EXPECT_EQ(level_chunk_rows(1000, 2000, 2, 132, 512), 500);
    EXPECT_EQ(level_chunk_rows(33, 1000, 4, 264, 512, 8), 128);
    EXPECT_EQ(level_chunk_rows(1, 1, 2, 132, 512), 1);
}

// A float summing pass takes its shortest chunks where they make two waves: 17 tiles of 8192 rows
// in granules of 64 on 396 slots may cut a tile into at most 4 x 24 = 96 chunks, so chunks of at
// least 86 rows, 128 in granules: 64 chunks, 1088 blocks (2.7 waves). 16384 rows: at least 171,
// so 192 (86 chunks); 4096 rows in granules of 32: the shortest, 64 rows (64 chunks).
TEST(SumPassChunks, ShortestChunksWhereTheyMakeTwoWaves) {
    EXPECT_EQ(sum_pass_chunk_rows(17, 8192, 3, 396, 512, 64, 64), 128);
    EXPECT_EQ(sum_pass_chunk_rows(17, 16384, 3, 396, 512, 64, 64), 192);
    EXPECT_EQ(sum_pass_chunk_rows(17, 4096, 3, 396, 512, 32, 64), 64);
}

// Where the shortest chunks make fewer than two waves (9 tiles of 4096 rows in 64-row chunks:
// 576 blocks for 396 slots), the pass keeps level_chunk_rows' count: 96-row chunks (43 chunks,
// 387 blocks, one wave of 96 + 9 steps; 64 rows: 2 x 73).
TEST(SumPassChunks, FewerThanTwoWavesKeepTheWavesAndStepsCount) {
    EXPECT_EQ(sum_pass_chunk_rows(9, 4096, 3, 396, 512, 32, 64), 96);
    EXPECT_EQ(level_chunk_rows(9, 4096, 3, 396, 512, 32), 96);
}

// A split summing pass launches its shell slabs and its interior on their own: each launch takes
// the chunks of the whole pass its rows meet. 10 chunks of 64 rows from row 8 (the interior,
// rows [8, 648)): the slab below the anchor and the one above it meet the first and the last
// chunk only; the interior all ten; rows in the middle the chunks their rows fall in.
TEST(ChunksMeeting, APartOfABoxTakesTheWholeBoxsChunksItMeets) {
    auto span = [](int lo, int hi) {
        const ChunkSpan s = chunks_meeting(lo, hi, 8, 64, 10);
        return std::pair<int, int>{s.first, s.count};
    };
    EXPECT_EQ(span(0, 8), std::make_pair(0, 1));
    EXPECT_EQ(span(648, 656), std::make_pair(9, 1));
    EXPECT_EQ(span(8, 648), std::make_pair(0, 10));
    EXPECT_EQ(span(0, 656), std::make_pair(0, 10));
    EXPECT_EQ(span(72, 200), std::make_pair(1, 2));
    EXPECT_EQ(span(71, 73), std::make_pair(0, 2));
}

// A rank split along x on a 2 x 2 grid: its sweep sums the x faces' strips (8 columns, every
// row), then the y faces' slabs and the interior between them. The strips are ranges of their
// own; the slabs and the interior share the middle columns, in the sweep's order.
TEST(ColumnRanges, StripsApartFromTheMiddleColumnsSlabs) {
    const std::vector<Box> boxes = {
        {{0, 0, 0}, {8, 100, 1}},   {{92, 0, 0}, {100, 100, 1}}, {{8, 0, 0}, {92, 8, 1}},
        {{8, 92, 0}, {92, 100, 1}}, {{8, 8, 0}, {92, 92, 1}},
    };
    const std::vector<ColumnRange> r = column_ranges(boxes);
    ASSERT_EQ(r.size(), 3u);
    EXPECT_EQ(std::make_pair(r[0].lo, r[0].hi), std::make_pair(0, 8));
    EXPECT_EQ(r[0].boxes, std::vector<int>{0});
    EXPECT_EQ(std::make_pair(r[1].lo, r[1].hi), std::make_pair(92, 100));
    EXPECT_EQ(r[1].boxes, std::vector<int>{1});
    EXPECT_EQ(std::make_pair(r[2].lo, r[2].hi), std::make_pair(8, 92));
    EXPECT_EQ(r[2].boxes, (std::vector<int>{2, 3, 4}));
}

// Boxes whose columns overlap without being the same cannot be summed apart: no ranges.
TEST(ColumnRanges, OverlappingColumnsGiveNone) {
    const std::vector<Box> boxes = {{{0, 0, 0}, {50, 10, 1}}, {{40, 10, 0}, {100, 20, 1}}};
    EXPECT_TRUE(column_ranges(boxes).empty());
    EXPECT_EQ(column_ranges({boxes[0], boxes[0]}).size(), 1u);
}

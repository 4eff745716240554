// How a pipelined levels pass walks its chunks (kernels/halo_arrivals.hpp): every chunk whose
// input reaches a waited-for halo walks towards that one halo and waits before its first plane,
// no chunk reaches both, and chunks that reach none walk up without waiting.
#include <gtest/gtest.h>

#include <algorithm>

#include "kernels/halo_arrivals.hpp"

using namespace gridsim;

namespace {

const unsigned long long kWord = 0;

HaloArrivals arrivals(bool below, bool above, int owned) {
    HaloArrivals a;
    a.ready[0] = below ? &kWord : nullptr;
    a.ready[1] = above ? &kWord : nullptr;
    a.lo = 0;
    a.hi = owned;
    return a;
}

// Walks every chunk of [lo, hi) cut `planes` deep as the launch does, checking each walk
// against the planes its input reaches; returns how many chunks wait.
int check_chunks(const HaloArrivals& a, int lo, int hi, int planes, int levels) {
    int waiting = 0;
    for (int z0 = lo; z0 < hi; z0 += planes) {
        const int z1 = std::min(z0 + planes, hi);
        const PipelinedWalk w = pipelined_walk(a, z0, z1, levels);
        const bool below = a.ready[0] != nullptr && z0 - levels < a.lo;
        const bool above = a.ready[1] != nullptr && z1 + levels > a.hi;
        EXPECT_FALSE(w.both) << "chunk [" << z0 << ", " << z1 << ") reads both halos";
        EXPECT_FALSE(below && above);
        if (below) {
            EXPECT_TRUE(w.down);
            EXPECT_EQ(w.face, 0);
            EXPECT_EQ(w.wait_plane, a.lo - 1);  // the first halo plane walking down
        } else if (above) {
            EXPECT_FALSE(w.down);
            EXPECT_EQ(w.face, 1);
            EXPECT_EQ(w.wait_plane, a.hi);
        } else {
            EXPECT_FALSE(w.down);
            EXPECT_EQ(w.face, -1);
        }
        waiting += w.face >= 0 ? 1 : 0;
    }
    return waiting;
}

}  // namespace

TEST(PipelinedWalk, AChunkWalksTowardsTheOneHaloItReads) {
    const HaloArrivals both = arrivals(true, true, 128);
    PipelinedWalk w = pipelined_walk(both, 0, 64, 3);
    EXPECT_TRUE(w.down);
    EXPECT_EQ(w.face, 0);
    EXPECT_EQ(w.wait_plane, -1);
    w = pipelined_walk(both, 64, 128, 3);
    EXPECT_FALSE(w.down);
    EXPECT_EQ(w.face, 1);
    EXPECT_EQ(w.wait_plane, 128);
    w = pipelined_walk(both, 10, 100, 3);  // reaches neither
    EXPECT_EQ(w.face, -1);
    EXPECT_FALSE(w.down);
    EXPECT_TRUE(pipelined_walk(both, 0, 128, 3).both);
    // Only the halo above is waited for: a chunk at the bottom (a physical boundary) walks up.
    w = pipelined_walk(arrivals(false, true, 128), 0, 128, 3);
    EXPECT_FALSE(w.down);
    EXPECT_EQ(w.face, 1);
    w = pipelined_walk(arrivals(true, false, 128), 1, 128, 4);
    EXPECT_TRUE(w.down);
    EXPECT_EQ(w.face, 0);
    EXPECT_FALSE(pipelined_walk(arrivals(false, false, 128), 0, 128, 4).any_wait());
}

TEST(PipelinedWalk, ChunkPlanesKeepEveryChunkToOneHalo) {
    for (int levels = 2; levels <= 4; ++levels) {
        for (int nz = 1; nz <= 70; ++nz) {
            for (int planes = 1; planes <= nz + 3; ++planes) {
                SCOPED_TRACE(testing::Message() << "levels " << levels << ", " << nz
                                                << " planes in chunks of " << planes);
                const HaloArrivals a = arrivals(true, true, nz);
                const int p = pipelined_chunk_planes(a, nz, planes, levels);
                if (nz < 2 * levels) {
                    EXPECT_EQ(p, 0);
                    continue;
                }
                ASSERT_GT(p, 0);
                EXPECT_LE(p, std::max(planes, levels));
                EXPECT_LE(p, nz - levels);
                EXPECT_GE(p, levels);
                EXPECT_GE(check_chunks(a, 0, nz, p, levels), 2);  // one per halo at least
                // One halo: the chunks as they are, each walking to it where it reads it.
                const HaloArrivals one = arrivals(false, true, nz);
                EXPECT_EQ(pipelined_chunk_planes(one, nz, planes, levels), planes);
                EXPECT_GE(check_chunks(one, 1, nz, planes, levels), 1);
            }
        }
    }
}

// The ordinary chunks deeper than a pipelined pass allows: two, the first (walking down, its
// blocks first) about three quarters of the planes.
TEST(PipelinedWalk, TwoChunksTheFirstThreeQuarters) {
    const HaloArrivals both = arrivals(true, true, 128);
    EXPECT_EQ(pipelined_chunk_planes(both, 128, 128, 3), 96);
    EXPECT_EQ(pipelined_chunk_planes(both, 128, 32, 3), 32);  // chunks as they are
    EXPECT_EQ(pipelined_chunk_planes(both, 8, 8, 3), 5);      // nz - levels
    EXPECT_EQ(pipelined_chunk_planes(both, 8, 8, 4), 4);
    EXPECT_EQ(pipelined_chunk_planes(both, 7, 7, 4), 0);
}

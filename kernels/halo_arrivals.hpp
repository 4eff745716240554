// Where a pipelined levels pass (SweepPlan: ExchangePass::pipelined) waits for its halos: the
// exchange of the pass before it is still moving while this pass runs, and each block whose
// chunk reads a halo on its way walks towards that halo and waits for it to land before it loads
// its first plane. Plain C++ for the host and the device, unit-tested on the host.
#pragma once

#include "kernels/block_order.hpp"
#include "mesh/host_device.hpp"

namespace gridsim {

// The counters of the faces along the walk axis (z) whose halos a pipelined pass waits for:
// [0] the face below (input planes below `lo`), [1] the face above (planes from `hi`); nullptr
// where the halo beyond is none of the pipeline's. `ready` counts the exchanges the peer has
// stored into this rank (raised by the peer); pass `pass` of the pipeline needs ready to reach
// `*base + pass` (base: set where the pipeline starts, from ready then, so that its first pass
// needs nothing more).
struct HaloArrivals {
    const unsigned long long* ready[2] = {nullptr, nullptr};
    const unsigned long long* base[2] = {nullptr, nullptr};
    unsigned long long pass = 0;
    int lo = 0;
    int hi = 0;
};

// How a block of a pipelined pass walks its chunk of output planes [z0, z1), `levels` levels:
// towards the one face whose halo its input planes [z0 - levels, z1 + levels) reach, which it
// waits for (`face`, 0 or 1) before loading that halo's first plane (`wait_plane`: lo - 1 going
// down, hi going up); upwards without waiting where they reach none. A chunk that reaches both
// is not one a pipelined launch makes (pipelined_chunk_planes); `both` says so.
struct PipelinedWalk {
    bool down = false;
    int face = -1;  // -1: no wait
    int wait_plane = ChunkWalk::kNoSignal;
    bool both = false;

    [[nodiscard]] GRIDSIM_HD bool any_wait() const { return face >= 0; }
};
GRIDSIM_HD inline PipelinedWalk pipelined_walk(const HaloArrivals& a, int z0, int z1, int levels) {
    const bool below = a.ready[0] != nullptr && z0 - levels < a.lo;
    const bool above = a.ready[1] != nullptr && z1 + levels > a.hi;
    PipelinedWalk w;
    w.both = below && above;
    if (below) {
        w.down = true;
        w.face = 0;
        w.wait_plane = a.lo - 1;
    } else if (above) {
        w.face = 1;
        w.wait_plane = a.hi;
    }
    return w;
}

// The planes of each chunk of a pipelined launch over `nz` planes whose ordinary chunks are
// `planes` deep. Where both faces are waited for: at least two chunks, each of `levels` planes
// or more, so that the first chunk ends `levels` planes or more below the halo above and the
// last starts as far above the halo below. Where the ordinary chunks are deeper than that, two
// chunks: the first, whose blocks go first (the grid's order) and walk down to the halo below,
// about three quarters of nz, so that its first wave of blocks reaches that halo as late as the
// chunks' lengths allow, and the second, which walks up to the halo above, the rest; the sum of
// the blocks' steps is the same as for two halves. 0 where the box is too thin (nz < 2 levels).
inline int pipelined_chunk_planes(const HaloArrivals& a, int nz, int planes, int levels) {
    if (a.ready[0] == nullptr || a.ready[1] == nullptr) return planes;
    if (nz < 2 * levels) return 0;
    if (planes > nz - levels) {
        const int three_quarters = (3 * nz + 3) / 4;
        return three_quarters < nz - levels ? three_quarters : nz - levels;
    }
    return planes < levels ? levels : planes;
}

}  // namespace gridsim

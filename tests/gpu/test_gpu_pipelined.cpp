// The CUDA backend's pipelined passes (overlap "pipelined"): bitwise one sweep per pass on ranks
// split along z through ipc, and the fused pass where a field's halos cannot be waited for.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <string>
#include <utility>
#include <vector>

#include "gpu/gpu_test_support.hpp"
#include "gpu/require_gpu.hpp"
#include "problems/problem.hpp"
#include "support/mpi_helpers.hpp"

using namespace gridsim;
using namespace gridsim::test;

// Passes of a pipeline (overlap "pipelined": each exchanging pass runs while the halos of the
// pass before still move, its blocks that read them walking towards them and waiting for them
// inside the pass) at k = 2, 3 and 4: fields and norms bitwise those of k = 1 on the same ranks.
// Through ipc on this run's ranks split along z, every rank runs its exchanging passes so (an
// inner rank waits for both z halos, its chunks walking outwards; the decks' cross-sections give
// many chunks, so that inner chunks wait for none), with Dirichlet and periodic z (where two
// ranks hold both halos of each other); a field whose halos cannot be waited for (split across
// y, staged, a periodic axis copied into a rank's own halos, one rank) fuses, bitwise too.
TEST(GpuPipelined, PassesOfAPipelineAreBitwiseOneSweepPerPass) {
    GRIDSIM_REQUIRE_GPU();
    const std::vector<std::string> decks = {
        "[grid]\ncells = [150, 140, 96]\n[initial]\nkind = \"hotspot\"\nradius = 0.3\n"
        "[time]\nsteps = 13\n",
        "[problem]\nname = \"jacobi\"\nprecision = \"float\"\n[grid]\ncells = [200, 100, 90]\n"
        "[boundary]\nz = \"periodic\"\nface_values = [1, 2, 3, 4, 5, 6]\n[time]\nsteps = 11\n"
        "norm_every = 5\n",
        "[grid]\ncells = [130, 120, 64]\n[boundary]\nkind = \"periodic\"\n[time]\nsteps = 9\n",
    };
    // Where the pipelined pass runs: through ipc along z with a GPU per rank, on a deck without
    // a periodic x or y.
    const int n = test::world_size();
    std::vector<std::pair<Split, bool>> splits = {{{1, "[1,1,1]", "\"auto\""}, false}};
    if (n > 1) {
        if (every_rank_has_its_own_gpu())
            splits.push_back({{n, fmt::format("[1,1,{}]", n), "\"ipc\""}, true});
        splits.push_back({{n, fmt::format("[1,{},1]", n), "\"auto\""}, false});
        splits.push_back({{n, fmt::format("[1,1,{}]", n), "\"staged\""}, false});
    }
    for (const std::string& deck : decks) {
        const bool xy_periodic = deck.find("kind = \"periodic\"") != std::string::npos;
        for (const auto& [s, pipelines] : splits) {
            SCOPED_TRACE(fmt::format("{}{} rank(s) on {}, transport {}", deck, s.ranks, s.grid,
                                     s.transport));
            const RunResult one = run_split(deck, s, "1", "true");
            for (const char* k : {"2", "3", "4"}) {
                const RunResult r = run_split(deck, s, k, "\"pipelined\"");
                SCOPED_TRACE(fmt::format("time_block {}", k));
                if (pipelines && !xy_periodic) {
                    EXPECT_GT(r.pipelined_passes, 0) << "no pass of a pipeline on this rank";
                } else {
                    EXPECT_EQ(r.pipelined_passes, 0);
                }
                if (test::world_rank() != 0) continue;
                EXPECT_EQ(r.time_block, std::stoi(k));
                EXPECT_LT(r.passes, one.passes) << "no sweeps shared a pass";
                EXPECT_EQ(count_differences(r.global_field, one.global_field), 0u);
                EXPECT_EQ(r.residual_history, one.residual_history);
                EXPECT_EQ(r.final_norm, one.final_norm);
            }
        }
    }
}

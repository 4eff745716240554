// The report's halo phases (pack, transfer, unpack) count only work that ran: a rank with no
// face to another rank and no periodic axis moves no halo and reports none of them, a rank whose
// only halos are its own periodic faces reports their copy as unpack alone, and ranks with
// neighbours report a transfer. A phase that does nothing is not timed at all, so its clock's own
// cost is never reported as halo time.
#include <gtest/gtest.h>

#include <string>

#include "support/mpi_helpers.hpp"

using namespace gridsim;

namespace {

double phase(const RunResult& r, Phase p) { return r.phases[static_cast<int>(p)]; }

const std::string kDirichlet = "[grid]\ncells = [24, 20, 18]\n[time]\nsteps = 6\n";
const std::string kPeriodicX =
    "[grid]\ncells = [24, 20, 18]\n[boundary]\nx = \"periodic\"\n[time]\nsteps = 6\n";

}  // namespace

TEST(HaloPhases, ARankWithoutHalosToMoveReportsNone) {
    for (const char* k : {"parallel.time_block=1", "parallel.time_block=3"}) {
        const RunResult r = test::run_on_ranks(1, kDirichlet, {k});
        if (test::world_rank() != 0) continue;
        SCOPED_TRACE(k);
        EXPECT_GT(phase(r, Phase::interior), 0.0);
        EXPECT_EQ(phase(r, Phase::pack), 0.0);
        EXPECT_EQ(phase(r, Phase::transfer), 0.0);
        EXPECT_EQ(phase(r, Phase::unpack), 0.0);
    }
}

TEST(HaloPhases, ARankAloneOnAPeriodicAxisReportsItsCopyAsUnpackOnly) {
    const RunResult r = test::run_on_ranks(1, kPeriodicX, {});
    if (test::world_rank() != 0) return;
    EXPECT_GT(phase(r, Phase::unpack), 0.0);
    EXPECT_EQ(phase(r, Phase::pack), 0.0);
    EXPECT_EQ(phase(r, Phase::transfer), 0.0);
}

TEST(HaloPhases, RanksWithNeighboursReportTheirTransfer) {
    if (test::world_size() < 2) GTEST_SKIP() << "needs two ranks";
    const RunResult r = test::run_on_ranks(2, kDirichlet, {"parallel.process_grid=[1,1,2]"});
    if (test::world_rank() != 0) return;
    EXPECT_GT(phase(r, Phase::transfer), 0.0);
    EXPECT_GT(phase(r, Phase::pack), 0.0);
    EXPECT_GT(phase(r, Phase::unpack), 0.0);
}

// The run header's note on summing passes (src/report/report.cpp): a jacobi deck in 2D with the
// residual every sweep whose sweeps NCCL keeps one per pass (more than two ranks: its order of
// summation is its own) says so and names the transports that sum inside passes; nothing is
// said where the passes ran, on two ranks, or for another transport.
#include <gtest/gtest.h>

#include <string>

#include "config/config.hpp"
#include "problems/problem.hpp"
#include "report/report.hpp"
#include "run/run.hpp"

using namespace gridsim;

namespace {

const std::string kJacobi =
    "[problem]\nname = \"jacobi\"\n[grid]\ncells = [4096, 4096]\n[boundary]\nkind = "
    "\"benchmark\"\n[time]\nnorm_every = 1\n";

std::string header(int ranks, const std::string& transport, bool sums_in_passes,
                   const std::vector<std::string>& sets = {}) {
    const Config cfg = load_config(kJacobi, "t.toml", sets);
    RunStart s;
    s.backend = "cuda";
    s.transport = transport;
    s.ranks = ranks;
    s.process_grid = {1, ranks, 1};
    s.sums_in_passes = sums_in_passes;
    return start_header(cfg, s, "");
}

const char* const kNote = "note            NCCL on more than 2 ranks";

}  // namespace

TEST(HeaderNotes, NcclOnMoreThanTwoRanksSaysItsResidualSweepsArePassesOfTheirOwn) {
    const std::string out = header(4, "nccl", false);
    EXPECT_NE(out.find(kNote), std::string::npos) << out;
    EXPECT_NE(out.find("parallel.transport = \"ipc\" or \"staged\""), std::string::npos) << out;
}

TEST(HeaderNotes, NoNoteWhereThePassesSumOrCouldNot) {
    EXPECT_EQ(header(2, "nccl", true).find(kNote), std::string::npos);
    EXPECT_EQ(header(4, "ipc", true).find(kNote), std::string::npos);
    EXPECT_EQ(header(4, "staged", false).find(kNote), std::string::npos);
    // time_block = 1 asks for one sweep per pass; a residual every 10 sweeps sums none in passes.
    EXPECT_EQ(header(4, "nccl", false, {"parallel.time_block=1"}).find(kNote), std::string::npos);
    EXPECT_EQ(header(4, "nccl", false, {"time.norm_every=10"}).find(kNote), std::string::npos);
}

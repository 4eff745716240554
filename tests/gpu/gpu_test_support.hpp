// What the GPU suite's files share: a deck with its GPU-vs-CPU tolerance, the deck keys that put a
// run on the GPU, a run's global field, the differences between two fields, whether every rank has
// a GPU of its own, and the check of a time-block trial's choice.
#pragma once

#include <cuda_runtime.h>
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <ostream>
#include <string>
#include <vector>

#include "platform/backend_select.hpp"
#include "support/mpi_helpers.hpp"

namespace gridsim::test {

// A deck of a parameterised test, named for its test's name.
struct Deck {
    const char* name;
    std::string text;
    double tolerance;  // GPU vs CPU, relative to max |u|
};

inline void PrintTo(const Deck& d, std::ostream* os) { *os << d.name; }

inline const std::string kGpu = "[parallel]\nbackend = \"cuda\"\nshare_gpus = true\n";

inline std::vector<double> field(const std::string& deck, std::vector<std::string> sets,
                                 int ranks = 1) {
    return test::run_on_ranks(ranks, deck, sets).global_field;
}

// Where a run of a deck goes: its ranks, process grid and transport (deck values).
struct Split {
    int ranks;
    std::string grid;
    std::string transport;
};

// `deck` on the GPU with `split`, time_block `k` and parallel.overlap `overlap` (deck values).
inline RunResult run_split(const std::string& deck, const Split& split, const std::string& k,
                           const std::string& overlap) {
    return test::run_on_ranks(
        split.ranks, deck + kGpu,
        {"parallel.process_grid=" + split.grid, "parallel.transport=" + split.transport,
         "parallel.time_block=" + k, "parallel.overlap=" + overlap});
}

inline double max_abs(const std::vector<double>& v) {
    double m = 0.0;
    for (double x : v) m = std::max(m, std::abs(x));
    return m;
}

inline std::size_t count_differences(const std::vector<double>& a, const std::vector<double>& b) {
    if (a.size() != b.size()) return std::max(a.size(), b.size());
    std::size_t n = 0;
    for (std::size_t p = 0; p < a.size(); ++p) n += a[p] != b[p] ? 1 : 0;  // NaN differs too
    return n;
}

// Whether every rank has a GPU of its own (NCCL needs that), decided collectively.
inline bool every_rank_has_its_own_gpu() {
    const DevicePlan plan = plan_device(MPI_COMM_WORLD);
    int mine = plan.info.device >= 0 && !plan.shared ? 1 : 0;
    int all = 0;
    MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return all == 1;
}

// Whether every rank's GPU runs its contexts through MPS (the CUDA attribute, asked here).
inline bool every_gpu_shared_by_mps() {
    const DevicePlan plan = plan_device(MPI_COMM_WORLD);
    int mine = 0;
    if (plan.info.device >= 0)
        (void)cudaDeviceGetAttribute(&mine, cudaDevAttrMpsEnabled, plan.info.device);
    int all = 0;
    MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return all != 0;
}

// "auto" timed exactly `candidates` (none: it took k = 1 without a trial), in that order, and
// took the first of the fastest.
inline void expect_fastest_of(const RunResult& r, const std::vector<int>& candidates) {
    std::vector<int> timed;
    int fastest = 1;
    double best = 0.0;
    for (const TimeBlockTrial& t : r.time_block_trial) {
        timed.push_back(t.k);
        EXPECT_GT(t.seconds_per_sweep, 0.0);
        if (timed.size() == 1 || t.seconds_per_sweep < best) {
            fastest = t.k;
            best = t.seconds_per_sweep;
        }
    }
    EXPECT_EQ(timed, candidates);
    EXPECT_EQ(r.time_block, fastest);
}

}  // namespace gridsim::test

// Start-up trials: every rank times each candidate setting on its own subdomain, and the ranks
// take the one whose slowest rank is fastest (parallel.time_block = "auto"). Only the speed of a
// run depends on such a setting, never its results, so a trial may pick differently from run to
// run where candidates are within the timing noise.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <functional>
#include <vector>

#include "engine/sweep_plan.hpp"

namespace gridsim {

// One candidate of parallel.time_block = "auto"'s trial: k and its pass's seconds per sweep on
// the slowest rank.
struct TimeBlockTrial {
    int k = 1;
    double seconds_per_sweep = 0.0;
};

// overlap "auto"'s start-up trial where time blocks exchange with another rank: seconds per
// sweep on the slowest rank of blocks whose exchanging pass is split (the shell, then the halos
// beside the interior), one launch over every updated point followed by the halos, (where the
// backend can) one launch that writes the faces first with the halos beside the rest of it, and
// (where some rank's exchange pipelines) passes of a pipeline, the halos beside the next pass;
// with time_block "auto" also for halos twice as deep as the trial's k (blocks of two passes,
// one exchange).
struct ExchangeTrial {
    struct Depth {
        int time_block = 1;  // sweeps between exchanges (the halos' depth)
        double split_seconds_per_sweep = 0.0;
        double fused_seconds_per_sweep = 0.0;
        double faces_first_seconds_per_sweep = 0.0;  // 0 where not timed
        double pipelined_seconds_per_sweep = 0.0;    // 0 where not timed
    };
    bool ran = false;
    bool timed_faces_first = false;
    bool timed_pipelined = false;
    std::vector<Depth> depths;  // every depth timed, shallowest first (one where no depth trial)
    std::size_t taken = 0;      // the depth taken, an index into depths
    ExchangePass pass = ExchangePass::split;  // and at it, how the exchanging pass runs
    [[nodiscard]] const Depth& taken_depth() const { return depths.at(taken); }
};

// How many repetitions of something whose first timed run took `first` seconds on this rank
// fill about `target` seconds on the slowest rank, from 1 to `most`. Collective: every rank gets
// the same count, so that repetitions which exchange stay matched.
int repetitions_for(MPI_Comm comm, double first, double target, int most);

struct TrialChoice {
    int chosen = 0;               // the candidate taken
    std::vector<double> slowest;  // per candidate: the largest of the ranks' seconds
};

// The index of the smallest of `seconds` (the first among equals): the choice a trial takes from
// each candidate's time on its slowest rank. A pure function of the measured costs.
std::size_t first_fastest(const std::vector<double>& seconds);

// The exchange trial's verdict from each choice's time: `seconds` holds, per depth of `depths`
// (shallowest first), the first `passes` (2 to 4) of the split, the fused, the faces-first and
// the pipelined exchanging pass; the fastest is taken, and among equals the shallower depth, then
// the earlier of those. A pure function of the measured costs.
ExchangeTrial exchange_verdict(const std::vector<int>& depths, const std::vector<double>& seconds,
                               std::size_t passes = 2);

// seconds(c) is this rank's time for candidate c (collective: every rank times every candidate
// in the same order). The smallest `slowest` wins; among equal times, the earlier candidate.
TrialChoice agree_on_fastest(MPI_Comm comm, const std::vector<int>& candidates,
                             const std::function<double(int)>& seconds);

// `rounds` rounds over `choices` choices, each round taking every choice in turn (round r
// starting at choice r, so that a GPU still raising its clocks slows none more); seconds(c) is
// this rank's time of choice c, and a round counts by its slowest rank. Returns each choice's
// fastest round (collective: every rank gets the same times). Each round follows an all-reduce
// (the previous round's), which no rank leaves before every rank has entered it, so the ranks
// start each round together without a barrier.
std::vector<double> fastest_rounds(MPI_Comm comm, std::size_t choices, int rounds,
                                   const std::function<double(std::size_t)>& seconds);

}  // namespace gridsim

// The Tuner's choices that follow from the halo exchange (engine/tuner.hpp): recording, where
// sums go, the fused sweep's wrap, and the exchange trial of overlap "auto" with time blocks.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <memory>

#include "engine/sweeper.hpp"
#include "engine/tuner.hpp"
#include "parallel/collectives.hpp"

namespace gridsim {

// time_block "auto" with passes of k > 1 sweeps, on several ranks whose blocks the exchange trial
// times: k and 2k where 2k-deep halos fit the subdomains and parallel.time_block's range. Twice
// as deep halves the exchanges (each one's fixed cost: the handshake, the launches, the ranks'
// skew) for a first pass that also updates k halo layers (docs/tuning.md, "Exchange trial").
// Summing passes: k only (the time-block trial has timed the deeper passes, and a 2k-level pass
// sums 2k levels, not k).
template <class T>
std::vector<int> Tuner<T>::halo_depths(const SweepPlan& plan) const {
    const int k = plan.block;
    const bool trial =
        cfg_.time_block == 0 && k > 1 && 2 * k <= kMaxTimeBlock && exchange_trial_runs(plan) &&
        !plan.sums_in_passes() &&
        decomposition_problem(dom_, topo_.process_grid(), topo_.size(), geo_.halo_layers(2 * k))
            .empty();
    if (trial) return {k, 2 * k};
    return {k};
}

// Blocks of residual sweeps are timed where they run as summing passes that may split; one by
// one they are single sweeps, whose split "auto" keeps.
template <class T>
bool Tuner<T>::exchange_trial_runs(const SweepPlan& plan) const {
    const bool passes =
        blocks_ != Blocks::summing || (plan.sums_in_passes() && plan.summing_pass_may_split());
    return cfg_.overlap == OverlapMode::automatic && plan.block > 1 && topo_.size() > 1 && passes;
}

template <class T>
void Tuner<T>::plan_exchange(SweepPlan& plan, const HaloExchange<T>& halo) {
    plan.local_only = halo.local_only();
    plan.wrap_period = kernel_wrap_period(plan, halo);
    plan.record_sweeps = decide_recording(halo);
    // The same on every rank: the largest rank decides.
    const double most =
        allreduce(topo_.comm(), static_cast<double>(geo_.updated.count()), Reduce::max);
    plan.record_residuals = records_residuals(most);
}

// BoxSweeps::apply_boxes's wrap_period for this rank's fused sweeps: the walk axis's extent
// where that axis is periodic and held by this rank alone, halos are one layer deep and no other
// halo is copied (the sweep then stores the whole exchange itself); else 0.
template <class T>
int Tuner<T>::kernel_wrap_period(const SweepPlan& plan, const HaloExchange<T>& halo) const {
    const int walk = dom_.dims - 1;
    if (plan.block != 1 || !geo_.plain_star || !plan.box_sweeps || !halo.local_only() ||
        halo.self_axes() != (1u << walk))
        return 0;
    return topo_.subdomain().size[walk];
}

// parallel.graphs. The ranks decide together: they must issue the same NCCL calls in the same
// order, and a rank whose exchange waits on the host (MPI) cannot record its sweeps.
template <class T>
bool Tuner<T>::decide_recording(const HaloExchange<T>& halo) const {
    if (cfg_.graphs == GraphMode::off) return false;
    const int mine = (be_.recorder() != nullptr) && halo.host_free() ? 1 : 0;
    const int all = allreduce(topo_.comm(), mine, Reduce::min);
    if (all == 0 && cfg_.graphs == GraphMode::on) {
        throw ConfigError(
            cfg_.where("parallel.graphs") +
            "\"on\" needs the CUDA backend and a halo exchange without host steps "
            "(transport \"nccl\" or \"ipc\", or no neighbour on another rank); this run has " +
            ((be_.recorder() != nullptr) ? "transport " + std::string(halo.transport_name())
                                         : "the " + be_.name() + " backend"));
    }
    return all == 1;
}

// Where a block of sweeps exchanges with another rank, its exchanging pass can be split (the
// shell first, then its halos packed, sent and unpacked beside the interior), one launch over
// every updated point followed by the halos, or (where the backend can: writes_faces_first) one
// launch that writes the faces first while the halos move beside the rest of it. Which is faster
// depends on the machine: the split hides the exchange, but a pass's shell, launched on its own,
// pays a pipeline fill per block and waits for multiprocessors held by the interior's
// long-running blocks, while a slow link makes the exposed exchange the dearer; faces first
// hides the exchange without a shell of its own, but its exchange waits for the face blocks,
// which start late where a rank's block is several waves of the pass (docs/tuning.md, "Exchange
// trial"). So "auto" times them all: a sweeper per choice (a depth and a pass; each with its own
// recordings) runs blocks of sweeps on the run's fields, one block each to warm up (NCCL and the
// peers connect at their first exchange), then rounds of blocks taking about 10 ms on the slowest
// rank, the choices taking turns to go first (fastest_rounds), so that a GPU still raising its
// clocks slows none more. A round counts by its slowest rank, and runs the same sweeps at every
// depth (one block of the deepest, two of the shallower). The fastest choice is kept with its
// depth's halo setup; the other depth's exchange goes. Results do not depend on the choice.
template <class T>
void Tuner<T>::choose_exchange_pass(SweepPlan& plan, const std::vector<int>& depths,
                                    FieldPair<T>& fields, HaloSetup<T>& run) {
    if (!exchange_trial_runs(plan)) return;
    std::vector<HaloSetup<T>> setups;
    for (int depth : depths) {
        setups.push_back(depth == plan.block
                             ? std::move(run)
                             : make_halo_setup(topo_, choice_, fields, geo_, depth));
    }
    PhaseTimer timer(be_.make_interval_timer(),
                     resolved_phase_every(cfg_.phase_every, be_.on_device()));
    struct Choice {
        std::size_t depth;  // index into depths
        std::unique_ptr<Sweeper<T>> sweeper;
    };
    const bool faces_first = writes_faces_first() && !plan.sums_in_passes();
    std::vector<ExchangePass> passes{ExchangePass::split, ExchangePass::fused};
    if (faces_first) passes.push_back(ExchangePass::faces_first);
    // Pipelined where some rank's exchange pipelines at the plan's depth (a rank whose exchange
    // does not pipeline fuses its passes in that choice).
    const bool pipelined =
        faces_first && allreduce(topo_.comm(), setups.front().pipelines ? 1 : 0, Reduce::max) == 1;
    if (pipelined) passes.push_back(ExchangePass::pipelined);
    std::vector<Choice> choices;
    for (std::size_t d = 0; d < depths.size(); ++d) {
        for (ExchangePass pass : passes) {
            SweepPlan c = plan;
            c.block = depths[d];
            c.exchange_pass = pass;
            choices.push_back({d, std::make_unique<Sweeper<T>>(be_, timer, fields, geo_, setups[d],
                                                               c, topo_.subdomain())});
        }
    }
    fields.reset(plan.block);
    Field<T> coeffs;
    const StencilParams<T> p = trial_params(fields.extents(), coeffs);
    const int round_sweeps = depths.back();
    auto seconds = [&](std::size_t c, int n) {
        const int depth = depths[choices[c].depth];
        fields.refill(depth);
        const auto t0 = std::chrono::steady_clock::now();
        run_blocks(*choices[c].sweeper, p, plan, depth, n * round_sweeps / depth);
        be_.join_lanes();
        be_.wait(Lane::boundary);
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    };
    for (std::size_t c = 0; c < choices.size(); ++c) (void)seconds(c, 1);
    double first = 0.0;
    for (std::size_t c = 0; c < choices.size(); ++c) first = std::max(first, seconds(c, 1));
    const int n = repetitions_for(topo_.comm(), first, kExchangeTrialRoundSeconds, 256);
    // The first round follows the count's all-reduce, so the ranks start it together.
    const std::vector<double> best = fastest_rounds(
        topo_.comm(), choices.size(), kExchangeTrialRounds,
        [&](std::size_t c) { return seconds(c, n) / (static_cast<double>(n) * round_sweeps); });
    // Choices in exchange_verdict's order: per depth, the split, the fused, the faces-first and
    // the pipelined pass.
    exchange_trial_ = exchange_verdict(depths, best, passes.size());
    plan.block = exchange_trial_.taken_depth().time_block;
    plan.exchange_pass = exchange_trial_.pass;
    choices.clear();  // the sweepers and their recordings
    run = std::move(setups[exchange_trial_.taken]);
}

// `count` blocks of `depth` sweeps on `s`: plain passes, or summing passes whose levels' sums are
// read back and all-reduced a pass behind, as a run takes them (JacobiStepper).
template <class T>
void Tuner<T>::run_blocks(Sweeper<T>& s, const StencilParams<T>& p, const SweepPlan& plan,
                          int depth, int count) {
    if (!plan.sums_in_passes()) {
        for (int i = 0; i < count; ++i) s.sweeps(p, depth);
        return;
    }
    int unread = -1;
    for (int i = 0; i < count; ++i) {
        const int read = s.summing_pass(p, depth);
        if (unread >= 0) take_level_sums(unread, depth);
        unread = read;
    }
    if (unread >= 0) take_level_sums(unread, depth);
}

template class Tuner<float>;
template class Tuner<double>;

}  // namespace gridsim

// Simulation's start-up trials (simulation.hpp): the halo setups of each depth, the time block
// "auto" times, and the split or fused exchanging pass overlap "auto" times, on scratch passes.
#include "engine/simulation.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <limits>

#include "parallel/mpi_session.hpp"

namespace gridsim {

// What a halo depth (sweeps between exchanges) sets up on the run's fields: the exchange of
// that many layers, the halo slabs a sweep also updates while layers remain, and the split of
// the exchanging pass (its shell as deep as the halo it sends).
template <class T>
typename Simulation<T>::HaloSetup Simulation<T>::make_halo_setup(int depth) {
    const Subdomain& sub = topo_.subdomain();
    HaloSetup s;
    s.depth = depth;
    s.halo = std::make_unique<HaloExchange<T>>(
        topo_, depth, be_, choice_.transport, choice_.ipc_everywhere,
        std::vector<FieldView<T>>{u_[0].view(), u_[1].view()});
    for (int extend = 0; extend < depth; ++extend)
        s.rings.push_back(peel(extend_into_halos(updated_, sub, extend), updated_, dom_.dims));
    s.pass_regions = split_for_overlap(updated_, sub, depth);
    return s;
}

// Swaps `s` with the run's halo setup (block_, halo_, rings_, pass_regions_); every halo layer
// is then taken as valid (room_), as after an exchange.
template <class T>
void Simulation<T>::use_halo_setup(HaloSetup& s) {
    std::swap(block_, s.depth);
    std::swap(halo_, s.halo);
    std::swap(rings_, s.rings);
    std::swap(pass_regions_, s.pass_regions);
    room_ = {block_, block_};
}

// time_block "auto" with passes of k > 1 sweeps, on several ranks whose blocks the exchange trial
// times (overlap "auto", no residual summed in passes): k and 2k where 2k-deep halos fit the
// subdomains and parallel.time_block's range. Twice as deep halves the exchanges (each one's
// fixed cost: the handshake, the launches, the ranks' skew) for a first pass that also
// updates k halo layers (docs/tuning.md, kExchangeTrialRounds). Else k alone.
template <class T>
std::vector<int> Simulation<T>::halo_depth_candidates() const {
    const int k = block_;
    const bool trial =
        cfg_.time_block == 0 && k > 1 && 2 * k <= kMaxTimeBlock && exchange_trial_runs() &&
        decomposition_problem(dom_, topo_.process_grid(), topo_.size(), 2 * k).empty();
    if (trial) return {k, 2 * k};
    return {k};
}

template <class T>
bool Simulation<T>::exchange_trial_runs() const {
    return cfg_.overlap == OverlapMode::automatic && block_ > 1 && topo_.size() > 1 &&
           blocks_ != Blocks::summing;
}

// parallel.time_block. "auto": where the backend advances several sweeps per pass over memory
// (CUDA), a start-up trial of every k from 2 to its most levels (fastest_time_block): which k is
// fastest depends on the size (the blocks of a pass fill the multiprocessors in whole waves or
// not). In 3D only where a subdomain's x-y cross-section has at least kLevels3dMinCrossSection
// points, else 1 (the 3D pass streams one x-y tile per block along z, and below that too few
// blocks fill the GPU). docs/tuning.md, "Time blocking and passes", holds the evidence of each
// threshold here. With a residual every
// sweep (Blocks::summing) where the sweeps can sum inside passes and a rank updates at least
// kSummingMinPoints points, a trial of 1 against summing passes of 2 to kSummingMostLevels (which
// wins depends on size and precision), else 1; 1 elsewhere (the CPU:
// its passes take one level each), and for the CG (it exchanges inside every operator application).
// Whether k fits is a pure function of the deck and the process grid, so every rank decides
// alike.
template <class T>
std::vector<int> Simulation<T>::time_block_candidates() const {
    auto problem = [&](int k) {
        return decomposition_problem(dom_, topo_.process_grid(), topo_.size(), k);
    };
    // `ks` and then every k from 2 to `most` that the subdomain fits.
    auto fitting = [&](std::vector<int> ks, int most) {
        for (int k = 2; k <= most; ++k) {
            if (problem(k).empty()) ks.push_back(k);
        }
        return ks;
    };
    if (cfg_.time_block == 0) {
        if (blocks_ == Blocks::none || !be_.on_device()) return {1};
        const int most = be_.levels_per_pass(dom_.dims);
        if (blocks_ == Blocks::summing) {
            if (!can_sum_in_passes_ || (topo_.size() == 1 && updated_.count() < kSummingMinPoints))
                return {1};
            return fitting({1}, std::min(kSummingMostLevels, most));
        }
        if (dom_.dims == 3 && smallest_cross_section() < kLevels3dMinCrossSection) return {1};
        std::vector<int> ks = fitting({}, most);
        if (ks.empty()) ks.push_back(1);
        return ks;
    }
    const int k = cfg_.time_block;
    if (const std::string why = problem(k); !why.empty()) {
        throw ConfigError(cfg_.where("parallel.time_block") +
                          fmt::format("{} needs {}-deep halos: {}", k, k, why));
    }
    return {k};
}

// Each candidate's pass over this rank's updated points (one launch, as on one rank), from one
// scratch field into another shaped as that k's fields (its halo depth sets the row strides):
// one pass to warm up, then the fastest of three rounds of passes that take about a millisecond
// on the slowest rank.
// The fields are zero; a pass's time does not depend on the values. The memory check of the
// deepest candidate comes first, so the scratch fields fit where the run's will.
template <class T>
int Simulation<T>::fastest_time_block(const std::vector<int>& candidates) {
    const Subdomain& sub = topo_.subdomain();
    auto extents = [&](int k) {
        return FieldExtents::make(dom_.dims, sub.size, k, be_.row_alignment());
    };
    check_memory(static_cast<std::size_t>(extents(candidates.back()).total) * sizeof(T));
    StencilParams<T> p;
    p.kind = kind_;
    auto seconds_per_sweep = [&](int k) {
        Field<T> a = be_.allocate_field(extents(k));
        Field<T> b = be_.allocate_field(extents(k));
        auto passes = [&](int n) {
            const auto t0 = std::chrono::steady_clock::now();
            for (int i = 0; i < n; ++i) trial_pass(p, a.view(), b.view(), k);
            be_.sums().join_fold(Lane::boundary);
            be_.wait(Lane::boundary);
            return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        };
        passes(1);
        // Every rank runs the same rounds, each starting together, so that ranks sharing a GPU
        // time each candidate under the same load. They still time each other's passes: a
        // shared GPU's choice is rough.
        const int n = repetitions_for(topo_.comm(), passes(1), 1e-3, 64);
        double best = 0.0;
        for (int round = 0; round < 3; ++round) {
            barrier(topo_.comm());
            const double t = passes(n);
            best = round == 0 ? t : std::min(best, t);
        }
        return best / (static_cast<double>(n) * k);
    };
    const TrialChoice c = agree_on_fastest(topo_.comm(), candidates, seconds_per_sweep);
    for (std::size_t i = 0; i < candidates.size(); ++i)
        trials_.push_back({candidates[i], c.slowest[i]});
    return c.chosen;
}

template <class T>
void Simulation<T>::forget_recordings() {
    for (auto& by_room : recorded_)
        for (auto& by_parity : by_room)
            for (RecordedSweep& r : by_parity) r = RecordedSweep{};
}

// Where a block of sweeps exchanges with another rank, its exchanging pass can be split (the
// shell first, then its halos packed, sent and unpacked beside the interior) or one launch over
// every updated point followed by the halos. Which is faster depends on the machine: the split
// hides the exchange, but a pass's shell, launched on its own, pays a pipeline fill per block and
// waits for multiprocessors held by the interior's long-running blocks (docs/tuning.md, "Exchange
// trial"), while a slow link makes the exposed exchange the dearer. So "auto" times both:
// every rank runs blocks of sweeps on the run's own fields (zero, or whatever the blocks leave: the
// values do not change a block's time, and initialise() overwrites them) with each choice, one
// block each to warm up (NCCL and the peers connect at their first exchange), then rounds of blocks
// taking about 10 ms on the slowest rank, the choices alternating and taking turns to go first,
// so that a GPU still raising its clocks slows neither more. A round counts by its slowest rank:
// a rank whose neighbour's shell came early may end its split pass before the neighbour's
// interior, so its own best round says nothing of the pair's. Rounds of several blocks show ranks
// drifting apart between exchanges, which one-block rounds miss (docs/tuning.md, "Exchange
// trial"). Each choice's fastest round counts. With two depths (time_block "auto":
// halo_depth_candidates) each is timed both ways, a round running the same sweeps at each (one
// block of the deeper, two of the shallower), and the fastest of the four choices is kept with
// its depth's halo setup; the other depth's exchange goes. Results do not depend on the choice.
template <class T>
void Simulation<T>::choose_exchange_pass(const std::vector<int>& depths) {
    if (!exchange_trial_runs()) return;
    StencilParams<T> p;
    p.kind = kind_;
    cur_ = 0;
    // Each choice (a depth, split or fused) keeps its own recordings (a block's single sweeps
    // may be recorded, differently for each), swapped in with it, so no timed round records;
    // each depth its own halo setup.
    struct Choice {
        std::size_t depth;  // index into depths
        bool fused;
    };
    std::vector<Choice> choices;
    for (std::size_t d = 0; d < depths.size(); ++d) {
        for (bool fused : {false, true}) choices.push_back({d, fused});
    }
    std::vector<HaloSetup> setups;
    for (int depth : depths)
        setups.push_back(depth == block_ ? HaloSetup{} : make_halo_setup(depth));
    std::size_t in_use = 0;  // the depth whose setup is the run's (setups[in_use] is empty)
    std::vector<decltype(recorded_)> parked(choices.size());
    forget_recordings();
    std::size_t current = 0;
    auto take = [&](std::size_t c) {
        if (c != current) {
            parked[current] = std::move(recorded_);
            recorded_ = std::move(parked[c]);
            current = c;
        }
        const std::size_t d = choices[c].depth;
        if (d != in_use) {
            use_halo_setup(setups[in_use]);  // the run's setup back to its empty place,
            use_halo_setup(setups[d]);       // and d's (its place left empty) in
            in_use = d;
        }
        room_ = {block_, block_};
        fused_exchanges_ = choices[c].fused;
    };
    // A round runs the same sweeps at every depth: blocks of the deepest depth, or as many
    // shallower blocks as fill one.
    const int round_sweeps = depths.back();
    auto seconds = [&](std::size_t c, int n) {
        take(c);
        const auto t0 = std::chrono::steady_clock::now();
        for (int i = 0; i < n * round_sweeps / block_; ++i) sweeps(p, block_);
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
    // The first of the fastest: the shallower depth, and the split, where they tie.
    std::size_t won = 0;
    for (std::size_t c = 1; c < choices.size(); ++c) {
        if (best[c] < best[won]) won = c;
    }
    exchange_trial_ = {};
    exchange_trial_.ran = true;
    for (std::size_t d = 0; d < depths.size(); ++d)
        exchange_trial_.depths.push_back({depths[d], best[2 * d], best[2 * d + 1]});
    exchange_trial_.taken = choices[won].depth;
    exchange_trial_.fused = choices[won].fused;
    take(won);
    forget_recordings();
    parked.clear();
    setups.clear();  // the other depths' exchanges
    // The trial's passes are not the run's: its phase times and pass count start afresh.
    timer_ = PhaseTimer(be_.make_interval_timer(), phase_every(cfg_, be_));
}

// A pass of the trial: a plain one, or (a residual every sweep) one that sums every level, and
// its fold; k = 1 is then one summing sweep over the updated points (a run's sweep sums its
// shell and interior boxes, in one launch where it is one rank's). With several ranks a summing
// pass also reads its sums back and all-reduces them level by level, as a run takes them: a
// residual's round trip through the host is paid once per pass, and where the subdomain is
// small it is most of a sweep's time, so the trial weighs it.
template <class T>
void Simulation<T>::trial_pass(const StencilParams<T>& p, FieldView<T> a, FieldView<T> b, int k) {
    if (blocks_ != Blocks::summing) {
        be_.time_blocking()->apply_levels(p, a, b, updated_, live_, k, Lane::boundary);
    } else if (k == 1) {
        be_.apply(p, a, b, updated_, Lane::boundary, StencilSum::change);
        double* sum = be_.sums().fold_residual();
        if (topo_.size() > 1)
            (void)allreduce_sum(
                be_.sums().finish_read(be_.sums().start_read(sum, Backend<T>::ReadAfter::fold)));
    } else {
        be_.level_sums()->apply_levels_summing(p, a, b, updated_, live_, k, Lane::boundary,
                                               sum_boxes_);
        const int read = be_.level_sums()->fold_and_read_levels(k);
        if (topo_.size() > 1) {
            for (int l = 0; l < k; ++l)
                (void)allreduce_sum(be_.level_sums()->finish_read_level(read, l));
        }
    }
}

template class Simulation<float>;
template class Simulation<double>;

}  // namespace gridsim

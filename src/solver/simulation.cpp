#include "solver/simulation.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>

#include "comm/gather.hpp"
#include "comm/mpi_session.hpp"
#include "comm/peer_routes.hpp"
#include "solver/initial.hpp"

namespace gridsim {

namespace {

// parallel.phase_every, 0 resolved: the CUDA backend's per-phase events cost a small step
// several microseconds, the CPU's clock reads nothing worth saving.
template <class T>
int phase_every(const Config& cfg, const Backend<T>& be) {
    if (cfg.phase_every > 0) return cfg.phase_every;
    return be.on_device() ? 64 : 1;
}

}  // namespace

template <class T>
Simulation<T>::Simulation(const Config& cfg, MPI_Comm comm, int extra_fields, Blocks blocks,
                          StencilKind kind)
    : cfg_(cfg),
      extra_fields_(extra_fields),
      blocks_(blocks),
      kind_(kind),
      dom_(make_domain(cfg)),
      topo_(comm, cfg, dom_, kStencilRadius),
      choice_(choose_backend<T>(cfg, topo_.comm())),
      be_(*choice_.backend),
      timer_(be_.make_interval_timer(), phase_every(cfg, be_)) {
    const Subdomain& sub = topo_.subdomain();
    owned_ = Box{{0, 0, 0}, sub.size};
    updated_ = updated_box(sub);
    // The shell is kSweepShellDepth deep whatever this run's halo: the boxes a residual is
    // summed over, and so its bits, are then the same for every block. A sweep that exchanges
    // halos deeper than that updates its interior before the exchange (sweep_work).
    regions_ = split_for_overlap(updated_, sub, kSweepShellDepth);
    for (const Box& b : regions_.shell) {
        if (!b.empty()) sum_boxes_.push_back(b);
    }
    if (!regions_.interior.empty()) sum_boxes_.push_back(regions_.interior);
    live_ = extend_into_halos(updated_, sub, 1 << 24);  // the time-block trial's passes take it
    can_sum_in_passes_ = can_sum_in_passes();
    const std::vector<int> candidates = time_block_candidates();
    block_ = candidates.size() == 1 ? candidates.front() : fastest_time_block(candidates);
    // The fields carry the deepest halos the exchange trial may take; the depth it takes sets
    // up the exchange of that many layers (use_halo_setup).
    const std::vector<int> depths = halo_depth_candidates();
    const FieldExtents ext =
        FieldExtents::make(dom_.dims, sub.size, depths.back(), be_.row_alignment());
    check_memory(static_cast<std::size_t>(ext.total) * sizeof(T));
    for (auto& f : u_) f = be_.allocate_field(ext);
    check_ipc_neighbours();
    HaloSetup first = make_halo_setup(block_);
    use_halo_setup(first);
    wrap_period_ = kernel_wrap_period();
    global_updated_ = std::llround(allreduce_sum(static_cast<double>(updated_.count())));
    devices_ = describe_devices();
    record_sweeps_ = decide_recording();
    // A recorded residual is folded on the boundary lane before the next sweep can start; an
    // unrecorded one is folded beside it. Above this many updated points per rank the fold (one
    // partial per stencil block) costs more than the launches a replay saves (jacobi 8192^2 on
    // one H200: 169 us recorded against 161 us; 2 x 4096 x 8192 on two: 119 us against 152
    // us; the git history of docs/performance.md). The same on every rank: the largest rank
    // decides.
    double most = static_cast<double>(updated_.count());
    GRIDSIM_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &most, 1, MPI_DOUBLE, MPI_MAX, topo_.comm()));
    record_residuals_ = cfg_.graphs == GraphMode::on || most <= kRecordResidualPoints;
    choose_exchange_pass(depths);
}

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
// updates k halo layers: two H200s, jacobi 16384^2 float at k = 7, 78.7-78.9 us per step
// against 77.0-77.3 at 14; heat 512^3 double at k = 3, 167.6-168.1 against 165.4-166.0 at 6
// (the git history of docs/performance.md, "Halos twice as deep as a pass"). Else k alone.
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
// not: heat 3D double on an H200, best 4 at 160^3-224^3 and 384^3, 2 at 256^3, 3 at 512^3; up
// to 9% between them; the git history of docs/performance.md). In 3D only where a subdomain's x-y
// cross-section has at least 128^2 points, else 1 (the 3D pass streams one x-y tile per block along
// z, and below that too few blocks fill the GPU: 96^3 double 0.51 x the copy rate at k = 1 against
// 0.46 at k = 3; 128^3 0.75 against 0.84, float 0.41 against 0.46 at k = 4); with a residual every
// sweep (Blocks::summing) where the sweeps can sum inside passes and a rank updates at least
// kSummingMinPoints points, a trial of 1 against summing passes of 2 to kSummingMostLevels (which
// wins depends on size and precision: float 2048^2 k = 1, 4096^2 and 8192^2 k = 3, 16384^2 k = 2 or
// 3 within 2%; double k = 3 from 2048^2, at 8192^2 3 or 4 within 5%), else 1; 1 elsewhere (the CPU:
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
        const int most = be_.max_levels(dom_.dims);
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
            be_.join_fold(Lane::boundary);
            be_.wait(Lane::boundary);
            return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        };
        passes(1);
        // Every rank runs the same rounds, each starting together, so that ranks sharing a GPU
        // time each candidate under the same load. They still time each other's passes (2
        // ranks on one H200, 256^3: 91-126 us per sweep, 42-207 before the rounds were aligned,
        // where one rank alone times 50-55): a shared GPU's choice is rough.
        const int n = repetitions_for(topo_.comm(), passes(1), 1e-3, 64);
        double best = 0.0;
        for (int round = 0; round < 3; ++round) {
            GRIDSIM_MPI_CHECK(MPI_Barrier(topo_.comm()));
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

// Where a block of sweeps exchanges with another rank, its exchanging pass can be split (the
// shell first, then its halos packed, sent and unpacked beside the interior) or one launch over
// every updated point followed by the halos. Which is faster depends on the machine: the split
// hides the exchange, but a pass's shell, launched on its own, pays a pipeline fill per block and
// waits for multiprocessors held by the interior's long-running blocks (one H100, one rank
// copying a periodic axis's halos as a neighbour's would arrive: jacobi 8192 x 16384 at k = 8
// 86.2-86.3 us per sweep split against 80.9-81.0 one launch then the copy, heat 512 x 512 x 256
// at k = 3 199.8-204.1 against 177.7-178.2; the git history of docs/performance.md, "Halo moves
// beside a pass"), while a slow link makes the exposed exchange the dearer. So "auto" times both:
// every rank runs blocks of sweeps on the run's own fields (zero, or whatever the blocks leave: the
// values do not change a block's time, and initialise() overwrites them) with each choice, one
// block each to warm up (NCCL and the peers connect at their first exchange), then rounds of blocks
// taking about 10 ms on the slowest rank, the choices alternating and taking turns to go first,
// so that a GPU still raising its clocks slows neither more. A round counts by its slowest rank:
// a rank whose neighbour's shell came early may end its split pass before the neighbour's
// interior, so its own best round says nothing of the pair's (two ranks sharing one H100, jacobi
// 16384^2 at k = 8: 95-100 us per sweep by each rank's best round, 164 in the run). Rounds of
// several blocks show ranks drifting apart between exchanges (each rank held to half that H100:
// with 2 ms rounds, one block, the trial took the fused pass, 188 us per sweep in the run against
// the split's 171-174). Each choice's fastest round counts. With two depths (time_block "auto":
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
    auto forget_recordings = [](auto& recordings) {
        for (auto& by_room : recordings)
            for (auto& by_parity : by_room)
                for (RecordedSweep& r : by_parity) r = RecordedSweep{};
    };
    forget_recordings(recorded_);
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
    // Each round follows an all-reduce (the count's, then the previous round's), which no rank
    // leaves before every rank has entered it: the ranks start each round together without a
    // barrier, and every rank holds the same round times.
    std::vector<double> best(choices.size(), std::numeric_limits<double>::infinity());
    for (int round = 0; round < kExchangeTrialRounds; ++round) {
        for (std::size_t turn = 0; turn < choices.size(); ++turn) {
            const std::size_t c = (round + turn) % choices.size();
            double t = seconds(c, n) / (static_cast<double>(n) * round_sweeps);
            GRIDSIM_MPI_CHECK(
                MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, topo_.comm()));
            best[c] = std::min(best[c], t);
        }
    }
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
    forget_recordings(recorded_);
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
// small it is most of a sweep's time (two H200s, jacobi 2048^2: 44 us per sweep with the
// residual every sweep, 14 every 100 sweeps; the git history of docs/performance.md), so the trial
// weighs it.
template <class T>
void Simulation<T>::trial_pass(const StencilParams<T>& p, FieldView<T> a, FieldView<T> b, int k) {
    if (blocks_ != Blocks::summing) {
        be_.apply_levels(p, a, b, updated_, live_, k, Lane::boundary);
    } else if (k == 1) {
        be_.apply(p, a, b, updated_, Lane::boundary, StencilSum::change);
        double* sum = be_.fold_residual();
        if (topo_.size() > 1)
            (void)allreduce_sum(be_.finish_read(be_.start_read(sum, Backend<T>::ReadAfter::fold)));
    } else {
        be_.apply_levels_summing(p, a, b, updated_, live_, k, Lane::boundary, sum_boxes_);
        const int read = be_.fold_and_read_levels(k);
        if (topo_.size() > 1) {
            for (int l = 0; l < k; ++l) (void)allreduce_sum(be_.finish_read_level(read, l));
        }
    }
}

// Overlap "auto" or "fused" (a summing pass is one launch, then the halos: forced overlap
// splits the shell from the interior), a backend that sums every level of a pass over this sweep's
// boxes as the sweep itself would, on every rank (a rank's boxes depend on its faces), and with
// several ranks a residual all-reduced on the host: each level's sum then goes through the
// MPI_Allreduce of one double that a sweep's goes through, so the global sums have the same bits.
// NCCL all-reduces a sweep's sum on the device, in an order of its own beyond two ranks.
template <class T>
bool Simulation<T>::can_sum_in_passes() const {
    int here = may_fuse(cfg_.overlap) &&
                       (topo_.size() == 1 || choice_.transport != TransportKind::nccl) &&
                       be_.sums_levels(sum_boxes_, dom_.dims)
                   ? 1
                   : 0;
    GRIDSIM_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &here, 1, MPI_INT, MPI_MIN, topo_.comm()));
    return here == 1;
}

template <class T>
int Simulation<T>::kernel_wrap_period() const {
    const int walk = dom_.dims - 1;
    if (block_ != 1 || !be_.applies_boxes() || !halo_->local_only() ||
        halo_->self_axes() != (1u << walk))
        return 0;
    return topo_.subdomain().size[walk];
}

// Points in the x-y cross-section of the smallest subdomain (the same on every rank).
template <class T>
std::int64_t Simulation<T>::smallest_cross_section() const {
    const std::array<int, 3> grid = topo_.process_grid();
    return std::int64_t{dom_.solved[0] / grid[0]} * (dom_.solved[1] / grid[1]);
}

// parallel.graphs. The ranks decide together: they must issue the same NCCL calls in the same
// order, and a rank whose exchange waits on the host (MPI) cannot record its sweeps.
template <class T>
bool Simulation<T>::decide_recording() {
    if (cfg_.graphs == GraphMode::off) return false;
    int mine = be_.can_capture() && halo_->host_free() ? 1 : 0;
    int all = 0;
    GRIDSIM_MPI_CHECK(MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, topo_.comm()));
    if (all == 0 && cfg_.graphs == GraphMode::on) {
        throw ConfigError(
            cfg_.where("parallel.graphs") +
            "\"on\" needs the CUDA backend and a halo exchange without host steps "
            "(transport \"nccl\" or \"ipc\", or no neighbour on another rank); this run has " +
            (be_.can_capture() ? "transport " + std::string(transport_name())
                               : "the " + be_.name() + " backend"));
    }
    return all == 1;
}

// parallel.transport "ipc": every face to another rank goes by direct stores, which needs both
// ranks' GPUs to reach each other (comm/peer_routes.hpp); where one cannot, the run is refused
// on every rank with the first reason ("auto" takes ipc only where every rank reaches every
// other, so it never is). Nothing to check where every rank reaches every other, or for
// another transport.
template <class T>
void Simulation<T>::check_ipc_neighbours() {
    if (choice_.transport != TransportKind::ipc || choice_.ipc_everywhere) return;
    const Subdomain& sub = topo_.subdomain();
    std::array<int, 6> peers;
    peers.fill(-1);
    for (int face = 0; face < 2 * sub.dims; ++face) {
        if (sub.has_neighbour[face] && topo_.neighbour(face) != topo_.rank())
            peers[face] = topo_.neighbour(face);
    }
    const std::string why =
        agree_on_error(topo_.comm(), neighbour_obstacle(choice_.gpus, topo_.rank(), peers));
    if (!why.empty()) {
        throw ConfigError(cfg_.where("parallel.transport") + "\"ipc\": " + why +
                          "; use \"nccl\" or \"auto\"");
    }
}

// Refuses (ConfigError, on every rank) a deck whose fields do not fit, before allocating them:
// the problem's fields in backend memory, plus one host copy of a field (output, checks) and,
// on the CPU, the node's ranks sharing its available memory. The numbers are the neediest
// rank's.
template <class T>
void Simulation<T>::check_memory(std::size_t field_bytes) {
    MPI_Comm node = MPI_COMM_NULL;
    GRIDSIM_MPI_CHECK(
        MPI_Comm_split_type(topo_.comm(), MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    const Communicator owned(node);
    const double on_node = owned.size();
    const double field = static_cast<double>(field_bytes);
    const double host_free = static_cast<double>(available_host_memory());
    const double kept = cfg_.dump_on_failure ? 1.0 : 0.0;  // the last good state
    const double fields = field_count() + kept;
    const double host_need = (be_.on_device() ? 1.0 : 1.0 + fields) * field * on_node;
    const double dev_need = fields * field;
    const double dev_free = be_.on_device() ? static_cast<double>(be_.free_memory()) : 0.0;
    // {how many times the need exceeds what there is, rank}: MAXLOC finds the neediest rank.
    struct {
        double ratio;
        int rank;
    } mine{0.0, topo_.rank()}, worst{0.0, 0};
    std::string what;
    if (host_free > 0 && host_need > host_free) {
        mine.ratio = host_need / host_free;
        what = fmt::format(
            "needs {:.3g} GiB of host memory on its node ({} rank(s) x {} "
            "field(s) of {:.3g} GiB), {:.3g} GiB available",
            host_need / 1073741824.0, owned.size(),
            be_.on_device() ? 1 : 1 + static_cast<int>(fields), field / 1073741824.0,
            host_free / 1073741824.0);
    }
    if (be_.on_device() && dev_need > dev_free && dev_need / dev_free > mine.ratio) {
        mine.ratio = dev_need / dev_free;
        what = fmt::format(
            "needs {:.3g} GiB of device memory ({} fields of {:.3g} GiB), {:.3g} GiB free",
            dev_need / 1073741824.0, static_cast<int>(fields), field / 1073741824.0,
            dev_free / 1073741824.0);
    }
    GRIDSIM_MPI_CHECK(MPI_Allreduce(&mine, &worst, 1, MPI_DOUBLE_INT, MPI_MAXLOC, topo_.comm()));
    if (worst.ratio <= 0.0) return;
    const int root = worst.rank;
    std::string text = topo_.rank() == root ? what : std::string();
    broadcast_string(topo_.comm(), text, root);
    const std::vector<int> cells(cfg_.cells.begin(), cfg_.cells.begin() + cfg_.dims);
    throw ConfigError(cfg_.where("grid.cells") +
                      fmt::format("{} points on {} rank(s) do not fit: rank {} {}",
                                  fmt::join(cells, "x"), topo_.size(), root, text));
}

template <class T>
std::string Simulation<T>::describe_devices() {
    const std::string mine = choice_.device.device >= 0 ? choice_.device.name : be_.name();
    std::string text;
    if (topo_.rank() == 0) {
        std::map<std::string, int> count;
        for (const std::string& d : gather_strings(topo_.comm(), mine)) ++count[d];
        for (const auto& [name, n] : count)
            text += fmt::format("{}{} x {}", text.empty() ? "" : ", ", n, name);
    } else {
        gather_strings(topo_.comm(), mine);
    }
    broadcast_string(topo_.comm(), text);
    return text;
}

// The initial condition is computed where the field lives (on the device for the CUDA backend:
// nothing crosses the host); a restart's field is read on the host and uploaded. Either way the
// first field's halos are exchanged and the whole field, halos included, copied to the second.
template <class T>
void Simulation<T>::initialise(const std::function<void(const HostField&)>& load) {
    const Subdomain& sub = topo_.subdomain();
    const FieldExtents& ext = u_[0].extents();
    if (load) {
        std::vector<T> host(ext.total, T(0));
        load(HostField{host.data(), sizeof(T) == 4, ext});
        be_.upload(host, u_[0].view());
    } else {
        const std::array<int, 3> origin{sub.offset[0] + dom_.solved_origin[0],
                                        sub.offset[1] + dom_.solved_origin[1],
                                        sub.offset[2] + dom_.solved_origin[2]};
        be_.fill_initial(make_initial_params(cfg_, dom_), u_[0].view(), origin);
    }
    exchange(u_[0].view());
    be_.copy(u_[1].view().data, u_[0].view().data, static_cast<std::size_t>(ext.total),
             Lane::boundary);
    be_.wait(Lane::boundary);
    cur_ = 0;
    room_ = {block_, block_};
    // NCCL connects the ranks for a collective at its first use: about 0.9 s on 2 x H200, which
    // would otherwise land in the first timed residual. One empty residual pays it here.
    if (reduces_on_device()) {
        (void)be_.finish_read(reduce_on_device_and_read(be_.fold_residual()));
    }
}

// The shell of `r` on the boundary lane: the updated points that read a halo. `apply(box,
// lane)` updates a box (one sweep, or a block of them).
template <class T>
template <class Apply>
void Simulation<T>::update_shell(Apply&& apply, const SweepRegions& r) {
    auto t = timer_.on_lane(Phase::boundary, Lane::boundary);
    for (const Box& b : r.shell) apply(b, Lane::boundary);
}

// Every updated point at once on the boundary lane (fuses()), then the halos.
template <class T>
template <class Apply>
void Simulation<T>::update_fused(Apply&& apply) {
    {
        auto t = timer_.on_lane(Phase::interior, Lane::boundary);
        apply(updated_, Lane::boundary);
    }
    exchange_beside_interior(next(), apply, nullptr);
}

// A sweep that fuses(): every updated point in one launch where the backend takes several boxes
// at once (Backend::apply_boxes), then the halos. A sum's partials follow the split sweep's
// boxes (the shell, then the interior), so its residual is bitwise the split sweep's; a periodic
// walk axis this rank holds alone is copied into the halo by the sweep itself (wrap_period_).
template <class T>
void Simulation<T>::update_fused_sweep(const StencilParams<T>& p, StencilSum sum) {
    auto apply = [&](const Box& b, Lane lane) { be_.apply(p, current(), next(), b, lane, sum); };
    if (!be_.applies_boxes()) {
        update_fused(apply);
        return;
    }
    {
        auto t = timer_.on_lane(Phase::interior, Lane::boundary);
        be_.apply_boxes(p, current(), next(),
                        sum != StencilSum::none ? sum_boxes_ : std::vector<Box>{updated_},
                        Lane::boundary, sum, wrap_period_);
    }
    if (wrap_period_ == 0) exchange_beside_interior(next(), apply, nullptr);
}

// The interior of `r`, which reads no halo, on `lane`.
template <class T>
template <class Apply>
void Simulation<T>::update_interior(Apply&& apply, Lane lane, const SweepRegions& r) {
    auto t = timer_.on_lane(Phase::interior, lane);
    apply(r.interior, lane);
}

// Packs, transfers and unpacks the halos of `halos` on the boundary lane (axis by axis for deep
// halos) while the interior lane (low priority) updates the interior of `interior`; overlap =
// false updates it after the unpack, on the boundary lane; nullptr (a fused sweep has updated
// every point already) updates none.
template <class T>
template <class Apply>
void Simulation<T>::exchange_beside_interior(FieldView<T> halos, Apply&& apply,
                                             const SweepRegions* interior) {
    for (int g = 0; g < halo_->groups(); ++g) {
        {
            auto t = timer_.on_lane(Phase::pack, Lane::boundary);
            halo_->pack(halos, g);
        }
        if (interior && overlapped() && g == 0) update_interior(apply, Lane::interior, *interior);
        {
            auto t = timer_.on_lane(Phase::transfer, Lane::boundary);
            halo_->transfer(halos, g, interior != nullptr && overlapped());
        }
        {
            auto t = timer_.on_lane(Phase::unpack, Lane::boundary);
            halo_->unpack(halos, g);
        }
    }
    if (interior && !overlapped()) update_interior(apply, Lane::boundary, *interior);
}

// After a sweep or a block of them that leaves `extend` halo layers valid (none: it exchanged,
// and all block_ are), current <-> next.
template <class T>
void Simulation<T>::advance_fields(int extend) {
    room_[1 - cur_] = extend == 0 ? block_ : extend;
    cur_ = 1 - cur_;
}

// The overlap recipe (docs/architecture.md, "One step"). The boundary lane (high priority) updates
// the shell that needs last step's halos and packs the faces; the interior lane (low priority)
// updates the rest, which reads no halo, while the boundary lane transfers and unpacks. Lanes meet
// only at join_lanes(): no device-wide synchronisation. overlap = false runs the same phases one
// after another on the boundary lane.
template <class T>
void Simulation<T>::sweep(const StencilParams<T>& p, bool residual) {
    settle_download(1 - cur_);
    timer_.start_pass();
    const int extend = room_[cur_] - 1;
    RecordedSweep& rec = recorded_[extend][cur_][residual ? 1 : 0];
    const StencilSum sum = residual ? StencilSum::change : StencilSum::none;
    if (record_sweeps_ && !timer_.sampled() && rec.ran && (!residual || record_residuals_)) {
        replay_sweep(rec, p, sum, extend);
    } else {
        rec.ran = true;
        sweep_work(p, sum, extend);
        lanes_joined_ = false;
    }
    advance_fields(extend);
}

// The pair is recorded once both single sweeps have run unrecorded (whatever their first run
// sets up is then in place before a capture), and replays only where neither of its passes is
// sampled for phase timing. It writes both fields.
template <class T>
void Simulation<T>::sweep_pair(const StencilParams<T>& p) {
    const bool ready = record_sweeps_ && recorded_[0][0][0].ran && recorded_[0][1][0].ran;
    if (!ready || timer_.samples_within(2)) {
        sweep(p);
        sweep(p);
        return;
    }
    settle_download(0);
    settle_download(1);
    timer_.start_pass();
    timer_.start_pass();
    RecordedSweep& rec = recorded_pairs_[cur_];
    if (!rec.work) {
        be_.begin_capture(false);
        sweep_work(p, StencilSum::none, 0);
        cur_ = 1 - cur_;
        sweep_work(p, StencilSum::none, 0);
        cur_ = 1 - cur_;
        rec.work = be_.end_capture();
    }
    if (!lanes_joined_) be_.join_lanes();  // as in replay_sweep
    lanes_joined_ = true;
    (void)rec.work->launch();
    advance_fields(0);
    advance_fields(0);
}

// With temporal blocking the sweep also updates the halo layers that stay valid: a point
// `extend` layers out reads the layer beyond it, which the current field holds (room =
// extend + 1), and each such point is computed from the same values as on the rank that owns it.
template <class T>
void Simulation<T>::sweep_work(const StencilParams<T>& p, StencilSum sum, int extend) {
    be_.join_lanes();  // last step's writes (both lanes) precede this step's reads
    auto apply = [&](const Box& b, Lane lane) { be_.apply(p, current(), next(), b, lane, sum); };
    if (extend > 0) update_ring(p, current(), next(), extend);
    if (extend == 0 && fuses(sum)) {
        update_fused_sweep(p, sum);
        return;
    }
    update_shell(apply, regions_);
    if (extend > 0) {
        update_interior(apply, overlapped() ? Lane::interior : Lane::boundary, regions_);
        return;
    }
    // Faces deeper than the shell reach into the interior, which then goes first.
    const bool beside = block_ <= kSweepShellDepth;
    if (!beside) update_interior(apply, Lane::boundary, regions_);
    exchange_beside_interior(next(), apply, beside ? &regions_ : nullptr);
}

// A block of sweeps, in as few passes as the backend's most levels allow, of lengths that differ
// by one at most (a single level is a sweep): a short pass costs nearly a whole pass over memory,
// so 14 sweeps where a pass takes 8 go as 7 and 7, not 8 and 6.
template <class T>
void Simulation<T>::sweeps(const StencilParams<T>& p, int count) {
    if (block_ == 1) {
        for (; count >= 2; count -= 2) sweep_pair(p);
        if (count == 1) sweep(p);
        return;
    }
    const int most = be_.max_levels(dom_.dims);
    for (int passes = (count + most - 1) / most; passes > 0; --passes) {
        const int levels = (count + passes - 1) / passes;
        if (levels == 1) {
            sweep(p);
        } else {
            pass(p, levels);
        }
        count -= levels;
    }
}

// One pass: while the points `extend` = room - count layers beyond the updated ones stay valid,
// one box and one launch; with none left, the shell goes first and the halos travel beside the
// interior, as in a single sweep.
template <class T>
void Simulation<T>::pass(const StencilParams<T>& p, int count, bool sums) {
    settle_download(1 - cur_);
    timer_.start_pass();
    be_.join_lanes();
    lanes_joined_ = false;
    const int extend = room_[cur_] - count;
    // A summing pass is one call, then the halos (with a neighbour on another rank too): the
    // layout of its partials spans every box a sweep sums.
    auto apply = [&](const Box& b, Lane lane) {
        if (sums) {
            be_.apply_levels_summing(p, current(), next(), b, live_, count, lane, sum_boxes_);
        } else {
            be_.apply_levels(p, current(), next(), b, live_, count, lane);
        }
    };
    if (extend > 0) {
        auto t = timer_.on_lane(Phase::interior, Lane::boundary);
        apply(extend_into_halos(updated_, topo_.subdomain(), extend), Lane::boundary);
    } else if (sums || fuses(StencilSum::none)) {
        update_fused(apply);
    } else {
        update_shell(apply, pass_regions_);
        exchange_beside_interior(next(), apply, &pass_regions_);
    }
    advance_fields(extend);
}

// A pass with every level's residual requested; a single sweep is a sweep with its residual.
template <class T>
void Simulation<T>::residual_sweeps(const StencilParams<T>& p, int count) {
    if (count == 1) {
        sweep(p, true);
        request_residual();
        return;
    }
    pass(p, count, true);
    extra_memory_passes_ += std::max(0, count - be_.max_levels(dom_.dims));
    const int read = be_.fold_and_read_levels(count);
    for (int l = 0; l < count; ++l) pending_.push_back({nullptr, false, read, false, l});
}

template <class T>
void Simulation<T>::update_ring(const StencilParams<T>& p, FieldView<const T> in, FieldView<T> out,
                                int extend) {
    auto t = timer_.on_lane(Phase::boundary, Lane::boundary);
    for (const Box& b : rings_[extend]) be_.apply(p, in, out, b, Lane::boundary, StencilSum::none);
}

// The recording holds the whole sweep and, with a residual, its fold, its all-reduce over the
// ranks (NCCL) and its read-back: one launch for all of it. It reads the fields at fixed
// addresses, so one recording serves every sweep of the same parity and kind.
template <class T>
void Simulation<T>::replay_sweep(RecordedSweep& rec, const StencilParams<T>& p, StencilSum sum,
                                 int extend) {
    const bool residual = sum != StencilSum::none;
    if (!rec.work) {
        be_.begin_capture(residual && !reduces_on_device());
        sweep_work(p, sum, extend);
        if (residual && reduces_on_device()) {
            double* folded = be_.fold_residual();
            allreduce_on_lane(folded, 1);
            be_.start_read(folded, Backend<T>::ReadAfter::boundary_lane);
        } else if (residual) {
            be_.fold_and_read();
        }
        rec.work = be_.end_capture();
    }
    // A replay waits for the work issued before it on the boundary lane only: after a sweep
    // that ran unrecorded, the interior lane may still be writing the field the replay reads.
    if (!lanes_joined_) be_.join_lanes();
    lanes_joined_ = true;
    const int read = rec.work->launch();
    if (residual) recorded_read_ = read;
}

// The input's halos travel while the interior (which reads none) is updated; the shell, which
// reads them, follows the unpack on the boundary lane.
template <class T>
void Simulation<T>::apply_summing(const StencilParams<T>& p, FieldView<T> in, FieldView<T> out,
                                  StencilSum sum) {
    be_.join_lanes();  // in was written on either lane
    timer_.start_pass();
    auto apply = [&](const Box& b, Lane lane) { be_.apply(p, in, out, b, lane, sum); };
    exchange_beside_interior(in, apply, &regions_);
    update_shell(apply, regions_);
    be_.join_lanes();
}

template <class T>
double* Simulation<T>::apply_and_dot(const StencilParams<T>& p, FieldView<T> in, FieldView<T> out) {
    apply_summing(p, in, out, StencilSum::product);
    double* sum = be_.fold_residual();
    be_.join_fold(Lane::boundary);
    return sum;
}

// The full index range of the field (halos included, row padding not), cut into slabs around
// the updated box: on each axis below and above it, the other axes whole (corners twice).
template <class T>
void Simulation<T>::zero_outside_updated(FieldView<T> f) {
    const int h = f.ext.halo;
    Box full{{-h, -h, f.ext.dims == 3 ? -h : 0},
             {f.ext.n[0] + h, f.ext.n[1] + h, f.ext.dims == 3 ? f.ext.n[2] + h : 1}};
    for (int d = 0; d < f.ext.dims; ++d) {
        Box below = full;
        below.hi[d] = updated_.lo[d];
        Box above = full;
        above.lo[d] = updated_.hi[d];
        if (!below.empty()) be_.fill(f, below, T(0));
        if (!above.empty()) be_.fill(f, above, T(0));
    }
}

template <class T>
double Simulation<T>::allreduce_sum(double local) {
    return allreduce_sums<1>({local})[0];
}

// Every rank's value added in rank order, the first rank's first: the order of the ipc
// transport's mailbox all-reduce, so bitwise its result.
template <class T>
double Simulation<T>::sum_in_rank_order(double local) {
    std::vector<double> all(static_cast<std::size_t>(topo_.size()));
    GRIDSIM_MPI_CHECK(
        MPI_Allgather(&local, 1, MPI_DOUBLE, all.data(), 1, MPI_DOUBLE, topo_.comm()));
    double sum = all[0];
    for (std::size_t r = 1; r < all.size(); ++r) sum += all[r];
    return sum;
}

// The fold and the read-back run beside the next sweep: neither lane waits for them. An
// all-reduce on the device (NCCL, several ranks) must be ordered on the boundary lane with the
// halo messages of the same communicator; it is issued only when the value is taken, after the
// next sweep's boundary work, so it runs beside that sweep's interior instead of delaying it.
template <class T>
void Simulation<T>::request_residual() {
    if (recorded_read_ >= 0) {  // a replayed sweep folded, summed and started reading it
        pending_.push_back({nullptr, false, recorded_read_, true});
        recorded_read_ = -1;
        return;
    }
    double* sum = be_.fold_residual();
    const bool on_device = reduces_on_device();
    const int read = on_device ? -1 : be_.start_read(sum, Backend<T>::ReadAfter::fold);
    pending_.push_back({sum, on_device, read, false});
}

template <class T>
int Simulation<T>::reduce_on_device_and_read(double* sum) {
    be_.join_fold(Lane::boundary);
    allreduce_on_lane(sum, 1);
    return be_.start_read(sum, Backend<T>::ReadAfter::boundary_lane);
}

// The wait in finish_read() is for the requesting sweep itself to finish, so it is not timed as
// a reduction; the all-reduce is (on the boundary lane, or on the host).
template <class T>
double Simulation<T>::take_residual() {
    const PendingResidual p = pending_.front();
    pending_.pop_front();
    if (p.on_device) {
        int read = -1;
        {
            auto t = timer_.on_lane(Phase::reduction, Lane::boundary);
            read = reduce_on_device_and_read(p.sum);
        }
        return std::sqrt(be_.finish_read(read));
    }
    // A pass's level is summed over the ranks as its own sweep's residual would be: where that
    // is on the device (the ipc transport's mailboxes add the ranks' values in rank order; NCCL
    // runs no summing passes), in rank order on the host; else through the same MPI_Allreduce
    // of one double (one call for all of a pass's levels might let MPI sum in another order).
    // The device's all-reduce would hold the boundary lane until every rank's fold arrived.
    const double sum =
        p.level >= 0 ? be_.finish_read_level(p.read, p.level) : be_.finish_read(p.read);
    if (p.global || topo_.size() == 1) return std::sqrt(sum);
    auto t = timer_.on_host(Phase::reduction);
    if (p.level >= 0 && reduces_on_device()) return std::sqrt(sum_in_rank_order(sum));
    return std::sqrt(allreduce_sum(sum));
}

template <class T>
double Simulation<T>::residual_separate_pass() {
    auto t = timer_.on_host(Phase::reduction);
    return std::sqrt(allreduce_sum(be_.sum_sq_diff(current(), u_[1 - cur_].view(), updated_)));
}

template <class T>
double Simulation<T>::norm() {
    auto t = timer_.on_host(Phase::reduction);
    return std::sqrt(allreduce_sum(be_.sum_sq(current(), owned_)));
}

template <class T>
FieldStats Simulation<T>::stats() {
    auto t = timer_.on_host(Phase::reduction);
    const FieldStats mine = be_.stats(current(), owned_);
    FieldStats all;
    GRIDSIM_MPI_CHECK(MPI_Allreduce(&mine.min, &all.min, 1, MPI_DOUBLE, MPI_MIN, topo_.comm()));
    GRIDSIM_MPI_CHECK(MPI_Allreduce(&mine.max, &all.max, 1, MPI_DOUBLE, MPI_MAX, topo_.comm()));
    GRIDSIM_MPI_CHECK(MPI_Allreduce(&mine.sum, &all.sum, 1, MPI_DOUBLE, MPI_SUM, topo_.comm()));
    GRIDSIM_MPI_CHECK(
        MPI_Allreduce(&mine.nonfinite, &all.nonfinite, 1, MPI_INT64_T, MPI_SUM, topo_.comm()));
    return all;
}

template <class T>
PhaseTimes Simulation<T>::finish() {
    be_.wait(Lane::boundary);
    be_.wait(Lane::interior);
    return timer_.totals();
}

template <class T>
FieldView<const T> Simulation<T>::current_on_host() {
    be_.download(current(), host_copy_);
    return {host_copy_.data(), u_[cur_].extents()};
}

template <class T>
void Simulation<T>::keep_last_good(std::int64_t step) {
    last_good_step_ = step;
    const FieldExtents& ext = u_[cur_].extents();
    if (last_good_.extents().total == 0) last_good_ = be_.allocate_field(ext);
    be_.copy(last_good_.view().data, current().data, static_cast<std::size_t>(ext.total),
             Lane::boundary);
}

template <class T>
HostField Simulation<T>::last_good_host_field() {
    be_.download(last_good_.view(), host_copy_);
    return HostField{host_copy_.data(), sizeof(T) == 4, last_good_.extents()};
}

template <class T>
HostField Simulation<T>::current_host_field() {
    const FieldView<const T> v = current_on_host();
    return HostField{v.data, sizeof(T) == 4, v.ext};
}

// Only the owned points travel, packed by the copy itself: the writer then hands HDF5 the
// buffer as it is, with no packing copy on the host.
template <class T>
StagedField Simulation<T>::stage_current(void* dst) {
    auto landing = std::make_shared<Landing>();
    be_.download_box(current(), owned_, static_cast<T*>(dst), landing);
    downloading_[cur_] = true;
    return {HostField{dst, sizeof(T) == 4, FieldExtents::make(dom_.dims, owned_.hi, 0)}, landing};
}

template <class T>
std::shared_ptr<void> Simulation<T>::allocate_staging() {
    auto buf = std::make_shared<Buffer<T>>(be_.allocate_host(u_[cur_].extents().total));
    return std::shared_ptr<void>(buf, buf->data());  // keeps the Buffer alive
}

template <class T>
std::vector<double> Simulation<T>::gather() {
    return gather_to_root(topo_, dom_, current_on_host());
}

template class Simulation<float>;
template class Simulation<double>;

}  // namespace gridsim

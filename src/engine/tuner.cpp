#include "engine/tuner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <memory>

#include "engine/residual_pipeline.hpp"
#include "engine/sweeper.hpp"
#include "parallel/collectives.hpp"
#include "platform/resource_checks.hpp"

namespace gridsim {

namespace {

// One rank's residual sweeps as a run replays them (Sweeper::sweep with a residual, or
// Sweeper::residual_group where the run groups them, then the residual pipeline): two recordings
// from `a`, replayed in turn, each one sweep over the updated points into `b` (the other from `b`
// into `a`) or a group of Recording::kMostReads (`a` into `b`, back, and so on), every sweep
// summing its change and ending in fold_and_read; a replay's reads are finished (the host folds
// the partials) after the next replay is issued. Each direction first runs once unrecorded, as a
// run's first sweep of a kind does (it sizes the partials a recording holds).
template <class T>
class ReplayedSweeps {
public:
    ReplayedSweeps(Backend<T>& be, const StencilParams<T>& p, FieldView<T> a, FieldView<T> b,
                   const Box& updated, bool groups)
        : be_(be), per_replay_(groups ? Recording::kMostReads : 1) {
        auto sweep = [&](int d) {
            be_.apply(p, d == 0 ? a : b, d == 0 ? b : a, updated, Lane::boundary,
                      StencilSum::change);
        };
        for (int d = 0; d < 2; ++d) {
            sweep(d);
            (void)be_.sums().finish_read(be_.sums().fold_and_read());
        }
        for (int r = 0; r < 2; ++r) {
            be_.recorder()->begin_capture(true);
            for (int i = 0; i < per_replay_; ++i) {
                sweep(groups ? i % 2 : r);
                (void)be_.sums().fold_and_read();
            }
            recordings_[r] = be_.recorder()->end_capture();
        }
    }
    ReplayedSweeps(const ReplayedSweeps&) = delete;
    ReplayedSweeps& operator=(const ReplayedSweeps&) = delete;

    // `n` replays (n x per_replay() sweeps), every read finished by the time it returns.
    void replays(int n) {
        for (int i = 0; i < n; ++i) {
            const int read = recordings_[next_]->launch();
            next_ = 1 - next_;
            finish();
            unread_ = read;
        }
        finish();
    }
    [[nodiscard]] int per_replay() const { return per_replay_; }

private:
    void finish() {
        for (int i = 0; unread_ >= 0 && i < per_replay_; ++i)
            (void)be_.sums().finish_read(unread_ + i);
        unread_ = -1;
    }

    Backend<T>& be_;
    int per_replay_;
    std::array<std::unique_ptr<Recording>, 2> recordings_;
    int next_ = 0;
    int unread_ = -1;
};

}  // namespace

template <class T>
SweepPlan Tuner<T>::plan(FieldPair<T>& fields, HaloSetup<T>& halos,
                         const std::function<void(const FieldExtents&)>& check_fits) {
    SweepPlan plan = time_block_plan(check_fits);
    const std::vector<int> depths = halo_depths(plan);
    const FieldExtents ext = FieldExtents::make(
        dom_.dims, topo_.subdomain().size, geo_.halo_layers(depths.back()), be_.row_alignment());
    check_fits(ext);
    fields.allocate(be_, ext);
    // Transport ipc where some rank cannot reach every other ("auto" never takes it then).
    if (choice_.transport == TransportKind::ipc && !choice_.ipc.everywhere)
        check_ipc_neighbours(cfg_, topo_, choice_.gpus);
    halos = make_halo_setup(topo_, choice_, fields, geo_, plan.block);
    plan_exchange(plan, *halos.halo);
    choose_exchange_pass(plan, depths, fields, halos);
    return plan;
}

template <class T>
SweepPlan Tuner<T>::time_block_plan(const std::function<void(const FieldExtents&)>& check_fits) {
    SweepPlan plan;
    plan.blocks = blocks_;
    plan.overlap = cfg_.overlap;
    if (cfg_.overlap == OverlapMode::faces_first || cfg_.overlap == OverlapMode::pipelined) {
        if (!writes_faces_first()) {
            throw ConfigError(cfg_.where("parallel.overlap") +
                              fmt::format("\"{}\" needs the CUDA backend and a 3D star of radius "
                                          "1; this run has the {} backend and a {}D star of "
                                          "radius {}",
                                          to_string(cfg_.overlap), be_.name(), dom_.dims,
                                          stencil_radius(kind_)));
        }
        plan.exchange_pass = cfg_.overlap == OverlapMode::faces_first ? ExchangePass::faces_first
                                                                      : ExchangePass::pipelined;
    }
    plan.box_sweeps = be_.box_sweeps() != nullptr;
    plan.updated_points = geo_.updated.count();
    plan.can_sum_in_passes = can_sum_in_passes();
    const std::vector<int> candidates = time_block_candidates(plan.can_sum_in_passes);
    if (candidates.size() == 1) {
        plan.block = candidates.front();
    } else {
        // The memory check of the deepest candidate comes first, so the scratch fields fit
        // where the run's will.
        check_fits(FieldExtents::make(dom_.dims, topo_.subdomain().size,
                                      geo_.halo_layers(candidates.back()), be_.row_alignment()));
        plan.block = fastest_time_block(candidates);
    }
    plan.pass_levels = pass_levels(plan.block);
    return plan;
}

// The most levels a pass of a block of `block` sweeps takes: the backend's most, but for a star
// wider than one point in a block the deck sets (parallel.time_block = k) where the backend keeps
// several levels on chip: a trial of passes of min(k, most) levels against sweeps (as "auto"
// weighs k = 1), since such a pass holds more ring per point than a plain star's and may run
// slower than its sweeps (docs/tuning.md, "Wide stars in time blocks").
template <class T>
int Tuner<T>::pass_levels(int block) {
    const int most = be_.levels_per_pass(dom_.dims, kind_);
    if (block < 2 || most < 2 || geo_.radius == 1 || cfg_.time_block == 0 ||
        blocks_ != Blocks::plain || !be_.on_device())
        return most;
    return fastest_time_block({1, std::min(block, most)});
}

// A backend that sums every level of a pass over this sweep's boxes as the sweep itself would,
// on every rank (a rank's boxes depend on its faces). Over the ranks each level's sum goes
// through the sum a sweep's goes through (residual_over_ranks), whatever the transport and the
// rank count, so the global sums have the same bits.
template <class T>
bool Tuner<T>::can_sum_in_passes() const {
    const int here =
        be_.level_sums() != nullptr && be_.level_sums()->sums_levels(geo_.sum_boxes, dom_.dims) ? 1
                                                                                                : 0;
    return allreduce(topo_.comm(), here, Reduce::min) == 1;
}

// A residual's local sum summed over the ranks as the run sums it.
template <class T>
double Tuner<T>::sum_over_ranks(double local) const {
    return residual_over_ranks(topo_.comm(), local, choice_.transport);
}

// parallel.time_block. "auto": where the backend advances several sweeps per pass over memory
// (CUDA), a start-up trial of every k from 2 to its most levels (fastest_time_block): which k is
// fastest depends on the size (the blocks of a pass fill the multiprocessors in whole waves or
// not). In 3D only where a subdomain's x-y cross-section has at least kLevels3dMinCrossSection
// points, else 1 (the 3D pass streams one x-y tile per block along z, and below that too few
// blocks fill the GPU; the process grid's model credits the pass only there). With a residual every
// sweep (Blocks::summing) where the sweeps can sum inside passes, a trial of 1 against summing
// passes of 2 to kSummingMostLevels (which wins depends on size and precision), else 1; 1 elsewhere
// (the CPU: its passes go level by level, a pass over memory each), and for the CG (it exchanges
// inside every operator application), and where a pass of the stencil takes one level. A star
// wider than one point has 1 among its candidates. Whether k fits is a pure function of the deck
// and the process grid, so every rank decides alike.
template <class T>
std::vector<int> Tuner<T>::time_block_candidates(bool can_sum) const {
    auto problem = [&](int k) {
        return decomposition_problem(dom_, topo_.process_grid(), topo_.size(), geo_.halo_layers(k));
    };
    // `ks` and then every k from 2 to `most` that the subdomain fits.
    auto fitting = [&](std::vector<int> ks, int most) {
        for (int k = 2; k <= most; ++k) {
            if (problem(k).empty()) ks.push_back(k);
        }
        return ks;
    };
    if (cfg_.time_block == 0) {
        const int most = be_.levels_per_pass(dom_.dims, kind_);
        if (blocks_ == Blocks::none || !be_.on_device() || most < 2) return {1};
        if (blocks_ == Blocks::summing) {
            if (!can_sum) return {1};
            return fitting({1}, std::min(kSummingMostLevels, most));
        }
        if (dom_.dims == 3 &&
            smallest_cross_section(dom_, topo_.process_grid()) < kLevels3dMinCrossSection)
            return {1};
        // A wider star's pass holds more ring per point than a plain star's: its sweep is a
        // candidate too (docs/tuning.md, "Wide stars in time blocks").
        std::vector<int> ks =
            fitting(geo_.radius > 1 ? std::vector<int>{1} : std::vector<int>{}, most);
        if (ks.empty()) ks.push_back(1);
        return ks;
    }
    const int k = cfg_.time_block;
    if (const std::string why = problem(k); !why.empty()) {
        throw ConfigError(cfg_.where("parallel.time_block") +
                          fmt::format("{} needs {}-deep halos: {}", k, geo_.halo_layers(k), why));
    }
    return {k};
}

// Each candidate's pass over this rank's updated points (one launch, as on one rank), from one
// scratch field into another shaped as that k's fields (its halo depth sets the row strides):
// one pass to warm up, then the fastest of three rounds of passes that take about a millisecond
// on the slowest rank. The fields are zero; a pass's time does not depend on the values. Where
// the run replays its residual sweeps from recordings (replays_residual_sweeps), k = 1 is timed
// so too (ReplayedSweeps, in groups where the run has no tolerance): a launch and a fold kernel
// per sweep cost a small subdomain more than the replay whose partials the host folds, and the
// trial would pick a k the run is slower at.
template <class T>
int Tuner<T>::fastest_time_block(const std::vector<int>& candidates) {
    auto extents = [&](int k) {
        return FieldExtents::make(dom_.dims, topo_.subdomain().size, geo_.halo_layers(k),
                                  be_.row_alignment());
    };
    auto seconds_per_sweep = [&](int k) {
        Field<T> a = be_.allocate_field(extents(k));
        Field<T> b = be_.allocate_field(extents(k));
        Field<T> coeffs;
        const StencilParams<T> p = trial_params(extents(k), coeffs);
        const FaceMoves<T> mirrors =
            fixed_face_mirrors<T>(topo_.subdomain(), geo_.radius - 1, geo_.halo_layers(k));
        std::unique_ptr<ReplayedSweeps<T>> replayed;
        if (k == 1 && blocks_ == Blocks::summing && replays_residual_sweeps())
            replayed = std::make_unique<ReplayedSweeps<T>>(be_, p, a.view(), b.view(), geo_.updated,
                                                           cfg_.number("time.tolerance") <= 0);
        auto passes = [&](int n) {
            const auto t0 = std::chrono::steady_clock::now();
            if (replayed) {
                replayed->replays(n);
            } else {
                for (int i = 0; i < n; ++i) trial_pass(p, a.view(), b.view(), k, mirrors);
            }
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
        return best / (static_cast<double>(n) * (replayed ? replayed->per_replay() : k));
    };
    const TrialChoice c = agree_on_fastest(topo_.comm(), candidates, seconds_per_sweep);
    for (std::size_t i = 0; i < candidates.size(); ++i)
        trials_.push_back({candidates[i], c.slowest[i]});
    return c.chosen;
}

// Whether the run will replay its residual sweeps from recordings, as plan_exchange decides once
// the halos exist: on one rank every halo is the rank's own and none waits on the host, so that
// is where a recorder is present and parallel.graphs allows it. With several ranks a run's
// recording holds its sweep's halo exchange, which does not exist yet: the trial times
// unrecorded sweeps, each read back and summed over the ranks before the next.
template <class T>
bool Tuner<T>::replays_residual_sweeps() const {
    return topo_.size() == 1 && be_.recorder() != nullptr && cfg_.graphs != GraphMode::off &&
           records_residuals(static_cast<double>(geo_.updated.count()));
}

// A pass of the trial: a plain one, or (a residual every sweep) one that sums every level, and
// its fold; k = 1 is then one summing sweep over the updated points (a run's sweep sums its
// shell and interior boxes, in one launch where it is one rank's). With several ranks a summing
// pass also reads its sums back and sums them over the ranks level by level, as a run takes them: a
// residual's round trip through the host is paid once per pass, and where the subdomain is
// small it is most of a sweep's time, so the trial weighs it. A star wider than one point reads
// halos beyond the fixed faces, which the run reflects: a pass reflects each level but the last
// on chip and the exchange after it the last, a sweep the exchange after it; the trial does the
// same with `mirrors`, those layers of k's fields (the fields are zero, the work is the run's).
template <class T>
void Tuner<T>::trial_pass(const StencilParams<T>& p, FieldView<T> a, FieldView<T> b, int k,
                          const FaceMoves<T>& mirrors) {
    const Box& updated = geo_.updated;
    if (blocks_ != Blocks::summing) {
        if (k == 1) {
            be_.apply(p, a, b, updated, Lane::boundary, StencilSum::none);
        } else {
            be_.time_blocking()->apply_levels(p, a, b, updated, geo_.live, k, mirrors,
                                              Lane::boundary);
        }
        if (!mirrors.empty()) be_.reflect(b, mirrors, Lane::boundary);
    } else if (k == 1) {
        be_.apply(p, a, b, updated, Lane::boundary, StencilSum::change);
        if (topo_.size() > 1) {
            (void)sum_over_ranks(be_.sums().finish_read(be_.sums().fold_and_read()));
        } else {
            (void)be_.sums().fold_residual();
        }
    } else {
        be_.level_sums()->start_summing_pass(geo_.sum_boxes, k);
        be_.level_sums()->apply_levels_summing(p, a, b, updated, geo_.live, k, Lane::boundary);
        const int read = be_.level_sums()->fold_and_read_levels(k);
        if (topo_.size() > 1) take_level_sums(read, k);
    }
}

// Waits for a summing pass's read of its `levels` sums and sums them over the ranks level by
// level, as a run takes them (ResidualPipeline::take).
template <class T>
void Tuner<T>::take_level_sums(int read, int levels) {
    for (int l = 0; l < levels; ++l)
        (void)sum_over_ranks(be_.level_sums()->finish_read_level(read, l));
}

template class Tuner<float>;
template class Tuner<double>;

}  // namespace gridsim

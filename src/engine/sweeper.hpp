// The sweeps of a run, as its plan says (engine/sweep_plan.hpp): sweeps, passes of several levels
// between exchanges (time blocks) and summing passes (every level's residual), each run by the
// strategy the plan chose for its kind (engine/sweep_strategy.hpp) and then swapped; sweeps
// replayed from recordings where the plan records them (engine/graph_cache.hpp,
// sweeper_recorded.cpp).
#pragma once

#include <cstdint>

#include <array>
#include <memory>

#include "engine/sweep_strategy.hpp"

namespace gridsim {

template <class T>
class Sweeper {
public:
    // Keeps references to everything but the plan, which it copies.
    Sweeper(Backend<T>& be, PhaseTimer& timer, FieldPair<T>& fields, const SweepGeometry& geo,
            const HaloSetup<T>& halos, const SweepPlan& plan, const Subdomain& sub);
    Sweeper(const Sweeper&) = delete;  // its graph cache refers to its own plan
    Sweeper& operator=(const Sweeper&) = delete;

    // One sweep next = stencil(current), then current <-> next. With `residual`, the sweep also
    // sums its squared updates (the fused jacobi residual; take_recorded_read and the residual
    // pipeline take it). With time blocks a sweep also updates the halo points the next sweeps
    // read before the exchange, and only the sweep that uses the last valid layer exchanges.
    void sweep(const StencilParams<T>& p, bool residual = false);
    // `count` sweeps without a residual (1 <= count <= most_sweeps()): in passes over memory of
    // as many sweeps as the backend takes; with one sweep per exchange and recorded sweeps, two
    // at a time replayed as one recording. Bitwise the same as `count` calls of sweep(p).
    void sweeps(const StencilParams<T>& p, int count);
    // `count` (2..most_residual_sweeps()) sweeps, each summing its change, in one pass; returns
    // the read of their sums (LevelSums::finish_read_level).
    int summing_pass(const StencilParams<T>& p, int count);
    // Whether `count` (2..Recording::kMostReads) sweeps with their residuals replay now as one
    // recording (residual_group): one sweep per exchange, recorded residual sweeps, none of the
    // passes sampled for phase timing.
    [[nodiscard]] bool groups_residuals(int count) const {
        return plan_.block == 1 && cache_.residual_group_ready() && !s_.timer.samples_within(count);
    }
    // `count` sweeps, each summing its change, replayed as one recording (groups_residuals(count)
    // must hold): at small subdomains a replay's own cost on the device is of a sweep's order.
    // Returns the first sweep's read (FoldedSums::finish_read); the others' are the ids after
    // it. Bitwise the same as `count` calls of sweep(p, true).
    int residual_group(const StencilParams<T>& p, int count);

    // The most sweeps one call of sweeps() takes now: the halo layers left, or 2 where one sweep
    // per exchange is recorded (a pair replays as one recording) and the problem runs blocks of
    // plain sweeps.
    [[nodiscard]] int most_sweeps() const {
        return plan_.blocks == Blocks::plain && plan_.block == 1 && plan_.record_sweeps
                   ? 2
                   : s_.fields.room();
    }
    // The most sweeps one residual step takes now (1 where the plan does not sum in passes).
    [[nodiscard]] int most_residual_sweeps() const {
        return plan_.sums_in_passes() ? std::min(s_.fields.room(), SweepPlan::kMostSummingLevels)
                                      : 1;
    }
    // The read a replayed residual sweep started (folded and summed inside it), or -1; once.
    int take_recorded_read() {
        const int r = recorded_read_;
        recorded_read_ = -1;
        return r;
    }
    // Levels of passes beyond the backend's levels on chip, each a pass over memory of its own.
    [[nodiscard]] std::int64_t extra_memory_passes() const { return extra_memory_passes_; }
    // Exchanging passes that ran as passes of a pipeline (SweepPlan::pipelined, on a rank whose
    // halo setup pipelines).
    [[nodiscard]] std::int64_t pipelined_passes() const { return s_.pipelined_passes; }
    [[nodiscard]] const SweepPlan& plan() const { return plan_; }
    // The fields were swapped outside a sweep (Simulation::roll_back): a pipeline of passes
    // starts anew at the next pass.
    void end_pipeline() { ++s_.touches; }

private:
    // An update of `levels` from the current field, as it starts: downloads of the field it
    // writes settled, the pass timed.
    Update<T> begin(const StencilParams<T>& p, UpdateKind kind, int levels, StencilSum sum);
    // The strategy that runs `u`: the plan's for its kind where it exchanges, else the time
    // block's update within the halos.
    SweepStrategy<T>& strategy(const Update<T>& u);
    void sweep_pair(const StencilParams<T>& p);
    // `count` sweeps from the current field as the recording `e` (captured first if need be),
    // each summing `sum` and reading it back; returns the first read's id, or -1.
    int replay_group(const StencilParams<T>& p, StencilSum sum, typename GraphCache<T>::Entry& e,
                     int count);
    // `count` levels in one pass; `sums`: each level also sums its residual.
    void pass(const StencilParams<T>& p, int count, bool sums);
    // What a recording of a sweep holds: its work and, with a residual, its fold and read-back
    // (the host sums it over the ranks: ResidualPipeline::take).
    void capture_sweep(const Update<T>& u);

    const SweepPlan plan_;
    SweepPhases<T> phases_;
    GraphCache<T> cache_;
    SweepParts<T> s_;  // the run's parts, as the strategies see them
    // The strategies, chosen once: a sweep's, without and with its sum; an exchanging pass's,
    // without and with sums; the update of a time block that exchanges nothing.
    std::array<std::unique_ptr<SweepStrategy<T>>, 2> sweep_;
    std::array<std::unique_ptr<SweepStrategy<T>>, 2> pass_;
    std::unique_ptr<SweepStrategy<T>> within_halos_;
    int recorded_read_ = -1;
    std::int64_t extra_memory_passes_ = 0;
};

}  // namespace gridsim

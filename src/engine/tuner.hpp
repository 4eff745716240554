// The start-up choices of a run's sweeps (engine/sweep_plan.hpp): the rules that follow from the
// deck, the grid and the backend, and the trials that time candidates where the fastest depends
// on the machine (time_block "auto", overlap "auto" with time blocks on several ranks). Trials
// time scratch fields or sweepers of their own; a trial changes what a run does, never its
// results. Every rule and threshold is a row of docs/tuning.md.
#pragma once

#include <functional>
#include <vector>

#include "engine/halo_setup.hpp"
#include "engine/sweep_plan.hpp"
#include "engine/trial.hpp"
#include "parallel/grid_model.hpp"

namespace gridsim {

template <class T>
class Sweeper;

template <class T>
class Tuner {
public:
    Tuner(const Config& cfg, const Domain& dom, const CartTopology& topo,
          const BackendChoice<T>& choice, const SweepGeometry& geo, Blocks blocks, StencilKind kind)
        : cfg_(cfg),
          dom_(dom),
          topo_(topo),
          choice_(choice),
          be_(*choice.backend),
          geo_(geo),
          blocks_(blocks),
          kind_(kind) {}

    // The whole start-up: the plan before any halo exists (time_block_plan), the run's fields
    // allocated with the deepest halos the exchange trial may take, the ipc neighbours checked,
    // the halos set up (plan_exchange), the exchange trial (choose_exchange_pass). check_fits
    // refuses (ConfigError) fields that would not fit. Collective.
    SweepPlan plan(FieldPair<T>& fields, HaloSetup<T>& halos,
                   const std::function<void(const FieldExtents&)>& check_fits);
    [[nodiscard]] const std::vector<TimeBlockTrial>& time_block_trials() const { return trials_; }
    [[nodiscard]] const ExchangeTrial& exchange_trial() const { return exchange_trial_; }

private:
    // The plan before any halo exists: whether residual sweeps can sum in passes, and the time
    // block (parallel.time_block, "auto" resolved, by a trial where it has candidates: before the
    // trial's scratch fields, check_fits(extents) refuses a deck whose fields would not fit).
    // Collective.
    SweepPlan time_block_plan(const std::function<void(const FieldExtents&)>& check_fits);
    // The halo depths the exchange trial times: the plan's block, and with time_block "auto" 2k
    // where it fits; the last is the deepest (the run's fields carry that many layers).
    [[nodiscard]] std::vector<int> halo_depths(const SweepPlan& plan) const;
    // What follows from the halo exchange: recording (parallel.graphs; throws ConfigError where
    // "on" cannot be honoured), where sums go, the fused sweep's wrap. Collective.
    void plan_exchange(SweepPlan& plan, const HaloExchange<T>& halo);
    // overlap "auto" with time blocks on several ranks: times blocks of sweeps (summing passes
    // where residual sweeps sum in passes) at each of `depths` with the exchanging pass split and
    // fused, on the run's fields (their values are overwritten at initialise) with scratch
    // sweepers, and keeps the fastest: the plan's block and exchange_pass, and the halo setup
    // of its depth in `run`. Collective.
    void choose_exchange_pass(SweepPlan& plan, const std::vector<int>& depths, FieldPair<T>& fields,
                              HaloSetup<T>& run);

    void run_blocks(Sweeper<T>& s, const StencilParams<T>& p, const SweepPlan& plan, int depth,
                    int count);
    // The trials' stencil parameters: the run's stencil, reading `coeffs` (made here, zero, of
    // `ext`) where it reads a coefficient field; a pass's time does not depend on the values.
    StencilParams<T> trial_params(const FieldExtents& ext, Field<T>& coeffs) const {
        StencilParams<T> p;
        p.kind = kind_;
        if (stencil_reads_field(kind_)) {
            coeffs = be_.allocate_field(ext);
            p.r.field = coeffs.view().data;
        }
        return p;
    }
    void take_level_sums(int read, int levels);
    [[nodiscard]] double sum_over_ranks(double local) const;
    [[nodiscard]] bool can_sum_in_passes() const;
    [[nodiscard]] bool replays_residual_sweeps() const;
    [[nodiscard]] std::vector<int> time_block_candidates(bool can_sum) const;
    int fastest_time_block(const std::vector<int>& candidates);
    int pass_levels(int block);
    void trial_pass(const StencilParams<T>& p, FieldView<T> a, FieldView<T> b, int k,
                    const FaceMoves<T>& mirrors);
    [[nodiscard]] bool exchange_trial_runs(const SweepPlan& plan) const;
    // Whether the backend's passes of this stencil write the faces first in this problem's
    // dimensions.
    [[nodiscard]] bool writes_faces_first() const {
        return be_.time_blocking() != nullptr &&
               be_.time_blocking()->faces_first(dom_.dims, kind_) != nullptr;
    }
    [[nodiscard]] bool decide_recording(const HaloExchange<T>& halo) const;
    [[nodiscard]] int kernel_wrap_period(const SweepPlan& plan, const HaloExchange<T>& halo) const;

    static constexpr int kExchangeTrialRounds = 5;              // per choice
    static constexpr double kExchangeTrialRoundSeconds = 1e-2;  // a round, roughly
    // "auto" with a residual every sweep, where the sweeps can sum inside passes: the trial
    // times one sweep per pass against summing passes of 2 to this many levels; deeper ones were
    // never the fastest (docs/tuning.md, "Time blocking and passes"). The process grid's model
    // credits a summing pass with as many.
    static constexpr int kSummingMostLevels = kModelSummingLevels;
    // A recorded residual is folded on the boundary lane before the next sweep can start; an
    // unrecorded one is folded beside it. Above this many updated points per rank the fold (one
    // partial per stencil block) costs more than the launches a replay saves (docs/tuning.md).
    static constexpr double kRecordResidualPoints = 33554432.0;  // 2^25 updated points per rank
    // Whether recorded sweeps also record their residual, the most updated points of a rank given.
    [[nodiscard]] bool records_residuals(double most_updated) const {
        return cfg_.graphs == GraphMode::on || most_updated <= kRecordResidualPoints;
    }

    const Config& cfg_;
    const Domain& dom_;
    const CartTopology& topo_;
    const BackendChoice<T>& choice_;
    Backend<T>& be_;
    const SweepGeometry& geo_;
    Blocks blocks_;
    StencilKind kind_;
    std::vector<TimeBlockTrial> trials_;
    ExchangeTrial exchange_trial_;
};

}  // namespace gridsim

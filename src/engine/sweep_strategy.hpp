// How one update of a run's fields runs: an `Update` says what it computes (a sweep, a pass of
// levels, a summing pass) and a `SweepStrategy` how its boxes and the halo exchange go on the
// two lanes. The sweeper (engine/sweeper.cpp) holds one strategy per kind of update, chosen once
// from the plan: the split (the plain sweep, sweeper.cpp), fused (fused_update.cpp), faces first
// (faces_first_pass.cpp) and pipelined (pipelined_pass.cpp) exchanging updates, and the updates
// of a time block that leave halo layers valid and exchange nothing (within_halos.cpp).
#pragma once

#include <cstdint>
#include <memory>

#include "engine/field_pair.hpp"
#include "engine/graph_cache.hpp"
#include "engine/halo_setup.hpp"
#include "engine/phase_timer.hpp"
#include "engine/sweep_phases.hpp"
#include "engine/sweep_plan.hpp"

namespace gridsim {

// What the strategies of one sweeper work on, and what they count.
template <class T>
struct SweepParts {
    Backend<T>& be;
    PhaseTimer& timer;
    FieldPair<T>& fields;
    const SweepGeometry& geo;
    const HaloSetup<T>& halos;
    const SweepPlan& plan;
    const Subdomain& sub;
    SweepPhases<T>& phases;
    GraphCache<T>& cache;
    // Work on these fields so far (each update, each download an update waited for, each change
    // of the fields outside the sweeper): a pipeline of passes goes on only from its own last.
    std::uint64_t touches = 0;
    std::int64_t pipelined_passes = 0;
};

enum class UpdateKind { sweep, pass, summing_pass };

// One update of next from current: a sweep (one level, its change summed where `sum` says), a
// pass of `levels`, or a summing pass (every level sums its change); `extend`: the halo layers
// beyond the updated points it also updates, that stay valid (0: it exchanges the halos).
template <class T>
struct Update {
    const StencilParams<T>& p;
    UpdateKind kind;
    int levels;
    StencilSum sum;
    int extend;

    // The update of box `b` on `lane`.
    void apply(SweepParts<T>& s, const Box& b, Lane lane) const {
        switch (kind) {
            case UpdateKind::sweep:
                s.be.apply(p, s.fields.current(), s.fields.next(), b, lane, sum);
                return;
            case UpdateKind::pass:
                s.be.time_blocking()->apply_levels(p, s.fields.current(), s.fields.next(), b,
                                                   s.geo.live, levels, s.halos.halo->reflections(),
                                                   lane);
                return;
            case UpdateKind::summing_pass:
                s.be.level_sums()->apply_levels_summing(p, s.fields.current(), s.fields.next(), b,
                                                        s.geo.live, levels, lane);
                return;
        }
    }
    // Lanes joined, the first work of every strategy but the pipelined pass: last update's
    // writes (both lanes) precede this one's reads. A pass also tells the graph cache, and a
    // summing pass lays its partials out over every box a sweep sums.
    void start(SweepParts<T>& s) const {
        s.be.join_lanes();
        if (kind == UpdateKind::sweep) return;
        s.cache.lanes_moved();
        if (kind == UpdateKind::summing_pass)
            s.be.level_sums()->start_summing_pass(s.geo.sum_boxes, levels);
    }
};

template <class T>
class SweepStrategy {
public:
    SweepStrategy() = default;
    SweepStrategy(const SweepStrategy&) = delete;
    SweepStrategy& operator=(const SweepStrategy&) = delete;
    virtual ~SweepStrategy() = default;

    // Runs `u` from current into next, without the swap.
    virtual void run(const Update<T>& u) = 0;
};

// The split (`regions`: the shell first, then the halos beside the interior; `beside` false:
// the interior before the exchange, for faces deeper than the shell).
template <class T>
std::unique_ptr<SweepStrategy<T>> make_split(SweepParts<T>& s, const SweepRegions& regions,
                                             bool beside);
template <class T>
std::unique_ptr<SweepStrategy<T>> make_fused(SweepParts<T>& s);
template <class T>
std::unique_ptr<SweepStrategy<T>> make_faces_first(SweepParts<T>& s);
template <class T>
std::unique_ptr<SweepStrategy<T>> make_pipelined(SweepParts<T>& s);
template <class T>
std::unique_ptr<SweepStrategy<T>> make_within_halos(SweepParts<T>& s);

}  // namespace gridsim

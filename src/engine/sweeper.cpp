#include "engine/sweeper.hpp"

namespace gridsim {

// The plain sweep, the overlap recipe (docs/architecture.md, "One step") that every other
// strategy refines: the lanes join; the shell, the points that read last step's halos, on the
// boundary lane; the halo exchange on the boundary lane beside the interior, which reads no halo,
// on the interior lane (after the unpack on the boundary lane without overlap); then the sweeper
// swaps the fields (Sweeper::sweep). A pass of levels or a summing pass splits the same way over
// its own regions; faces deeper than the shell reach into the interior, which then goes first.
template <class T>
class SplitUpdate final : public SweepStrategy<T> {
public:
    SplitUpdate(SweepParts<T>& s, const SweepRegions& regions, bool beside)
        : s_(s), regions_(regions), beside_(beside) {}

    void run(const Update<T>& u) override {
        u.start(s_);
        auto apply = [&](const Box& b, Lane lane) { u.apply(s_, b, lane); };
        s_.phases.shell(apply, regions_);
        if (!beside_) s_.phases.interior(apply, Lane::boundary, regions_);
        s_.phases.exchange_beside_interior(s_.fields.next(), apply, beside_ ? &regions_ : nullptr);
    }

private:
    SweepParts<T>& s_;
    const SweepRegions& regions_;
    bool beside_;
};

template <class T>
std::unique_ptr<SweepStrategy<T>> make_split(SweepParts<T>& s, const SweepRegions& regions,
                                             bool beside) {
    return std::make_unique<SplitUpdate<T>>(s, regions, beside);
}

// A sweep: its update as the plan's strategy runs it (or as its recording replays it), then the
// swap.
template <class T>
void Sweeper<T>::sweep(const StencilParams<T>& p, bool residual) {
    const Update<T> u =
        begin(p, UpdateKind::sweep, 1, residual ? StencilSum::change : StencilSum::none);
    auto& rec = cache_.sweep(u.extend, s_.fields.parity(), residual);
    if (cache_.replays(rec, residual, s_.timer.sampled())) {
        const int read = cache_.replay(rec, residual, [&] { capture_sweep(u); });
        if (residual) recorded_read_ = read;
    } else {
        cache_.ran_unrecorded(rec);
        strategy(u).run(u);
    }
    s_.fields.advance(u.extend, plan_.block);
}

// The strategies, as the plan says (engine/sweep_plan.hpp). A sweep fuses where the plan fuses
// its sum, else splits. A block's exchanging pass without sums is pipelined where the plan says so
// and this rank's halo setup pipelines (else it fuses), faces first, fused or split over the
// pass's own regions; a summing pass fuses or splits over the sweep's, the boxes its sums are
// laid out over.
template <class T>
Sweeper<T>::Sweeper(Backend<T>& be, PhaseTimer& timer, FieldPair<T>& fields,
                    const SweepGeometry& geo, const HaloSetup<T>& halos, const SweepPlan& plan,
                    const Subdomain& sub)
    : plan_(plan),
      phases_(timer, *halos.halo, plan.overlapped()),
      cache_(be, plan_),
      s_{be, timer, fields, geo, halos, plan_, sub, phases_, cache_},
      within_halos_(make_within_halos(s_)) {
    // The halos move beside the interior where the shell holds every layer they send.
    const bool beside = geo.halo_layers(plan_.block) <= SweepGeometry::kSweepShellDepth;
    for (const StencilSum sum : {StencilSum::none, StencilSum::change}) {
        sweep_[sum == StencilSum::none ? 0 : 1] =
            plan_.fuses(sum) ? make_fused(s_) : make_split(s_, s_.geo.regions, beside);
    }
    if (plan_.pipelined(false) && s_.halos.pipelines) {
        pass_[0] = make_pipelined(s_);
    } else if (plan_.faces_first(false)) {
        pass_[0] = make_faces_first(s_);
    } else {
        pass_[0] =
            plan_.fuses_pass(false) ? make_fused(s_) : make_split(s_, s_.halos.pass_regions, true);
    }
    pass_[1] = plan_.fuses_pass(true) ? make_fused(s_) : make_split(s_, s_.geo.regions, true);
}

template <class T>
Update<T> Sweeper<T>::begin(const StencilParams<T>& p, UpdateKind kind, int levels,
                            StencilSum sum) {
    ++s_.touches;
    if (s_.fields.settle_next(s_.be)) ++s_.touches;  // a download of the field it writes
    s_.timer.start_pass();
    return {p, kind, levels, sum, s_.fields.room() - levels};
}

template <class T>
SweepStrategy<T>& Sweeper<T>::strategy(const Update<T>& u) {
    if (u.extend > 0) return *within_halos_;
    switch (u.kind) {
        case UpdateKind::sweep:
            return *sweep_[u.sum == StencilSum::none ? 0 : 1];
        case UpdateKind::pass:
            return *pass_[0];
        case UpdateKind::summing_pass:
            return *pass_[1];
    }
    return *pass_[0];
}

// A block of sweeps, in as few passes as the backend's most levels allow, of lengths that differ
// by one at most (a single level is a sweep): a short pass costs nearly a whole pass over memory,
// so 14 sweeps where a pass takes 8 go as 7 and 7, not 8 and 6.
template <class T>
void Sweeper<T>::sweeps(const StencilParams<T>& p, int count) {
    if (plan_.block == 1) {
        for (; count >= 2; count -= 2) sweep_pair(p);
        if (count == 1) sweep(p);
        return;
    }
    const int most =
        plan_.pass_levels > 0 ? plan_.pass_levels : s_.be.levels_per_pass(s_.sub.dims, p.kind);
    for (int passes = (count + most - 1) / most; passes > 0; --passes) {
        const int levels = (count + passes - 1) / passes;
        if (levels == 1) {
            sweep(p);
        } else {
            pass(p, levels, false);
        }
        count -= levels;
    }
}

template <class T>
void Sweeper<T>::pass(const StencilParams<T>& p, int count, bool sums) {
    const Update<T> u = sums ? begin(p, UpdateKind::summing_pass, count, StencilSum::change)
                             : begin(p, UpdateKind::pass, count, StencilSum::none);
    strategy(u).run(u);
    s_.fields.advance(u.extend, plan_.block);
    extra_memory_passes_ += std::max(0, count - s_.be.levels_per_memory_pass(s_.sub.dims, p.kind));
}

template <class T>
int Sweeper<T>::summing_pass(const StencilParams<T>& p, int count) {
    pass(p, count, true);
    return s_.be.level_sums()->fold_and_read_levels(count);
}

template class Sweeper<float>;
template class Sweeper<double>;
template std::unique_ptr<SweepStrategy<float>> make_split(SweepParts<float>&, const SweepRegions&,
                                                          bool);
template std::unique_ptr<SweepStrategy<double>> make_split(SweepParts<double>&, const SweepRegions&,
                                                           bool);

}  // namespace gridsim

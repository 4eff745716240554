#include "engine/sweeper.hpp"

#include <stdexcept>

namespace gridsim {

template <class T>
Sweeper<T>::Sweeper(Backend<T>& be, PhaseTimer& timer, FieldPair<T>& fields,
                    const SweepGeometry& geo, const HaloSetup<T>& halos, const SweepPlan& plan,
                    const Subdomain& sub)
    : be_(be),
      timer_(timer),
      fields_(fields),
      geo_(geo),
      halos_(halos),
      plan_(plan),
      sub_(sub),
      phases_(timer, *halos.halo, plan.overlapped()),
      cache_(be, plan_) {}

// The overlap recipe (docs/architecture.md, "One step"). The boundary lane (high priority)
// updates the shell that needs last step's halos and packs the faces; the interior lane (low
// priority) updates the rest, which reads no halo, while the boundary lane transfers and unpacks.
// Lanes meet only at join_lanes(): no device-wide synchronisation. overlap = false runs the same
// phases one after another on the boundary lane.
template <class T>
void Sweeper<T>::sweep(const StencilParams<T>& p, bool residual) {
    pipe_.open = false;
    (void)fields_.settle_next(be_);
    timer_.start_pass();
    const int extend = fields_.room() - 1;
    const StencilSum sum = residual ? StencilSum::change : StencilSum::none;
    auto& rec = cache_.sweep(extend, fields_.parity(), residual);
    if (cache_.replays(rec, residual, timer_.sampled())) {
        const int read = cache_.replay(rec, residual, [&] { capture_sweep(p, sum, extend); });
        if (residual) recorded_read_ = read;
    } else {
        cache_.ran_unrecorded(rec);
        sweep_work(p, sum, extend);
    }
    fields_.advance(extend, plan_.block);
}

template <class T>
void Sweeper<T>::capture_sweep(const StencilParams<T>& p, StencilSum sum, int extend) {
    sweep_work(p, sum, extend);
    if (sum != StencilSum::none) (void)be_.sums().fold_and_read();
}

// Two exchanging sweeps as one recording, where neither of its passes is sampled for phase
// timing; it writes both fields.
template <class T>
void Sweeper<T>::sweep_pair(const StencilParams<T>& p) {
    if (!cache_.pair_ready() || timer_.samples_within(2)) {
        sweep(p);
        sweep(p);
        return;
    }
    (void)replay_group(p, StencilSum::none, cache_.pair(fields_.parity()), 2);
}

template <class T>
int Sweeper<T>::residual_group(const StencilParams<T>& p, int count) {
    if (count < 2 || count > Recording::kMostReads || !groups_residuals(count))
        throw std::logic_error("a group of residual sweeps where none replays");
    return replay_group(p, StencilSum::change, cache_.residual_group(count, fields_.parity()),
                        count);
}

// The capture sweeps the fields in turn and swaps them back as often, so that the recording's
// fields are those of the replay's start.
template <class T>
int Sweeper<T>::replay_group(const StencilParams<T>& p, StencilSum sum,
                             typename GraphCache<T>::Entry& e, int count) {
    pipe_.open = false;
    (void)fields_.settle_download(be_, 0);
    (void)fields_.settle_download(be_, 1);
    for (int i = 0; i < count; ++i) timer_.start_pass();
    const int read = cache_.replay(e, sum != StencilSum::none, [&] {
        for (int i = 0; i < count; ++i) {
            capture_sweep(p, sum, 0);
            fields_.swap();
        }
        for (int i = 0; i < count; ++i) fields_.swap();
    });
    for (int i = 0; i < count; ++i) fields_.advance(0, plan_.block);
    return read;
}

// With temporal blocking the sweep also updates the halo layers that stay valid: a point
// `extend` layers out reads the layer beyond it, which the current field holds (room =
// extend + 1), and each such point is computed from the same values as on the rank that owns it.
template <class T>
void Sweeper<T>::sweep_work(const StencilParams<T>& p, StencilSum sum, int extend) {
    be_.join_lanes();  // last step's writes (both lanes) precede this step's reads
    auto apply = [&](const Box& b, Lane lane) {
        be_.apply(p, fields_.current(), fields_.next(), b, lane, sum);
    };
    if (extend > 0) update_ring(p, extend);
    if (extend == 0 && plan_.fuses(sum)) {
        fused_sweep(p, sum);
        return;
    }
    phases_.shell(apply, geo_.regions);
    if (extend > 0) {
        phases_.interior(apply, plan_.overlapped() ? Lane::interior : Lane::boundary, geo_.regions);
        return;
    }
    // Faces deeper than the shell reach into the interior, which then goes first.
    const bool beside = plan_.block <= SweepGeometry::kSweepShellDepth;
    if (!beside) phases_.interior(apply, Lane::boundary, geo_.regions);
    phases_.exchange_beside_interior(fields_.next(), apply, beside ? &geo_.regions : nullptr);
}

// Every updated point in one launch where the backend takes several boxes at once
// (BoxSweeps::apply_boxes), then the halos. A sum's partials follow the split sweep's boxes (the
// shell, then the interior), so its residual is bitwise the split sweep's; a periodic walk axis
// this rank holds alone is copied into the halo by the sweep itself (plan wrap_period).
template <class T>
void Sweeper<T>::fused_sweep(const StencilParams<T>& p, StencilSum sum) {
    auto apply = [&](const Box& b, Lane lane) {
        be_.apply(p, fields_.current(), fields_.next(), b, lane, sum);
    };
    if (be_.box_sweeps() == nullptr) {
        phases_.fused(apply, geo_.updated, fields_.next());
        return;
    }
    {
        auto t = timer_.on_lane(Phase::interior, Lane::boundary);
        be_.box_sweeps()->apply_boxes(
            p, fields_.current(), fields_.next(),
            sum != StencilSum::none ? geo_.sum_boxes : std::vector<Box>{geo_.updated},
            Lane::boundary, sum, plan_.wrap_period);
    }
    if (plan_.wrap_period == 0) phases_.exchange_beside_interior(fields_.next(), apply, nullptr);
}

template <class T>
void Sweeper<T>::update_ring(const StencilParams<T>& p, int extend) {
    auto t = timer_.on_lane(Phase::boundary, Lane::boundary);
    for (const Box& b : halos_.rings[extend])
        be_.apply(p, fields_.current(), fields_.next(), b, Lane::boundary, StencilSum::none);
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
    const int most = be_.levels_per_pass(sub_.dims);
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

// One pass: while the points `extend` = room - count layers beyond the updated ones stay valid,
// one box and one launch; with none left, the shell goes first and the halos travel beside the
// interior, as in a single sweep, or (SweepPlan::faces_first) one launch on the interior lane
// that writes the faces first, the halos travelling beside the rest of it, or
// (SweepPlan::pipelined) a pass of a pipeline, or (SweepPlan::fuses_pass) one launch, then the
// halos. A summing pass lays its partials out over every box a sweep sums
// (start_summing_pass), and splits into the sweep's own shell and interior, the boxes its sums
// are laid out over.
template <class T>
void Sweeper<T>::pass(const StencilParams<T>& p, int count, bool sums) {
    const bool waited_for_download = fields_.settle_next(be_);
    timer_.start_pass();
    const int extend = fields_.room() - count;
    if (extend == 0 && plan_.pipelined(sums) && halos_.pipelines) {
        pipelined_pass(p, count, !waited_for_download);
        fields_.advance(extend, plan_.block);
        return;
    }
    pipe_.open = false;
    be_.join_lanes();
    cache_.lanes_moved();
    if (sums) be_.level_sums()->start_summing_pass(geo_.sum_boxes, count);
    auto apply = [&](const Box& b, Lane lane) {
        if (sums) {
            be_.level_sums()->apply_levels_summing(p, fields_.current(), fields_.next(), b,
                                                   geo_.live, count, lane);
        } else {
            be_.time_blocking()->apply_levels(p, fields_.current(), fields_.next(), b, geo_.live,
                                              count, lane);
        }
    };
    if (extend > 0) {
        auto t = timer_.on_lane(Phase::interior, Lane::boundary);
        apply(extend_into_halos(geo_.updated, sub_, extend), Lane::boundary);
    } else if (plan_.faces_first(sums)) {
        FacesFirstPasses<T>& ff = *be_.time_blocking()->faces_first(sub_.dims);
        phases_.faces_first(
            [&] {
                ff.apply_levels_faces_first(p, fields_.current(), fields_.next(), geo_.updated,
                                            geo_.live, count, halos_.halo->read_boxes(),
                                            Lane::interior);
            },
            [&] { ff.wait_for_faces(Lane::boundary); }, fields_.next());
    } else if (plan_.fuses_pass(sums)) {
        phases_.fused(apply, geo_.updated, fields_.next());
    } else {
        const SweepRegions& split = sums ? geo_.regions : halos_.pass_regions;
        phases_.shell(apply, split);
        phases_.exchange_beside_interior(fields_.next(), apply, &split);
    }
    fields_.advance(extend, plan_.block);
}

// A pass of a pipeline: one launch on the interior lane whose blocks wait there for the halos of
// the exchange before it, which may still be moving on the boundary lane, and its own halos
// after it on the boundary lane, beside the next pass (docs/architecture.md, "One step"). The
// pipeline goes on from its last pass where nothing else has run on these fields since: no
// other pass or sweep, no transfer of this exchange (another sweeper's, an initialisation's)
// and no download the pass must wait for. Else it starts anew: the lanes join, so that every
// exchange so far has landed, and the face counters restart from this pass.
template <class T>
void Sweeper<T>::pipelined_pass(const StencilParams<T>& p, int count, bool undisturbed) {
    HaloExchange<T>& halo = *halos_.halo;
    const bool goes_on = pipe_.open && undisturbed && halo.transfers_issued() == pipe_.transfers;
    if (!goes_on) {
        be_.join_lanes();
        halo.restart_arrivals(pipe_.pass, Lane::interior);
    }
    cache_.lanes_moved();
    HaloArrivals arrivals = halo.arrivals(sub_.size[sub_.dims - 1]);
    arrivals.pass = pipe_.pass;
    PipelinedPasses<T>& pp = *be_.time_blocking()->pipelined(sub_.dims);
    phases_.pipelined(
        [&] {
            pp.apply_levels_pipelined(p, fields_.current(), fields_.next(), geo_.updated, geo_.live,
                                      count, arrivals, goes_on);
        },
        fields_.next());
    pipe_ = {true, pipe_.pass + 1, halo.transfers_issued()};
    ++pipelined_passes_;
}

template <class T>
int Sweeper<T>::summing_pass(const StencilParams<T>& p, int count) {
    pass(p, count, true);
    extra_memory_passes_ += std::max(0, count - be_.levels_per_pass(sub_.dims));
    return be_.level_sums()->fold_and_read_levels(count);
}

template class Sweeper<float>;
template class Sweeper<double>;

}  // namespace gridsim

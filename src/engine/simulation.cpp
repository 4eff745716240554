#include "engine/simulation.hpp"

#include <algorithm>

#include "engine/initial.hpp"
#include "parallel/gather.hpp"

namespace gridsim {

// parallel.phase_every, 0 resolved: the CUDA backend's per-phase events cost a small step
// several microseconds, the CPU's clock reads nothing worth saving.
template <class T>
int Simulation<T>::phase_every(const Config& cfg, const Backend<T>& be) {
    if (cfg.phase_every > 0) return cfg.phase_every;
    return be.on_device() ? 64 : 1;
}

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
    // partial per stencil block) costs more than the launches a replay saves (docs/tuning.md,
    // kRecordResidualPoints). The same on every rank: the largest rank decides.
    const double most = allreduce(topo_.comm(), static_cast<double>(updated_.count()), Reduce::max);
    record_residuals_ = cfg_.graphs == GraphMode::on || most <= kRecordResidualPoints;
    choose_exchange_pass(depths);
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
    // NCCL connects the ranks for a collective at its first use, a cost that would otherwise land
    // in the first timed residual. One empty residual pays it here.
    if (reduces_on_device()) {
        (void)be_.sums().finish_read(reduce_on_device_and_read(be_.sums().fold_residual()));
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
// at once (BoxSweeps::apply_boxes), then the halos. A sum's partials follow the split sweep's
// boxes (the shell, then the interior), so its residual is bitwise the split sweep's; a periodic
// walk axis this rank holds alone is copied into the halo by the sweep itself (wrap_period_).
template <class T>
void Simulation<T>::update_fused_sweep(const StencilParams<T>& p, StencilSum sum) {
    auto apply = [&](const Box& b, Lane lane) { be_.apply(p, current(), next(), b, lane, sum); };
    if (!(be_.box_sweeps() != nullptr)) {
        update_fused(apply);
        return;
    }
    {
        auto t = timer_.on_lane(Phase::interior, Lane::boundary);
        be_.box_sweeps()->apply_boxes(
            p, current(), next(), sum != StencilSum::none ? sum_boxes_ : std::vector<Box>{updated_},
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
        be_.recorder()->begin_capture(false);
        sweep_work(p, StencilSum::none, 0);
        cur_ = 1 - cur_;
        sweep_work(p, StencilSum::none, 0);
        cur_ = 1 - cur_;
        rec.work = be_.recorder()->end_capture();
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
    const int most = be_.levels_per_pass(dom_.dims);
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
            be_.level_sums()->apply_levels_summing(p, current(), next(), b, live_, count, lane,
                                                   sum_boxes_);
        } else {
            be_.time_blocking()->apply_levels(p, current(), next(), b, live_, count, lane);
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
    extra_memory_passes_ += std::max(0, count - be_.levels_per_pass(dom_.dims));
    const int read = be_.level_sums()->fold_and_read_levels(count);
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
        be_.recorder()->begin_capture(residual && !reduces_on_device());
        sweep_work(p, sum, extend);
        if (residual && reduces_on_device()) {
            double* folded = be_.sums().fold_residual();
            allreduce_on_lane(folded, 1);
            be_.sums().start_read(folded, Backend<T>::ReadAfter::boundary_lane);
        } else if (residual) {
            be_.sums().fold_and_read();
        }
        rec.work = be_.recorder()->end_capture();
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
    double* sum = be_.sums().fold_residual();
    be_.sums().join_fold(Lane::boundary);
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

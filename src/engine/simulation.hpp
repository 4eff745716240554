// The state every problem shares: the process grid, the backend, the current and next field,
// the halo exchange and the overlap regions; the explicit step that moves the two fields
// forward (heat FTCS, jacobi: docs/architecture.md, "One step"); and, for solvers with more
// vectors (the implicit heat's CG), fields of the same shape, a halo exchange of any of them
// and an operator application with the same overlap.
#pragma once

#include <algorithm>
#include <deque>
#include <functional>
#include <memory>
#include <vector>

#include "config/config.hpp"
#include "engine/phase_timer.hpp"
#include "engine/trial.hpp"
#include "kernels/backend.hpp"
#include "mesh/domain.hpp"
#include "parallel/cart_topology.hpp"
#include "parallel/collectives.hpp"
#include "parallel/halo_exchange.hpp"
#include "platform/backend_select.hpp"

namespace gridsim {

template <class T>
class Simulation {
public:
    // What the problem's loop runs between halo exchanges, for parallel.time_block = "auto":
    // sweeps without a residual that a pass could take several at a time (heat, jacobi with a
    // residual every n > 1 sweeps), sweeps that each sum their change (jacobi with a residual
    // every sweep: passes that sum every level, where the backend can), or nothing a pass could
    // take (the CG: "auto" is 1).
    enum class Blocks { none, plain, summing };
    // Throws ConfigError for a deck this rank count, build or machine cannot run, counting
    // `extra_fields` more fields (make_field) in the memory it needs. `kind`: the stencil the
    // sweeps apply (what "auto"'s start-up trial of time blocks times).
    Simulation(const Config& cfg, MPI_Comm comm, int extra_fields = 0,
               Blocks blocks = Blocks::plain, StencilKind kind = StencilKind::heat);

    // current = initial condition (Dirichlet points included), or what `load` reads into the
    // owned points (a restart); halos exchanged; next = current.
    void initialise(const std::function<void(const HostField&)>& load = {});
    // One sweep next = stencil(current) by the overlap recipe, then current <-> next. With
    // `residual`, the sweep also sums its squared updates (the fused jacobi residual). Where
    // sweeps are recorded (parallel.graphs), a sweep is a replay of the same kind of sweep's
    // recording, its residual folded and read back inside it. With temporal blocking
    // (time_block() > 1) a sweep also updates the halo points the next sweeps before the
    // exchange read, and only the sweep that uses the last valid halo layer exchanges.
    void sweep(const StencilParams<T>& params, bool residual = false);
    // `count` sweeps without a residual (1 <= count <= most_sweeps()), then current <-> next: in
    // passes over memory of as many sweeps as the backend takes (TimeBlocking::apply_levels: up to
    // 8 in 2D and 4 in 3D on CUDA, 1 on the CPU); with one sweep per exchange and recorded sweeps,
    // two at a time replayed as one recording.
    // Bitwise the same as `count` calls of sweep(params).
    void sweeps(const StencilParams<T>& params, int count);
    // Sweeps between halo exchanges (parallel.time_block resolved), the halo depth of the fields.
    [[nodiscard]] int time_block() const { return block_; }
    // "auto"'s start-up trial (fastest_time_block), empty where none ran: each candidate k with
    // the seconds per sweep of its pass on the slowest rank.
    [[nodiscard]] const std::vector<TimeBlockTrial>& time_block_trials() const { return trials_; }
    // overlap "auto"'s start-up trial of the exchanging pass (choose_exchange_pass); ran is
    // false where none ran.
    [[nodiscard]] const ExchangeTrial& exchange_trial() const { return exchange_trial_; }
    // Sweeps the current field can take before its halos must be exchanged (1..time_block()):
    // the depth of its halo layers that still hold the neighbours' current values.
    [[nodiscard]] int block_room() const { return room_[cur_]; }
    // The most sweeps one call of sweeps() takes now: block_room(), or 2 where one sweep per
    // exchange is recorded (a pair replays as one recording: half the launches and host turns)
    // and the problem runs blocks of sweeps at all (not the CG, whose step is one operator
    // application per iteration, nor jacobi with a residual every sweep).
    [[nodiscard]] int most_sweeps() const {
        return blocks_ == Blocks::plain && block_ == 1 && record_sweeps_ ? 2 : block_room();
    }
    // Whether sweeps that each sum their change run as passes of several levels
    // (residual_sweeps): time_block() > 1, overlap "auto", a backend that sums each level as that
    // level's sweep would (LevelSums::sums_levels) on every rank, and with several ranks a residual
    // all-reduced on the host (not NCCL; can_sum_in_passes).
    [[nodiscard]] bool sums_in_passes() const {
        return blocks_ == Blocks::summing && block_ > 1 && can_sum_in_passes_;
    }
    // The most sweeps one call of residual_sweeps() takes now (1 where !sums_in_passes()).
    // A summing pass takes at most kMostSummingLevels, whatever the halos' depth.
    [[nodiscard]] int most_residual_sweeps() const {
        return sums_in_passes() ? std::min(block_room(), kMostSummingLevels) : 1;
    }
    // The most levels of one summing pass (the CUDA pass's; the CPU's sums level by level).
    static constexpr int kMostSummingLevels = 8;
    // Passes over memory so far (sweeps_per_pass in the report): the timer's passes, and the
    // levels a backend that takes fewer in one pass than a summing pass asked for ran one by one.
    [[nodiscard]] std::int64_t memory_passes() const {
        return timer_.passes() + extra_memory_passes_;
    }
    // `count` sweeps (1..most_residual_sweeps()), each summing its change, in one pass over
    // memory, and every one's residual requested, in order (take_residual). The pass's input
    // stays in the other buffer until the next sweep: roll_back() returns to it.
    void residual_sweeps(const StencilParams<T>& params, int count);
    // Forgets the requested residuals not yet taken (after a convergence inside a pass).
    void drop_residuals() { pending_.clear(); }
    // Whether sweeps are recorded and replayed (CUDA graphs); the same on every rank.
    [[nodiscard]] bool records_sweeps() const { return record_sweeps_; }
    // After a sweep(params, true): folds that sweep's residual on the device and, unless the
    // ranks sum it there (NCCL: at take_residual), starts copying it to the host. Never waits.
    void request_residual();
    // Waits for the oldest requested residual: sqrt of the global sum over updated points of
    // (u^n - u^{n-1})^2 for the sweep n that requested it.
    double take_residual();
    // Returns to the field of the previous sweep (still held in the other buffer, halos
    // included): a sweep issued before a convergence test read its result is undone.
    void roll_back() { cur_ = 1 - cur_; }
    // Another zero-filled field shaped like the solution (halos, row padding), in backend memory.
    [[nodiscard]] Field<T> make_field() { return be_.allocate_field(u_[0].extents()); }
    // Refreshes the halos of any such field from the neighbours' owned points (boundary lane).
    void exchange(FieldView<T> f) { halo_->exchange(f); }
    // out = stencil(in) at every updated point, overlapped the other way round from sweep():
    // in's halos are exchanged on the boundary lane while the interior lane updates the points
    // that read none, then the boundary lane updates the shell. Both lanes are joined at the
    // end, so what follows on either sees all of out.
    void apply(const StencilParams<T>& params, FieldView<T> in, FieldView<T> out) {
        apply_summing(params, in, out, StencilSum::none);
    }
    // apply() that also sums in * out over the updated points in the same pass (the CG's
    // p . A p without a pass of its own): returns the address of this rank's sum in backend
    // memory, folded, the boundary lane ordered after the fold. Valid until the next call.
    double* apply_and_dot(const StencilParams<T>& params, FieldView<T> in, FieldView<T> out);
    // Zero at every entry of `f` that is not an updated point: halos, the global Dirichlet
    // points (row padding is zero from allocation and no operation writes it).
    void zero_outside_updated(FieldView<T> f);
    // The current field, for a solver that updates it in place.
    [[nodiscard]] FieldView<T> current_field() {
        settle_download(cur_);
        return u_[cur_].view();
    }
    [[nodiscard]] const Box& updated_points() const { return updated_; }
    [[nodiscard]] Backend<T>& backend_ops() { return be_; }
    // Whether sums over the ranks can be all-reduced in backend memory, on the boundary lane
    // (the NCCL transport, more than one rank).
    [[nodiscard]] bool reduces_on_device() const {
        return topo_.size() > 1 && halo_->reduces_on_device();
    }
    // Sums `count` doubles in backend memory over the ranks in place, ordered on the boundary
    // lane (only where reduces_on_device()).
    void allreduce_on_lane(double* values, int count) {
        halo_->allreduce_sum_on_lane(values, count);
    }
    // The sum over ranks of each value (one all-reduce).
    template <std::size_t N>
    std::array<double, N> allreduce_sums(std::array<double, N> local) {
        std::array<double, N> global{};
        allreduce(topo_.comm(), local.data(), global.data(), static_cast<int>(N), Reduce::sum);
        return global;
    }
    // The stand-alone pass for the same residual (tests compare the fused value against it).
    double residual_separate_pass();
    // sqrt of the global sum over owned points of current^2.
    double norm();
    // Global min/max/sum/non-finite count of the current field over owned points.
    FieldStats stats();
    // This rank's current field on the host (halos included; index with field extents).
    [[nodiscard]] FieldView<const T> current_on_host();
    // The same, precision erased, for the output layer.
    [[nodiscard]] HostField current_host_field();
    // The current field's owned points, packed, on their way into `dst` (memory from
    // allocate_staging()): the copy runs beside the sweeps issued after it (Backend::
    // download_box), and the first work that would overwrite those points waits for it.
    [[nodiscard]] StagedField stage_current(void* dst);
    // Host memory for one field, page-locked on the CUDA backend (fast copies from the device).
    [[nodiscard]] std::shared_ptr<void> allocate_staging();
    // Keeps a copy of the current field, the state at `step`, in backend memory (one more
    // field, allocated at the first call): the last state a check found good
    // (output.dump_on_failure).
    void keep_last_good(std::int64_t step);
    // That copy on the host, and the step it was kept at (-1: none kept).
    [[nodiscard]] HostField last_good_host_field();
    [[nodiscard]] std::int64_t last_good_step() const { return last_good_step_; }
    // The global solved grid on rank 0 (empty elsewhere).
    [[nodiscard]] std::vector<double> gather();
    // Waits for every lane; returns the per-phase totals so far.
    PhaseTimes finish();

    [[nodiscard]] const Config& config() const { return cfg_; }
    [[nodiscard]] const Domain& domain() const { return dom_; }
    [[nodiscard]] const CartTopology& topology() const { return topo_; }
    [[nodiscard]] const Subdomain& subdomain() const { return topo_.subdomain(); }
    [[nodiscard]] const BackendChoice<T>& backend() const { return choice_; }
    [[nodiscard]] const char* transport_name() const { return halo_->transport_name(); }
    [[nodiscard]] std::int64_t global_updated_points() const { return global_updated_; }
    // Bytes of this rank's fields (halos and row padding included): the two of every problem
    // and the extra ones it asked for.
    [[nodiscard]] std::size_t field_bytes() const {
        return static_cast<std::size_t>(field_count()) *
               static_cast<std::size_t>(u_[0].extents().total) * sizeof(T);
    }
    [[nodiscard]] int field_count() const { return 2 + extra_fields_; }
    [[nodiscard]] PhaseTimer& timer() { return timer_; }
    // What every rank computes on, e.g. "2 x NVIDIA H200, 2 x cpu"; the same string on all ranks.
    [[nodiscard]] const std::string& devices() const { return devices_; }

private:
    [[nodiscard]] FieldView<const T> current() const { return u_[cur_].view(); }
    [[nodiscard]] FieldView<T> next() { return u_[1 - cur_].view(); }
    double allreduce_sum(double local);
    double sum_in_rank_order(double local);
    // All-reduces a folded sum on the boundary lane (NCCL) and starts reading it back; returns
    // the read.
    int reduce_on_device_and_read(double* sum);
    std::string describe_devices();
    bool decide_recording();
    // Transport ipc: refuses (ConfigError, every rank) a neighbour whose GPU cannot be reached.
    void check_ipc_neighbours();
    // parallel.time_block, "auto" resolved: the k to run, or the candidates a start-up trial
    // chooses among (fastest_time_block); checked against the subdomain.
    [[nodiscard]] std::vector<int> time_block_candidates() const;
    // Times a pass of each candidate k on scratch fields shaped as that k's, on every rank, and
    // returns the k whose slowest rank is fastest (trials_ keeps the times). With a residual
    // every sweep the passes sum every level and fold (k = 1: a summing sweep and its fold).
    int fastest_time_block(const std::vector<int>& candidates);
    // One timed pass of the trial: k levels from a into b.
    void trial_pass(const StencilParams<T>& p, FieldView<T> a, FieldView<T> b, int k);
    // Where the exchange trial runs (choose_exchange_pass): overlap "auto" with time blocks
    // (block_ > 1, no residual summed in passes) on several ranks.
    [[nodiscard]] bool exchange_trial_runs() const;
    // The halo depths the exchange trial times: block_ (the pass trial's k), and with
    // time_block "auto" 2k where it fits; the last is the deepest.
    [[nodiscard]] std::vector<int> halo_depth_candidates() const;
    // Where exchange_trial_runs(): times rounds of the same sweeps on the run's fields at each
    // of `depths` with the exchanging pass split and fused, each round by its slowest rank, and
    // keeps the fastest (block_ and its halo setup, fused_exchanges_, exchange_trial_).
    // Collective; before initialise(), which overwrites what the blocks wrote.
    void choose_exchange_pass(const std::vector<int>& depths);
    // Drops every recorded sweep (recorded_): the trial's choices record their own.
    void forget_recordings();
    // What depends on the halo depth (sweeps between exchanges), built on the run's fields.
    struct HaloSetup {
        int depth = 1;
        std::unique_ptr<HaloExchange<T>> halo;
        std::vector<std::vector<Box>> rings;
        SweepRegions pass_regions;
    };
    [[nodiscard]] HaloSetup make_halo_setup(int depth);
    void use_halo_setup(HaloSetup& s);
    // parallel.phase_every with 0 resolved for the backend.
    static int phase_every(const Config& cfg, const Backend<T>& be);
    static constexpr int kExchangeTrialRounds = 5;              // per choice
    static constexpr double kExchangeTrialRoundSeconds = 1e-2;  // a round, roughly
    [[nodiscard]] std::int64_t smallest_cross_section() const;
    static constexpr std::int64_t kLevels3dMinCrossSection = 128 * 128;
    // "auto" with a residual every sweep, where the sweeps can sum inside passes: the trial
    // times one sweep per pass against summing passes of 2 to this many levels; deeper ones were
    // never the fastest (docs/tuning.md, "Time blocking and passes").
    static constexpr int kSummingMostLevels = 4;
    // ... from this many updated points on one rank; below, 1 without a trial. The trial times
    // k = 1 as a launch and a fold kernel, where a run replays a recorded sweep whose partials
    // the host folds, so below this size the trial's k = 1 is slower than the run's and it would
    // pick a wrong k (docs/tuning.md). With several ranks every size gets the trial: each timed
    // pass then also pays its residuals' round trip through the host (trial_pass), which is most of
    // a small sweep's time.
    static constexpr std::int64_t kSummingMinPoints = std::int64_t{1} << 21;
    // The work of one sweep from current() into next(), without the swap: the updated points
    // and the `extend` layers beyond them into the halos; the halo exchange when extend is 0.
    void sweep_work(const StencilParams<T>& p, StencilSum sum, int extend);
    // `count` (2..levels_per_pass) sweeps in one pass (TimeBlocking::apply_levels); `sums`: each
    // level also sums its residual (LevelSums::apply_levels_summing, only where sums_in_passes()).
    void pass(const StencilParams<T>& p, int count, bool sums = false);
    // Whether residual sweeps can run as summing passes (sums_in_passes(), before the halos
    // exist: the same rules from the topology and the transport). Collective, at start-up: every
    // rank gets the same answer, kept in can_sum_in_passes_.
    [[nodiscard]] bool can_sum_in_passes() const;
    // Replays the recording of this kind of sweep, recording it first if need be.
    struct RecordedSweep;
    // Two sweeps without a residual, one exchange each (time_block 1): one recording of both
    // where sweeps are recorded, else sweep() twice.
    void sweep_pair(const StencilParams<T>& p);
    void replay_sweep(RecordedSweep& rec, const StencilParams<T>& p, StencilSum sum, int extend);
    // The phases of a sweep, apply(box, lane) updating a box (one sweep or a block of them).
    template <class Apply>
    void update_shell(Apply&& apply, const SweepRegions& r);
    template <class Apply>
    void update_interior(Apply&& apply, Lane lane, const SweepRegions& r);
    template <class Apply>
    void exchange_beside_interior(FieldView<T> halos, Apply&& apply, const SweepRegions* interior);
    // overlap "auto", no neighbour on another rank: no transfer to hide, so every updated point
    // in one launch on the boundary lane, then the halos (a periodic self-copy, if any),
    // instead of a shell, an interior and a lane join. A sweep with a sum fuses only where the
    // backend keeps the split's partials in one launch (Backend::box_sweeps), and only on
    // subdomains small enough for that to pay (kFusedSumPoints). With a neighbour on another
    // rank "auto" keeps the split for sweeps of one exchange each (docs/tuning.md, "Overlap on
    // several ranks"); with time blocks a start-up trial
    // chooses for the exchanging sweep or pass without a residual (choose_exchange_pass,
    // fused_exchanges_): a pass's shell, split off, costs a pipeline fill per block and waits for
    // multiprocessors the interior's long blocks hold, which can cost more than the halos it hides.
    // overlap "fused" fuses on every rank as "auto" does on a rank without such a neighbour.
    [[nodiscard]] bool fuses(StencilSum sum) const {
        if (!may_fuse(cfg_.overlap)) return false;
        if (cfg_.overlap == OverlapMode::automatic && !halo_->local_only())
            return sum == StencilSum::none && fused_exchanges_;
        return sum == StencilSum::none ||
               ((be_.box_sweeps() != nullptr) && updated_.count() <= kFusedSumPoints);
    }
    // Above this many updated points the one launch of a summing sweep (a block finds its box
    // among several) is slower than the split's launches (docs/tuning.md).
    static constexpr std::int64_t kFusedSumPoints = std::int64_t{1} << 24;
    template <class Apply>
    void update_fused(Apply&& apply);
    void update_fused_sweep(const StencilParams<T>& p, StencilSum sum);
    // BoxSweeps::apply_boxes's wrap_period for this rank's fused sweeps: the walk axis's extent
    // where that axis is periodic and held by this rank alone, halos are one layer deep and no
    // other halo is copied (the sweep then stores the whole exchange itself); else 0.
    [[nodiscard]] int kernel_wrap_period() const;
    [[nodiscard]] bool overlapped() const { return cfg_.overlap != OverlapMode::off; }
    // The halo points `extend` layers deep beyond the updated points (boundary lane, no sum).
    void update_ring(const StencilParams<T>& p, FieldView<const T> in, FieldView<T> out,
                     int extend);
    void advance_fields(int extend);
    // Before work that writes u_[f]: the boundary lane waits for a staged download of it (for
    // the last download: the copies run in order, so that covers the other field's too).
    void settle_download(int f) {
        if (!downloading_[f]) return;
        be_.join_download();
        downloading_ = {false, false};
    }
    void check_memory(std::size_t field_bytes);
    // apply(), the kernels also summing `sum` into the fold's partials (folded by the caller).
    void apply_summing(const StencilParams<T>& params, FieldView<T> in, FieldView<T> out,
                       StencilSum sum);

    const Config& cfg_;
    int extra_fields_;
    Blocks blocks_;
    StencilKind kind_;
    Domain dom_;
    CartTopology topo_;
    BackendChoice<T> choice_;
    Backend<T>& be_;
    // u_[cur_] is the current field, u_[1 - cur_] the next: this rank's block with block_
    // halo layers on every axis (2D: x and y; more where the exchange trial timed a deeper
    // depth and took block_), in backend memory, units of u. room_[f]: how many of u_[f]'s
    // halo layers hold current values (block_ after an exchange, one fewer per sweep).
    std::array<Field<T>, 2> u_;
    int cur_ = 0;
    int block_ = 1;
    std::vector<TimeBlockTrial> trials_;
    ExchangeTrial exchange_trial_;
    bool fused_exchanges_ = false;  // choose_exchange_pass()'s choice
    int wrap_period_ = 0;           // kernel_wrap_period()
    std::array<int, 2> room_{1, 1};
    // Whether a staged download (stage_current) may still be reading u_[f].
    std::array<bool, 2> downloading_{false, false};
    std::vector<std::vector<Box>> rings_;  // [extend]: the halo slabs a sweep also updates
    Box live_;  // every point a sweep may update: the updated box, unbounded across neighbours
    std::unique_ptr<HaloExchange<T>> halo_;
    Box owned_;
    Box updated_;
    // The split of a sweep, its shell kSweepShellDepth deep (the constructor says why): as deep
    // as a pass's most levels, and as the halos of every k up to 8. Deeper, it would move more of
    // every small subdomain's sweep ahead of its exchange.
    SweepRegions regions_;
    static constexpr int kSweepShellDepth = 8;
    // The split of a pass (no sums): its shell only as deep as this run's halo, the points a pass
    // of up to block_ levels reads a halo for. Launched on its own ahead of the exchange, a
    // thinner shell costs less (docs/tuning.md, "Pass shell").
    SweepRegions pass_regions_;
    // The boxes a residual sweep sums over, in the order it sums them: the shell, the interior.
    std::vector<Box> sum_boxes_;
    bool can_sum_in_passes_ = false;  // can_sum_in_passes()'s answer
    std::int64_t extra_memory_passes_ = 0;
    std::int64_t global_updated_ = 0;
    PhaseTimer timer_;
    std::vector<T> host_copy_;
    Field<T> last_good_;
    std::int64_t last_good_step_ = -1;
    std::string devices_;
    // Requested residuals not yet taken, oldest first: either a folded local sum (backend
    // memory) the ranks sum on the device (NCCL) when it is taken, or a read in flight (its id)
    // of a local sum, or of the global one where a replayed sweep all-reduced it itself.
    // `level` >= 0: that level's sum of a summing pass's read (LevelSums::finish_read_level).
    struct PendingResidual {
        double* sum;
        bool on_device;
        int read;
        bool global;
        int level = -1;
    };
    std::deque<PendingResidual> pending_;
    // Recorded sweeps by [room - 1][field parity][residual]: the first sweep of each kind runs
    // unrecorded (it also sizes the residual's partials), the next is recorded, and later ones
    // replay it. Sampled passes (phase timing) always run unrecorded: they record timing events.
    struct RecordedSweep {
        bool ran = false;
        std::unique_ptr<Recording> work;
    };
    bool record_sweeps_ = false;
    bool record_residuals_ = false;  // "auto" records residual sweeps of small subdomains only
    static constexpr double kRecordResidualPoints = 33554432.0;  // 2^25 updated points per rank
    bool lanes_joined_ = true;  // no unrecorded sweep since the last replay
    std::array<std::array<std::array<RecordedSweep, 2>, 2>, kMaxTimeBlock> recorded_;
    std::array<RecordedSweep, 2> recorded_pairs_;  // by the parity the pair starts from
    int recorded_read_ = -1;  // the last replayed sweep's residual read, until requested
};

}  // namespace gridsim

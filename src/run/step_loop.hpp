// What every problem's time loop shares: collective progress decisions and loop timing.
#pragma once

#include <fmt/format.h>

#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <mpi.h>

#include "engine/simulation.hpp"
#include "parallel/collectives.hpp"
#include "parallel/gather.hpp"
#include "parallel/mpi_check.hpp"
#include "run/run.hpp"
#include "run/stop_request.hpp"
#include "run/watchdog.hpp"

namespace gridsim {

// Decides, identically on every rank, when a progress line is due: every `every` steps, at
// the last step, or when ~10 s passed since the last line (rank 0's clock, broadcast at the
// first call past each multiple of 16 steps so the decision stays collective). Every rank must
// call due() at the same steps (a time block may skip some).
class ProgressSchedule {
public:
    ProgressSchedule(MPI_Comm comm, std::int64_t every, std::int64_t total)
        : comm_(comm), every_(every), total_(total), last_(Clock::now()) {}

    [[nodiscard]] bool enabled() const { return every_ > 0; }
    // Whether `step` is one a line is always due at (a time block ends there).
    [[nodiscard]] bool fixed_at(std::int64_t step) const {
        return every_ > 0 && (step % every_ == 0 || step == total_);
    }

    bool due(std::int64_t step) {
        if (every_ <= 0) return false;
        bool due = fixed_at(step);
        const bool crossed = step / 16 != last_step_ / 16;
        last_step_ = step;
        if (!due && crossed) {
            int late = std::chrono::duration<double>(Clock::now() - last_).count() >= 10.0 ? 1 : 0;
            broadcast(comm_, &late);
            due = late != 0;
        }
        if (due) last_ = Clock::now();
        return due;
    }

private:
    using Clock = std::chrono::steady_clock;
    MPI_Comm comm_;
    std::int64_t every_;
    std::int64_t total_;
    std::int64_t last_step_ = -1;
    Clock::time_point last_;
};

// Makes every rank agree, at the same step, on whether to stop early and why (and keeps the stall
// watchdog fed): a signal on any
// rank (stop_request.hpp), a STOP file in the output directory (rank 0 looks), or the deck's
// wall time about to run out (rank 0 estimates from measured step and checkpoint times); and a
// failure of output written in the background, which ends every rank here (RunFailure). One
// small non-blocking all-reduce is in flight at a time: started at one agreement step and
// completed `cadence` steps later (or at the end of the time block that passes that step),
// long after it finished, so no step waits for it. Rank 0 also proposes the next cadence in it
// (about 50 ms of steps, 1 to 64), so every rank knows when the next agreement is.
class StopMonitor {
public:
    StopMonitor(MPI_Comm comm, const Config& cfg, const RunOptions& opt)
        : comm_(comm),
          rank_(comm_rank(comm)),
          stop_file_((std::filesystem::path(cfg.output_dir) / "STOP").string()),
          walltime_(cfg.max_walltime),
          process_start_(opt.process_start.value_or(Clock::now())),
          checkpoint_seconds_(opt.checkpoint_seconds),
          output_failed_(opt.output_failed),
          first_step_(opt.start_step),
          watchdog_(std::make_unique<StallWatchdog>(cfg.stall_timeout, rank_)) {
        post(first_step_);
    }
    StopMonitor(const StopMonitor&) = delete;
    StopMonitor& operator=(const StopMonitor&) = delete;
    // Every rank destroys it at the same step: the agreement in flight completes everywhere.
    ~StopMonitor() = default;

    // After every step, with the step just done; true on every rank at the same step when the
    // run must stop, reason() then says why.
    bool due(std::int64_t step) {
        if (watchdog_) watchdog_->beat();
        if (step < next_) return false;
        recv_ = agreement_.wait();
        if (recv_[4] != 0) throw RunFailure("background output failed");  // said when it did
        if (recv_[0] != 0) {
            reason_ = signal_name(recv_[0]);
        } else if (recv_[1] != 0) {
            reason_ = "the STOP file " + stop_file_;
            if (rank_ == 0) std::filesystem::remove(stop_file_);  // consumed: a restart runs on
        } else if (recv_[2] != 0) {
            reason_ = "run.max_walltime";
        }
        if (!reason_.empty()) return true;
        post(step);
        return false;
    }
    [[nodiscard]] const std::string& reason() const { return reason_; }
    // The loop is over: what follows (final output, the report's measurements) is not a step.
    void end_of_loop() { watchdog_.reset(); }

private:
    using Clock = std::chrono::steady_clock;

    void post(std::int64_t step) {
        const int cadence = std::max(1, recv_[3]);
        send_ = {stop_signal(), 0, 0, 0, output_failed_ && output_failed_() ? 1 : 0};
        if (rank_ == 0) {
            const double per_step =
                step > first_step_ ? seconds(loop_start_) / (step - first_step_) : 0.0;
            if (step == first_step_) loop_start_ = Clock::now();
            const int next =
                per_step > 0
                    ? static_cast<int>(std::clamp(std::llround(0.05 / per_step), 1LL, 64LL))
                    : 1;
            send_[1] = std::filesystem::exists(stop_file_) ? 1 : 0;
            send_[2] = walltime_ > 0 && walltime_would_pass(per_step, cadence + next) ? 1 : 0;
            send_[3] = next;
        }
        next_ = step + cadence;
        agreement_.start(send_);
    }

    // Whether waiting `steps` more steps, then writing a checkpoint, would pass the wall time:
    // the last checkpoint's write time (x 1.5) and one second are kept in hand.
    [[nodiscard]] bool walltime_would_pass(double per_step, int steps) const {
        const double write = checkpoint_seconds_ ? 1.5 * checkpoint_seconds_() : 0.0;
        return seconds(process_start_) + steps * per_step + write + 1.0 > walltime_;
    }
    [[nodiscard]] static double seconds(Clock::time_point since) {
        return std::chrono::duration<double>(Clock::now() - since).count();
    }

    MPI_Comm comm_;
    int rank_ = 0;
    std::string stop_file_;
    double walltime_;
    Clock::time_point process_start_;
    Clock::time_point loop_start_ = Clock::now();
    std::function<double()> checkpoint_seconds_;
    std::function<bool()> output_failed_;
    std::int64_t first_step_;
    std::int64_t next_ = 0;
    // signal, STOP file, wall time, rank 0's next cadence, background output failed
    std::array<int, 5> send_{};
    std::array<int, 5> recv_{};  // the last agreement
    std::string reason_;
    std::unique_ptr<StallWatchdog> watchdog_;  // fed by due(), called after every step
    // Declared last: the agreement in flight completes (on destruction) while the watchdog runs.
    PendingMax<5> agreement_{comm_};
};

// Whether the blow-up check (check_field) runs after `step`: every cfg.check_interval() steps
// and at the last.
inline bool check_due(const Config& cfg, std::int64_t step) {
    const std::int64_t every = cfg.check_interval();
    return every > 0 && (step % every == 0 || step == cfg.steps);
}

// How many sweeps from `step` on can run as one time block (Simulation::sweeps): at most
// `room`, ending at the first step s that needs the host after it (`ends_at(s)`: output, a
// check, a progress line, the last step; the loop looks at these only at the block's end). The
// same on every rank.
template <class EndsAt>
int block_length(std::int64_t step, int room, std::int64_t last, EndsAt&& ends_at) {
    for (int n = 1; n < room; ++n) {
        const std::int64_t s = step + n;
        if (s >= last || ends_at(s)) return n;
    }
    return room;
}

// The steps a block ends at whatever the problem: output, the blow-up check, a progress line at
// a fixed step. Not the stop agreement: it is taken where a block ends (StopMonitor::due), at
// most a block's length after its step: ending blocks at each agreement would cut sweeps into
// short passes, each a pipeline fill more (docs/tuning.md, "Stop agreement").
inline bool host_step(const RunOptions& opt, const Config& cfg, const ProgressSchedule& progress,
                      std::int64_t s) {
    return (opt.output_due && opt.output_due(s, s == cfg.steps)) || check_due(cfg, s) ||
           progress.fixed_at(s);
}

// Wall time of a loop across ranks: starts after a barrier, reports the slowest rank.
class LoopClock {
public:
    explicit LoopClock(MPI_Comm comm) : comm_(comm) {
        barrier(comm_);
        start_ = std::chrono::steady_clock::now();
    }
    [[nodiscard]] double elapsed() const {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    }
    [[nodiscard]] double slowest() const { return max_over_ranks(elapsed()); }
    // Seconds from `t` to the start of the loop, slowest rank (collective).
    [[nodiscard]] double since(std::chrono::steady_clock::time_point t) const {
        return max_over_ranks(std::chrono::duration<double>(start_ - t).count());
    }

private:
    [[nodiscard]] double max_over_ranks(double mine) const {
        return allreduce(comm_, mine, Reduce::max);
    }

    MPI_Comm comm_;
    std::chrono::steady_clock::time_point start_;
};

// The faces of every rank per transport that moves them (a route per neighbour), collective.
inline std::vector<std::pair<std::string, int>> routes_over_ranks(
    MPI_Comm comm, const std::vector<std::pair<TransportKind, int>>& mine) {
    std::array<long long, kTransportCount> count{};  // by row of the transport table
    for (const auto& [kind, n] : mine) count[transport_index(kind)] += n;
    GRIDSIM_MPI_CHECK(
        MPI_Allreduce(MPI_IN_PLACE, count.data(), kTransportCount, MPI_LONG_LONG, MPI_SUM, comm));
    std::vector<std::pair<std::string, int>> out;
    for (int k = kTransportCount - 1; k >= 0; --k)  // the most direct first
        if (count[k] > 0) out.emplace_back(kTransportRows[k].name, static_cast<int>(count[k]));
    return out;
}

// What the run was set up with (RunSetup: the start header and the result both report it).
// Collective.
template <class T>
void describe_setup(const Simulation<T>& sim, const RunOptions& opt, RunSetup& out) {
    const BackendChoice<T>& be = sim.backend();
    out.backend = be.backend->name();
    out.backend_note = be.note;
    out.launch = sim.launch_description();
    out.transport = sim.transport_name();
    out.graphs = sim.records_sweeps();
    out.time_block = sim.time_block();
    out.time_block_trial = sim.time_block_trials();
    out.exchange_trial = sim.exchange_trial();
    out.sums_in_passes = sim.sums_in_passes();
    out.process_grid = sim.topology().process_grid();
    out.ranks = sim.topology().size();
    out.nodes = be.nodes;
    out.routes = routes_over_ranks(sim.topology().comm(), sim.route_counts());
    out.node_tile = sim.topology().node_tile();
    out.layout_note = sim.topology().layout_note();
    out.start_step = opt.start_step;
}

// The parts of a RunResult every problem fills the same way, once the loop is over: waits for
// all work, then measures the copy bandwidth the report compares against.
template <class T>
RunResult make_result(Simulation<T>& sim, const Config& cfg, const RunOptions& opt,
                      std::int64_t steps, const LoopClock& clock) {
    RunResult r;
    r.phases = sim.finish();
    r.phase_every = sim.timer().every();
    r.passes = sim.timer().passes();
    r.memory_passes = sim.memory_passes();
    r.pipelined_passes = sim.pipelined_passes();
    r.timed_passes = sim.timer().timed_passes();
    r.loop_seconds_local = clock.elapsed();
    r.loop_seconds = clock.slowest();
    if (opt.process_start) r.startup_seconds = clock.since(*opt.process_start);
    const BackendChoice<T>& be = sim.backend();
    describe_setup(sim, opt, r);
    r.placement = be.placement;
    if (be.device.device >= 0) r.device = be.device.name + " (" + be.device.pci_bus_id + ")";
    if (opt.measure_copy_bandwidth) r.copy_bandwidth = be.backend->measure_copy_bandwidth();
    r.steps = steps;
    r.dt = cfg.dt;
    r.sim_time = cfg.has_time ? static_cast<double>(steps) * cfg.dt : 0.0;
    r.updated_points = sim.global_updated_points();
    r.value_bytes = sizeof(T);
    r.coefficient_fields = sim.coefficient_fields();
    r.final_stats = sim.measures().stats();
    return r;
}

// Tells opt.on_start what the run was set up with (collective: the largest rank's memory).
template <class T>
void announce_start(Simulation<T>& sim, const RunOptions& opt) {
    if (!opt.on_start) return;
    RunStart s;
    describe_setup(sim, opt, s);
    s.transport_note = sim.backend().transport_note;
    s.devices = sim.devices();
    const unsigned long long largest = allreduce(
        sim.topology().comm(), static_cast<unsigned long long>(sim.field_bytes()), Reduce::max);
    s.field_bytes_max = static_cast<std::size_t>(largest);
    s.field_count = sim.field_count();
    s.placements = gather_placements(sim.topology().comm(), sim.backend().placement);
    opt.on_start(s);
}

// A checkpoint that holds NaN or Inf would only carry a blow-up on (refused unless asked for);
// a good starting state is the first that output.dump_on_failure keeps. One collective count
// serves both.
template <class T>
void check_start_state(Simulation<T>& sim, const RunOptions& opt) {
    const std::int64_t bad = sim.measures().stats().nonfinite;
    if (opt.load_field && bad > 0 && !opt.allow_nonfinite_restart) {
        throw ConfigError(fmt::format(
            "--restart {}: the checkpoint holds {} non-finite value(s) (--allow-nonfinite "
            "continues from it anyway)",
            opt.restart_file, bad));
    }
    if (sim.config().dump_on_failure && bad == 0) sim.host().keep_last_good(opt.start_step);
}

// Starts the simulation from the initial condition, or from a checkpoint (opt.load_field).
template <class T>
void start(Simulation<T>& sim, const RunOptions& opt) {
    if (!opt.load_field) {
        sim.initialise();
    } else {
        sim.initialise([&](const HostField& f) {
            opt.load_field(sim.topology().comm(), sim.domain(), sim.subdomain(), f);
        });
    }
    if (opt.load_field || sim.config().dump_on_failure) check_start_state(sim, opt);
    if (opt.prepare_output) opt.prepare_output([&sim] { return sim.host().allocate_staging(); });
    announce_start(sim, opt);
}

// What the output layer gets for this step (the field downloaded to the host).
template <class T>
OutputContext output_context(Simulation<T>& sim, const Config& cfg, std::int64_t step, bool last,
                             const std::vector<std::pair<std::int64_t, double>>* history) {
    OutputContext ctx;
    ctx.step = step;
    ctx.time = cfg.has_time ? static_cast<double>(step) * cfg.dt : 0.0;
    ctx.last = last;
    ctx.comm = sim.topology().comm();
    ctx.domain = &sim.domain();
    ctx.subdomain = &sim.subdomain();
    ctx.process_grid = sim.topology().process_grid();
    ctx.field = [&sim] { return sim.host().current_host_field(); };
    ctx.stage = [&sim](void* dst) { return sim.host().stage_current(dst); };
    ctx.residual_history = history;
    ctx.devices = sim.devices();
    return ctx;
}

// Hands the field to the output layer when it asks for this step (snapshots, checkpoints).
template <class T>
void output_if_due(const RunOptions& opt, Simulation<T>& sim, const Config& cfg, std::int64_t step,
                   bool last,
                   const std::vector<std::pair<std::int64_t, double>>* history = nullptr) {
    if (!opt.output_due || !opt.output_due(step, last)) return;
    auto t = sim.timer().on_host(Phase::io);
    opt.on_output(output_context(sim, cfg, step, last, history));
}

// A stop request: the checkpoint of this step, written whether or not one was due.
template <class T>
void write_stop_checkpoint(const RunOptions& opt, Simulation<T>& sim, const Config& cfg,
                           std::int64_t step,
                           const std::vector<std::pair<std::int64_t, double>>* history = nullptr) {
    if (!opt.on_output) return;
    auto t = sim.timer().on_host(Phase::io);
    OutputContext ctx = output_context(sim, cfg, step, false, history);
    ctx.force_checkpoint = true;
    opt.on_output(ctx);
}

// |v| beyond output.max_abs (never when there is no bound).
inline bool beyond_bound(double v, const Config& cfg) {
    return cfg.max_abs > 0 && std::abs(v) > cfg.max_abs;
}

// Says where the field went bad in one line from rank 0: the totals, the first bad point of the
// whole grid (x fastest) with its value, and how many points and ranks are bad. Collective.
template <class T>
void report_blowup(Simulation<T>& sim, const Config& cfg, std::int64_t step, const FieldStats& s) {
    auto bad = [&](double v) { return !std::isfinite(v) || beyond_bound(v, cfg); };
    const FieldView<const T> u = sim.host().current_on_host();
    const Subdomain& sub = sim.subdomain();
    const Domain& dom = sim.domain();
    std::int64_t count = 0;
    std::int64_t first_index = 0;  // x fastest over the whole grid
    std::string first;
    for (int k = 0; k < sub.size[2]; ++k)
        for (int j = 0; j < sub.size[1]; ++j)
            for (int i = 0; i < sub.size[0]; ++i) {
                const double v = u(i, j, k);
                if (!bad(v) || count++ > 0) continue;
                std::array<int, 3> g{};
                for (int d = 0; d < 3; ++d)
                    g[d] = dom.solved_origin[d] + sub.offset[d] + (d == 0 ? i : d == 1 ? j : k);
                first_index =
                    (static_cast<std::int64_t>(g[2]) * dom.cells[1] + g[1]) * dom.cells[0] + g[0];
                first = dom.dims == 3 ? fmt::format("({}, {}, {})", g[0], g[1], g[2])
                                      : fmt::format("({}, {})", g[0], g[1]);
                first += std::isnan(v) ? std::string(" = nan") : fmt::format(" = {}", v);
            }
    const std::vector<std::string> ranks = gather_strings(
        sim.topology().comm(), count > 0 ? fmt::format("{} {} {}", first_index, count, first) : "");
    if (sim.topology().rank() != 0) return;
    std::int64_t total = 0, best = -1;
    int bad_ranks = 0;
    for (const std::string& r : ranks) {
        if (r.empty()) continue;
        std::istringstream in(r);
        std::int64_t index = 0, n = 0;
        std::string where;
        in >> index >> n >> std::ws;
        std::getline(in, where);
        total += n;
        ++bad_ranks;
        if (best < 0 || index < best) {
            best = index;
            first = where;
        }
    }
    std::string what = fmt::format("{} non-finite value(s)", s.nonfinite);
    if (cfg.max_abs > 0)
        what += fmt::format(", |u| up to {:.6g} against output.max_abs = {:.6g}",
                            std::max(std::abs(s.min), std::abs(s.max)), cfg.max_abs);
    std::cerr << fmt::format(
                     "gridsim: error: step {}: the solution blew up: {}; the first bad point is "
                     "u{}, {} bad point(s) on {} of {} rank(s)",
                     step, what, first, total, bad_ranks, ranks.size())
              << std::endl;
}

// Every cfg.check_interval() steps and at the last step, a device reduction and one all-reduce:
// non-finite values, or |u| beyond output.max_abs, end the run on every rank (exit 1) before a
// checkpoint, another step or the final output carries them on.
template <class T>
void check_field(const RunOptions& opt, Simulation<T>& sim, const Config& cfg, std::int64_t step) {
    if (!check_due(cfg, step)) return;
    const FieldStats s = sim.measures().stats();
    const bool too_big = beyond_bound(s.min, cfg) || beyond_bound(s.max, cfg);
    if (s.nonfinite == 0 && !too_big) {
        if (cfg.dump_on_failure) sim.host().keep_last_good(step);
        return;
    }
    report_blowup(sim, cfg, step, s);
    if (cfg.dump_on_failure && sim.host().last_good_step() >= 0 && opt.on_output) {
        OutputContext ctx = output_context(sim, cfg, sim.host().last_good_step(), false, nullptr);
        ctx.field = [&sim] { return sim.host().last_good_host_field(); };
        ctx.last_good = true;
        opt.on_output(ctx);
    }
    throw RunFailure("the solution blew up");
}

template <class T>
void emit_progress(const RunOptions& opt, const Simulation<T>& sim, const Config& cfg,
                   std::int64_t step, const char* norm_name, double norm, double elapsed) {
    if (!opt.on_progress) return;
    ProgressSample s;
    s.step = step;
    s.start = opt.start_step;
    s.total = cfg.steps;
    s.sim_time = cfg.has_time ? step * cfg.dt : 0.0;
    s.norm_name = norm_name;
    s.norm = norm;
    s.elapsed_s = elapsed;
    // This run's steps only: a restart began at opt.start_step.
    s.glups = elapsed > 0 ? static_cast<double>(sim.global_updated_points()) *
                                static_cast<double>(step - opt.start_step) / elapsed / 1e9
                          : 0.0;
    opt.on_progress(s);
}

}  // namespace gridsim

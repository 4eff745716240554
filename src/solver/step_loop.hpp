// What every problem's time loop shares: collective progress decisions and loop timing.
#pragma once

#include <chrono>
#include <cstdint>

#include <mpi.h>

#include "comm/mpi_check.hpp"
#include "solver/run.hpp"
#include "solver/simulation.hpp"

namespace gridsim {

// Decides, identically on every rank, when a progress line is due: every `every` steps, at
// the last step, or when ~10 s passed since the last line (rank 0's clock, broadcast every 16
// steps so the decision stays collective).
class ProgressSchedule {
public:
    ProgressSchedule(MPI_Comm comm, std::int64_t every, std::int64_t total)
        : comm_(comm), every_(every), total_(total), last_(Clock::now()) {}

    [[nodiscard]] bool enabled() const { return every_ > 0; }

    bool due(std::int64_t step) {
        if (every_ <= 0) return false;
        bool due = step % every_ == 0 || step == total_;
        if (!due && step % 16 == 0) {
            int late = std::chrono::duration<double>(Clock::now() - last_).count() >= 10.0 ? 1 : 0;
            GRIDSIM_MPI_CHECK(MPI_Bcast(&late, 1, MPI_INT, 0, comm_));
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
    Clock::time_point last_;
};

// Wall time of a loop across ranks: starts after a barrier, reports the slowest rank.
class LoopClock {
public:
    explicit LoopClock(MPI_Comm comm) : comm_(comm) {
        GRIDSIM_MPI_CHECK(MPI_Barrier(comm_));
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
        double max = 0.0;
        GRIDSIM_MPI_CHECK(MPI_Allreduce(&mine, &max, 1, MPI_DOUBLE, MPI_MAX, comm_));
        return max;
    }

    MPI_Comm comm_;
    std::chrono::steady_clock::time_point start_;
};

// The parts of a RunResult every problem fills the same way, once the loop is over: waits for
// all work, then measures the copy bandwidth the report compares against.
template <class T>
RunResult make_result(Simulation<T>& sim, const Config& cfg, const RunOptions& opt,
                      std::int64_t steps, const LoopClock& clock) {
    RunResult r;
    r.phases = sim.finish();
    r.loop_seconds_local = clock.elapsed();
    r.loop_seconds = clock.slowest();
    if (opt.process_start) r.startup_seconds = clock.since(*opt.process_start);
    const BackendChoice<T>& be = sim.backend();
    r.backend = be.backend->name();
    r.backend_note = be.note;
    r.launch = be.backend->launch_description();
    r.placement = be.placement;
    if (be.device.device >= 0) r.device = be.device.name + " (" + be.device.pci_bus_id + ")";
    if (opt.measure_copy_bandwidth) r.copy_bandwidth = be.backend->measure_copy_bandwidth();
    r.transport = sim.transport_name();
    r.process_grid = sim.topology().process_grid();
    r.ranks = sim.topology().size();
    r.steps = steps;
    r.start_step = opt.start_step;
    r.dt = cfg.dt;
    r.sim_time = cfg.problem == ProblemKind::heat ? static_cast<double>(steps) * cfg.dt : 0.0;
    r.updated_points = sim.global_updated_points();
    r.value_bytes = sizeof(T);
    r.final_stats = sim.stats();
    return r;
}

// Tells opt.on_start what the run was set up with (collective: the largest rank's memory).
template <class T>
void announce_start(Simulation<T>& sim, const RunOptions& opt) {
    if (!opt.on_start) return;
    RunStart s;
    const BackendChoice<T>& be = sim.backend();
    s.backend = be.backend->name();
    s.backend_note = be.note;
    s.transport = sim.transport_name();
    s.launch = be.backend->launch_description();
    s.devices = sim.devices();
    s.process_grid = sim.topology().process_grid();
    s.ranks = sim.topology().size();
    s.start_step = opt.start_step;
    unsigned long long bytes = sim.field_bytes();
    unsigned long long largest = 0;
    GRIDSIM_MPI_CHECK(
        MPI_Allreduce(&bytes, &largest, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, sim.topology().comm()));
    s.field_bytes_max = static_cast<std::size_t>(largest);
    s.placements = gather_placements(sim.topology().comm(), sim.backend().placement);
    opt.on_start(s);
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
    announce_start(sim, opt);
}

// Hands the field to the output layer when it asks for this step (snapshots, checkpoints).
template <class T>
void output_if_due(const RunOptions& opt, Simulation<T>& sim, const Config& cfg, std::int64_t step,
                   bool last,
                   const std::vector<std::pair<std::int64_t, double>>* history = nullptr) {
    if (!opt.output_due || !opt.output_due(step, last)) return;
    auto t = sim.timer().on_host(Phase::io);
    OutputContext ctx;
    ctx.step = step;
    ctx.time = cfg.problem == ProblemKind::heat ? static_cast<double>(step) * cfg.dt : 0.0;
    ctx.last = last;
    ctx.comm = sim.topology().comm();
    ctx.domain = &sim.domain();
    ctx.subdomain = &sim.subdomain();
    ctx.process_grid = sim.topology().process_grid();
    ctx.field = sim.current_host_field();
    ctx.residual_history = history;
    ctx.devices = sim.devices();
    opt.on_output(ctx);
}

template <class T>
void emit_progress(const RunOptions& opt, const Simulation<T>& sim, const Config& cfg,
                   std::int64_t step, const char* norm_name, double norm, double elapsed) {
    if (!opt.on_progress) return;
    ProgressSample s;
    s.step = step;
    s.total = cfg.steps;
    s.sim_time = cfg.problem == ProblemKind::heat ? step * cfg.dt : 0.0;
    s.norm_name = norm_name;
    s.norm = norm;
    s.elapsed_s = elapsed;
    s.glups =
        elapsed > 0 ? static_cast<double>(sim.global_updated_points()) * step / elapsed / 1e9 : 0.0;
    opt.on_progress(s);
}

}  // namespace gridsim

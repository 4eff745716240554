// Time per phase of a step, accumulated over the run on this rank, measured where the work
// runs: on a lane (CUDA events on its stream for the CUDA backend, wall clock on the CPU) or on
// the host (wall clock, for phases the host waits for, such as reductions). The report reduces
// the totals over ranks (min/mean/max).
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "kernels/backend.hpp"
#include "kernels/trace_range.hpp"

namespace gridsim {

// vector: a solver's vector operations (the CG updates); 0 for the explicit stencils.
enum class Phase { interior, boundary, pack, transfer, unpack, reduction, vector, io, count };
constexpr std::array<const char*, static_cast<int>(Phase::count)> kPhaseNames = {
    "interior", "boundary", "pack", "transfer", "unpack", "reduction", "vector", "io"};

using PhaseTimes = std::array<double, static_cast<int>(Phase::count)>;

// Lane phases can be timed on a sample of passes (sweeps, operator applications) only: at small
// subdomains the two events per phase and their polling are a measurable part of a step (CUDA:
// about a microsecond each on the host). The sampled passes are every `every`-th one from the
// second (the first carries one-time costs), and totals() scales their times by passes / timed
// passes; host phases (reductions the host waits for, I/O) are always timed.
// parallel.phase_every with 0 resolved: the CUDA backend's per-phase events cost a small step
// several microseconds, the CPU's clock reads nothing worth saving.
inline int resolved_phase_every(int asked, bool on_device) {
    if (asked > 0) return asked;
    return on_device ? 64 : 1;
}

// Whether pass `pass` (counted from 1) is sampled when every `every`-th is: all of them, or the
// second and every `every`-th after it.
inline bool sampled_pass(std::int64_t pass, int every) {
    return every == 1 || (pass >= 2 && (pass - 2) % every == 0);
}

class PhaseTimer {
public:
    // `host`: the host phases' clock (the wall clock; tests give another).
    explicit PhaseTimer(std::unique_ptr<IntervalTimer> lanes, int every = 1,
                        std::unique_ptr<IntervalTimer> host = make_wall_clock_timer())
        : lanes_(std::move(lanes)),
          host_(std::move(host)),
          every_(std::max(1, every)),
          lane_seconds_(static_cast<int>(Phase::count), 0.0),
          host_seconds_(static_cast<int>(Phase::count), 0.0) {}

    // Times the lifetime of the object as work of slot `slot` on `lane` (nothing when the timer
    // is null: a pass that is not sampled), and marks it as a profiler range named `name`,
    // sampled or not.
    class Scope {
    public:
        Scope(IntervalTimer* t, int slot, const char* name, Lane lane)
            : range_(name), timer_(t), slot_(slot), lane_(lane) {
            if (timer_ != nullptr) timer_->begin(slot_, lane_);
        }
        Scope(const Scope&) = delete;
        Scope& operator=(const Scope&) = delete;
        ~Scope() {
            if (timer_ != nullptr) timer_->end(slot_, lane_);
        }

    private:
        TraceRange range_;
        IntervalTimer* timer_;
        int slot_;
        Lane lane_;
    };

    Scope on_lane(Phase p, Lane lane) { return scope(sampled_ ? lanes_.get() : nullptr, p, lane); }
    Scope on_host(Phase p) { return scope(host_.get(), p, Lane::boundary); }

    // A new pass begins: decides whether its lane phases are timed, and folds finished
    // intervals into the totals without waiting (cheap).
    void start_pass() {
        ++passes_;
        sampled_ = sampled_at(passes_);
        if (!sampled_) return;
        ++timed_passes_;
        lanes_->collect(lane_seconds_, false);
    }
    // All intervals so far, waiting for unfinished ones; lane phases scaled to every pass.
    PhaseTimes totals() {
        lanes_->collect(lane_seconds_, true);
        host_->collect(host_seconds_, true);
        const double scale = timed_passes_ > 0
                                 ? static_cast<double>(passes_) / static_cast<double>(timed_passes_)
                                 : 1.0;
        PhaseTimes t{};
        for (std::size_t p = 0; p < t.size(); ++p)
            t[p] = host_seconds_[p] + scale * lane_seconds_[p];
        return t;
    }
    [[nodiscard]] int every() const { return every_; }
    // Whether this pass's lane phases are timed.
    [[nodiscard]] bool sampled() const { return sampled_; }
    // Whether any of the next `n` passes will be.
    [[nodiscard]] bool samples_within(int n) const {
        for (int k = 1; k <= n; ++k)
            if (sampled_at(passes_ + k)) return true;
        return false;
    }
    [[nodiscard]] std::int64_t passes() const { return passes_; }
    [[nodiscard]] std::int64_t timed_passes() const { return timed_passes_; }

private:
    [[nodiscard]] bool sampled_at(std::int64_t pass) const { return sampled_pass(pass, every_); }
    static Scope scope(IntervalTimer* t, Phase p, Lane lane) {
        return {t, static_cast<int>(p), kPhaseNames[static_cast<int>(p)], lane};
    }
    std::unique_ptr<IntervalTimer> lanes_;
    std::unique_ptr<IntervalTimer> host_;
    int every_;
    bool sampled_ = true;  // work before the first pass (initialisation) is timed
    std::int64_t passes_ = 0;
    std::int64_t timed_passes_ = 0;
    std::vector<double> lane_seconds_;
    std::vector<double> host_seconds_;
};

}  // namespace gridsim

// Time per phase of a step, accumulated over the run on this rank, measured where the work
// runs: on a lane (CUDA events on its stream for the CUDA backend, wall clock on the CPU) or on
// the host (wall clock, for phases the host waits for, such as reductions). The report reduces
// the totals over ranks (min/mean/max).
#pragma once

#include <array>
#include <memory>
#include <vector>

#include "kernels/backend.hpp"

namespace gridsim {

// vector: a solver's vector operations (the CG updates); 0 for the explicit stencils.
enum class Phase { interior, boundary, pack, transfer, unpack, reduction, vector, io, count };
constexpr std::array<const char*, static_cast<int>(Phase::count)> kPhaseNames = {
    "interior", "boundary", "pack", "transfer", "unpack", "reduction", "vector", "io"};

using PhaseTimes = std::array<double, static_cast<int>(Phase::count)>;

class PhaseTimer {
public:
    explicit PhaseTimer(std::unique_ptr<IntervalTimer> lanes)
        : lanes_(std::move(lanes)),
          host_(make_wall_clock_timer()),
          seconds_(static_cast<int>(Phase::count), 0.0) {}

    // Times the lifetime of the returned object as work of `phase` on `lane`.
    class Scope {
    public:
        Scope(IntervalTimer& t, Phase p, Lane lane) : timer_(t), phase_(p), lane_(lane) {
            timer_.begin(static_cast<int>(phase_), lane_);
        }
        Scope(const Scope&) = delete;
        Scope& operator=(const Scope&) = delete;
        ~Scope() { timer_.end(static_cast<int>(phase_), lane_); }

    private:
        IntervalTimer& timer_;
        Phase phase_;
        Lane lane_;
    };

    Scope on_lane(Phase p, Lane lane) { return Scope(*lanes_, p, lane); }
    Scope on_host(Phase p) { return Scope(*host_, p, Lane::boundary); }

    // Folds finished intervals into the totals without waiting (cheap; call once per step).
    void poll() { lanes_->collect(seconds_, false); }
    // All intervals so far, waiting for unfinished ones.
    PhaseTimes totals() {
        lanes_->collect(seconds_, true);
        host_->collect(seconds_, true);
        PhaseTimes t{};
        for (std::size_t p = 0; p < t.size(); ++p) t[p] = seconds_[p];
        return t;
    }

private:
    std::unique_ptr<IntervalTimer> lanes_;
    std::unique_ptr<IntervalTimer> host_;
    std::vector<double> seconds_;
};

}  // namespace gridsim

// Wall-clock time per phase of a step, accumulated over the run on this rank. The report
// reduces them over ranks (min/mean/max).
#pragma once

#include <array>
#include <chrono>

namespace gridsim {

enum class Phase { interior, boundary, pack, transfer, unpack, reduction, count };
constexpr std::array<const char*, static_cast<int>(Phase::count)> kPhaseNames = {
    "interior", "boundary", "pack", "transfer", "unpack", "reduction"};

using PhaseTimes = std::array<double, static_cast<int>(Phase::count)>;

class PhaseTimer {
public:
    // Adds the lifetime of the returned object to `phase`.
    class Scope {
    public:
        Scope(PhaseTimer& t, Phase p) : timer_(t), phase_(p), start_(Clock::now()) {}
        Scope(const Scope&) = delete;
        Scope& operator=(const Scope&) = delete;
        ~Scope() {
            timer_.seconds_[static_cast<int>(phase_)] +=
                std::chrono::duration<double>(Clock::now() - start_).count();
        }

    private:
        PhaseTimer& timer_;
        Phase phase_;
        std::chrono::steady_clock::time_point start_;
    };

    Scope scope(Phase p) { return Scope(*this, p); }
    [[nodiscard]] const PhaseTimes& seconds() const { return seconds_; }
    void reset() { seconds_.fill(0.0); }

private:
    using Clock = std::chrono::steady_clock;
    PhaseTimes seconds_{};
};

}  // namespace gridsim

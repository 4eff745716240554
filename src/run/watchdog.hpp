// A watchdog for the step loop (docs/running.md, "Batch jobs"): when no step completes for
// `timeout` seconds, the rank says so in one line and ends itself with exit code 1. A peer that
// died without the launcher ending the job (srun without --kill-on-bad-exit), a hung NCCL or MPI
// exchange, or a stuck device would otherwise hold the allocation until the wall-time limit;
// every rank of a stalled job times out on its own, so all of them end.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>

#include "parallel/background_check.hpp"

namespace gridsim {

class StallWatchdog {
public:
    // timeout <= 0: no thread, beat() does nothing.
    StallWatchdog(double timeout_s, int rank);

    // A step completed.
    void beat() { last_.store(now_ns(), std::memory_order_relaxed); }

private:
    static long long now_ns() {
        return std::chrono::duration_cast<std::chrono::nanoseconds>(
                   std::chrono::steady_clock::now().time_since_epoch())
            .count();
    }

    double timeout_s_;
    std::atomic<long long> last_;
    std::unique_ptr<BackgroundCheck> check_;  // last: its thread reads the members above
};

}  // namespace gridsim

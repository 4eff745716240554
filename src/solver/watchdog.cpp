#include "solver/watchdog.hpp"

#include <unistd.h>

#include <cstdio>

namespace gridsim {

StallWatchdog::StallWatchdog(double timeout_s, int rank)
    : timeout_s_(timeout_s), rank_(rank), last_(now_ns()) {
    if (timeout_s_ > 0) thread_ = std::thread([this] { watch(); });
}

StallWatchdog::~StallWatchdog() {
    if (!thread_.joinable()) return;
    {
        const std::lock_guard<std::mutex> lock(mutex_);
        done_ = true;
    }
    wake_.notify_all();
    thread_.join();
}

// Checks a few times per timeout. The exit is _exit: no MPI call from this thread (the library
// is initialised for the main thread only), no destructors racing the stuck main thread; the
// launcher sees a rank that failed and the other ranks' watchdogs end them too.
void StallWatchdog::watch() {
    const auto period = std::chrono::duration<double>(timeout_s_ / 8 < 1.0 ? timeout_s_ / 8 : 1.0);
    std::unique_lock<std::mutex> lock(mutex_);
    while (!wake_.wait_for(lock, period, [this] { return done_; })) {
        const double idle =
            static_cast<double>(now_ns() - last_.load(std::memory_order_relaxed)) * 1e-9;
        if (idle < timeout_s_) continue;
        std::fprintf(stderr,
                     "gridsim: rank %d: error: no step completed in %.0f s (run.stall_timeout): a "
                     "peer died or an exchange hangs; ending this rank\n",
                     rank_, idle);
        std::fflush(stderr);
        ::_exit(1);
    }
}

}  // namespace gridsim

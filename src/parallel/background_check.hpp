// A thread that ends this rank when a condition the main thread cannot see for itself goes bad:
// the main thread may be blocked in a CUDA wait, an NCCL kernel or an MPI call that will never
// return (a dead peer, a broken connection), so only another thread can notice and end it.
// Used for the stall watchdog (run.stall_timeout, run/watchdog.hpp) and for NCCL's
// asynchronous errors (parallel/nccl_transport.cpp).
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace gridsim {

class BackgroundCheck {
public:
    // Every `period` seconds calls `poll` on the thread; when it returns a non-empty text the
    // thread prints "gridsim: rank R: error: <text>" once, calls `before_exit` (e.g. an NCCL
    // abort, so kernels spinning on a dead peer let go of the GPU) and ends the process with
    // exit code 1. The exit is _exit: no MPI call from this thread (the library is initialised
    // for the main thread only), no destructors racing the blocked main thread; the launcher
    // sees a failed rank and ends the job, and every other rank's checks end it too.
    BackgroundCheck(double period_s, int rank, std::function<std::string()> poll,
                    std::function<void()> before_exit = {});
    // Stops the thread (within one period at most; at once, in practice).
    ~BackgroundCheck();
    BackgroundCheck(const BackgroundCheck&) = delete;
    BackgroundCheck& operator=(const BackgroundCheck&) = delete;

private:
    void watch();

    std::chrono::duration<double> period_;
    int rank_;
    std::function<std::string()> poll_;
    std::function<void()> before_exit_;
    std::mutex mutex_;
    std::condition_variable wake_;
    bool done_ = false;
    std::thread thread_;  // last: started once everything it reads exists
};

}  // namespace gridsim

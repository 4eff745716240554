#include "parallel/background_check.hpp"

#include <unistd.h>

#include <cstdio>

namespace gridsim {

BackgroundCheck::BackgroundCheck(double period_s, int rank, std::function<std::string()> poll,
                                 std::function<void()> before_exit)
    : period_(period_s),
      rank_(rank),
      poll_(std::move(poll)),
      before_exit_(std::move(before_exit)),
      thread_([this] { watch(); }) {}

BackgroundCheck::~BackgroundCheck() {
    {
        const std::lock_guard<std::mutex> lock(mutex_);
        done_ = true;
    }
    wake_.notify_all();
    thread_.join();
}

void BackgroundCheck::watch() {
    std::unique_lock<std::mutex> lock(mutex_);
    while (!wake_.wait_for(lock, period_, [this] { return done_; })) {
        const std::string problem = poll_();
        if (problem.empty()) continue;
        std::fprintf(stderr, "gridsim: rank %d: error: %s\n", rank_, problem.c_str());
        std::fflush(stderr);
        if (before_exit_) before_exit_();
        ::_exit(1);
    }
}

}  // namespace gridsim

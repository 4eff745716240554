// BackgroundCheck (the thread behind the stall watchdog and the NCCL error watch): a healthy
// check never ends the process and stops when destroyed; a failing one prints one line naming
// the rank and the problem, runs its last action, and ends the process with exit code 1 even
// while the main thread is blocked.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

#include "parallel/background_check.hpp"
#include "run/watchdog.hpp"

namespace {

using gridsim::BackgroundCheck;
using namespace std::chrono_literals;

TEST(BackgroundCheck, HealthyCheckIsPolledAndStopsWhenDestroyed) {
    std::atomic<int> polls{0};
    const auto t0 = std::chrono::steady_clock::now();
    {
        BackgroundCheck check(0.01, 0, [&] {
            ++polls;
            return std::string();
        });
        std::this_thread::sleep_for(100ms);
    }
    const double took =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_GE(polls.load(), 3);
    EXPECT_LT(took, 1.0);  // the destructor does not wait for a long period to end
}

TEST(BackgroundCheck, LongPeriodDestroyedAtOnce) {
    const auto t0 = std::chrono::steady_clock::now();
    {
        BackgroundCheck check(3600.0, 0, [] { return std::string("never polled"); });
    }
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 1.0);
}

// The main thread blocks forever (as in a wait on a dead peer); the check's thread ends the
// process after its third poll, having run its last action first.
[[noreturn]] void fail_while_blocked() {
    std::atomic<int> polls{0};
    BackgroundCheck check(
        0.01, 3, [&] { return ++polls >= 3 ? std::string("peer 1 went away") : std::string(); },
        [] { std::fputs("last action ran\n", stderr); });
    for (;;) std::this_thread::sleep_for(1s);
}

TEST(BackgroundCheckDeathTest, FailingCheckEndsTheProcessWithOneLine) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_EXIT(fail_while_blocked(), testing::ExitedWithCode(1),
                "^gridsim: rank 3: error: peer 1 went away\nlast action ran\n$");
}

[[noreturn]] void stall() {
    gridsim::StallWatchdog dog(0.2, 5);
    dog.beat();
    for (;;) std::this_thread::sleep_for(1s);
}

TEST(BackgroundCheckDeathTest, StallWatchdogEndsAStalledRank) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_EXIT(stall(), testing::ExitedWithCode(1),
                "^gridsim: rank 5: error: no step completed in 0 s \\(run.stall_timeout\\)");
}

TEST(BackgroundCheck, StallWatchdogFedInTimeDoesNotFire) {
    gridsim::StallWatchdog dog(0.2, 0);
    for (int i = 0; i < 10; ++i) {
        std::this_thread::sleep_for(50ms);
        dog.beat();
    }
    SUCCEED();  // reaching here: the process was not ended
}

}  // namespace

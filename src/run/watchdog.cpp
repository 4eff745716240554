#include "run/watchdog.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace gridsim {

// Looks a few times per timeout (at least once a second), so the rank ends within ~1/8 of the
// timeout after it passed.
StallWatchdog::StallWatchdog(double timeout_s, int rank) : timeout_s_(timeout_s), last_(now_ns()) {
    if (timeout_s_ <= 0) return;
    check_ = std::make_unique<BackgroundCheck>(std::min(timeout_s_ / 8, 1.0), rank, [this] {
        const double idle =
            static_cast<double>(now_ns() - last_.load(std::memory_order_relaxed)) * 1e-9;
        if (idle < timeout_s_) return std::string();
        return fmt::format(
            "no step completed in {:.0f} s (run.stall_timeout): a peer died or an exchange "
            "hangs; ending this rank",
            idle);
    });
}

}  // namespace gridsim

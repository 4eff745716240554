// Seconds of wall time, for the output layer's own accounting (staging, writing, waiting).
#pragma once

#include <chrono>

namespace gridsim {

class Stopwatch {
public:
    // Seconds since construction or the last lap(), and starts the next lap.
    double lap() {
        const auto now = std::chrono::steady_clock::now();
        const double s = std::chrono::duration<double>(now - last_).count();
        last_ = now;
        return s;
    }

private:
    std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
};

}  // namespace gridsim

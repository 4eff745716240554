// The implicit heat step's CG as the deck sets it up and as the report records it: the settings
// from the deck's keys, the iterations per step, and the report's "cg" object.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>

#include "problems/cg.hpp"

namespace gridsim {

// CG iterations per step and the last solve's relative residual.
struct CgRecord {
    std::int64_t steps = 0;
    std::int64_t total = 0;
    std::int64_t min = 0;
    std::int64_t max = 0;
    double last_residual = 0.0;

    void add(const CgOutcome& o) {
        min = steps == 0 ? o.iterations : std::min(min, o.iterations);
        max = std::max(max, o.iterations);
        total += o.iterations;
        ++steps;
        last_residual = o.relative_residual;
    }
};

// The CG settings of the deck's time.cg_* and parallel.cg_* keys.
CgSettings heat_cg_settings(const Config& cfg);

// The report's "cg" object: iterations, residual, all-reduces, passes, the preconditioner's own.
template <class T>
nlohmann::json cg_report(Simulation<T>& sim, ConjugateGradient<T>& cg, const CgRecord& record,
                         const CgSettings& settings, double loop_seconds);

}  // namespace gridsim

#include "engine/trial.hpp"
#include "parallel/collectives.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>

namespace gridsim {

int repetitions_for(MPI_Comm comm, double first, double target, int most) {
    const double slowest = allreduce(comm, first, Reduce::max);
    return std::clamp(static_cast<int>(target / std::max(slowest, 1e-6)), 1, most);
}

TrialChoice agree_on_fastest(MPI_Comm comm, const std::vector<int>& candidates,
                             const std::function<double(int)>& seconds) {
    if (candidates.empty()) throw std::logic_error("agree_on_fastest: no candidate");
    TrialChoice c;
    c.slowest.reserve(candidates.size());
    for (int v : candidates) c.slowest.push_back(seconds(v));
    allreduce(comm, c.slowest.data(), c.slowest.data(), static_cast<int>(c.slowest.size()),
              Reduce::max);
    c.chosen = candidates[first_fastest(c.slowest)];
    return c;
}

std::size_t first_fastest(const std::vector<double>& seconds) {
    if (seconds.empty()) throw std::logic_error("first_fastest: no candidate");
    std::size_t best = 0;
    for (std::size_t i = 1; i < seconds.size(); ++i) {
        if (seconds[i] < seconds[best]) best = i;
    }
    return best;
}

ExchangeTrial exchange_verdict(const std::vector<int>& depths, const std::vector<double>& seconds,
                               std::size_t passes) {
    if (passes < 2 || passes > 4 || seconds.size() != passes * depths.size())
        throw std::logic_error("exchange_verdict: a time per depth and exchanging pass");
    ExchangeTrial t;
    t.ran = true;
    t.timed_faces_first = passes > 2;
    t.timed_pipelined = passes > 3;
    for (std::size_t d = 0; d < depths.size(); ++d) {
        const double* s = &seconds[passes * d];
        t.depths.push_back(
            {depths[d], s[0], s[1], passes > 2 ? s[2] : 0.0, passes > 3 ? s[3] : 0.0});
    }
    const std::size_t won = first_fastest(seconds);
    t.taken = won / passes;
    t.pass = static_cast<ExchangePass>(won % passes);
    return t;
}

std::vector<double> fastest_rounds(MPI_Comm comm, std::size_t choices, int rounds,
                                   const std::function<double(std::size_t)>& seconds) {
    std::vector<double> best(choices, std::numeric_limits<double>::infinity());
    for (int round = 0; round < rounds; ++round) {
        for (std::size_t turn = 0; turn < choices; ++turn) {
            const std::size_t c = (static_cast<std::size_t>(round) + turn) % choices;
            best[c] = std::min(best[c], allreduce(comm, seconds(c), Reduce::max));
        }
    }
    return best;
}

}  // namespace gridsim

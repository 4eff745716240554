#include "solver/trial.hpp"

#include <algorithm>
#include <stdexcept>

#include "comm/mpi_check.hpp"

namespace gridsim {

int repetitions_for(MPI_Comm comm, double first, double target, int most) {
    GRIDSIM_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &first, 1, MPI_DOUBLE, MPI_MAX, comm));
    return std::clamp(static_cast<int>(target / std::max(first, 1e-6)), 1, most);
}

TrialChoice agree_on_fastest(MPI_Comm comm, const std::vector<int>& candidates,
                             const std::function<double(int)>& seconds) {
    if (candidates.empty()) throw std::logic_error("agree_on_fastest: no candidate");
    TrialChoice c;
    c.slowest.reserve(candidates.size());
    for (int v : candidates) c.slowest.push_back(seconds(v));
    GRIDSIM_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, c.slowest.data(),
                                    static_cast<int>(c.slowest.size()), MPI_DOUBLE, MPI_MAX, comm));
    std::size_t best = 0;
    for (std::size_t i = 1; i < c.slowest.size(); ++i) {
        if (c.slowest[i] < c.slowest[best]) best = i;
    }
    c.chosen = candidates[best];
    return c;
}

}  // namespace gridsim

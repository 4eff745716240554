// Helpers shared by the MPI tests: running a deck on the first n ranks of MPI_COMM_WORLD.
#pragma once

#include <mpi.h>

#include <string>
#include <vector>

#include "config/config.hpp"
#include "mesh/domain.hpp"
#include "parallel/grid_model.hpp"
#include "problems/problem.hpp"
#include "run/run.hpp"

namespace gridsim::test {

inline int world_rank() {
    int r = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    return r;
}

inline int world_size() {
    int s = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &s);
    return s;
}

// The overrides a test run uses: the CPU backend unless the deck or the overrides choose one.
// Suites that compare runs on different rank counts must not let `auto` pick the GPU for one
// rank count and the CPU for another (it does on a one-GPU host); the gpu suite asks for CUDA.
inline std::vector<std::string> pinned_backend(const std::string& deck,
                                               std::vector<std::string> sets) {
    bool chosen = deck.find("backend") != std::string::npos;
    for (const std::string& s : sets) chosen = chosen || s.rfind("parallel.backend", 0) == 0;
    if (!chosen) sets.emplace_back("parallel.backend=cpu");
    return sets;
}

// Whether `deck` (+ overrides) on `n` ranks takes k-deep halos, the rule the run applies: on the
// process grid the deck or `sets` give, else on the automatic one.
inline bool takes_halos(const std::string& deck, int n, int k,
                        const std::vector<std::string>& sets = {}) {
    const Config cfg = load_config(deck, "test.toml", pinned_backend(deck, sets));
    const Domain dom = make_domain(cfg);
    return decomposition_problem(dom, choose_process_grid(cfg, dom, n), n, k * cfg.stencil_radius)
        .empty();
}

// Runs `deck` (+ overrides) on world ranks 0..n-1; the others wait at the final barrier.
// Returns the result on every participating rank (global_field filled on world rank 0).
inline RunResult run_on_ranks(int n, const std::string& deck,
                              const std::vector<std::string>& sets) {
    MPI_Comm sub = MPI_COMM_NULL;
    MPI_Comm_split(MPI_COMM_WORLD, world_rank() < n ? 0 : MPI_UNDEFINED, world_rank(), &sub);
    RunResult result;
    if (sub != MPI_COMM_NULL) {
        const Config cfg = load_config(deck, "test.toml", pinned_backend(deck, sets));
        RunOptions opt;
        opt.gather_field = true;
        result = run_problem(cfg, sub, opt);
        MPI_Comm_free(&sub);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    return result;
}

}  // namespace gridsim::test

// The grids of the multigrid preconditioner (src/problems/multigrid.hpp) and each rank's block of
// them: pure functions of the domain and the process grid, so every rule is unit-tested
// directly. Level 0 is the problem's grid; each coarser level halves the axes that can halve.
//
// The rule (README, "Deck keys"): an axis halves while every rank's block along it holds at least
// kMinHalvingBlock points and, on a periodic axis, its point count is even. A Dirichlet axis of
// N points keeps the even positions 0, 2, 4, ... and the last one, N - 1 (the only coarse
// interval that is not twice the fine spacing is the last, where N - 1 is odd); a periodic axis
// of N points keeps the N / 2 even positions. A rank's coarse block is the coarse points on its
// fine block, so the process grid and the neighbours stay those of the problem. On several ranks,
// where no axis halves any more but one would on one rank, the last level is gathered whole
// onto rank 0 (a level of the same points, `gathered`), and halving goes on there under the same
// rule with one block per axis; the coarse solve runs on rank 0 alone (where it pays:
// drop_gathering_that_does_not_pay). Levels stop when no axis halves.
#pragma once

#include <array>
#include <vector>

#include "mesh/domain.hpp"

namespace gridsim {

inline constexpr int kMinHalvingBlock = 4;

struct MgLevel {
    int dims = 3;
    std::array<int, 3> points{1, 1, 1};  // global points per axis, Dirichlet points included
    std::array<bool, 3> periodic{};
    Subdomain sub;                  // this rank's block
    std::array<int, 3> halved{};    // 1 on the axes halved from the level before
    std::array<int, 3> shift{};     // kernels/multigrid.hpp's GridTransfer::shift
    std::array<int, 3> halvings{};  // halvings since level 0: spacing 2^halvings h
    // Held whole by rank 0 alone (`sub` is the whole grid): the ranks' blocks of the level
    // before gathered onto it, or a level below such one.
    bool gathered = false;
};

// Every level on the rank at `coords` of `process_grid`, at most `max_levels` of them (the
// gathered ones, rank 0's, on every rank).
std::vector<MgLevel> plan_levels(const Domain& dom, const std::array<int, 3>& process_grid,
                                 const std::array<int, 3>& coords, int max_levels);

// The extreme eigenvalues of a level's backward-Euler operator I - Lap (the diffusion numbers
// `r` of level 0 scaled by 4^-halvings), exact for the constant-coefficient 2 dims + 1 point
// operator: 1 + sum_d r_d mu_d, mu_d over 2 - 2 cos(k pi / (n + 1)) (Dirichlet, n unknowns) or
// 2 - 2 cos(2 pi k / N) (periodic).
struct LevelSpectrum {
    double lo = 1.0;
    double hi = 1.0;
};
LevelSpectrum level_spectrum(const MgLevel& level, const std::array<double, 3>& r);

// Drops the levels gathered onto rank 0 where the ranks' coarsest level is solved by the
// Chebyshev iteration to `reduction` in at most `most_applications` operator applications
// (each an exchange among the ranks): gathering (through the host, twice) costs more there.
void drop_gathering_that_does_not_pay(std::vector<MgLevel>& levels, const std::array<double, 3>& r,
                                      double reduction, int most_applications);

// The smallest degree of the Chebyshev iteration on [lo, hi] whose error bound,
// 1 / T_k((hi + lo) / (hi - lo)), is at most `reduction` (0 where lo and hi coincide).
int chebyshev_degree_for(const LevelSpectrum& s, double reduction);

}  // namespace gridsim

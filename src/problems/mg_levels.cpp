#include "problems/mg_levels.hpp"

#include <algorithm>
#include <cmath>

namespace gridsim {

namespace {

// The blocks of every rank coordinate along one axis.
struct AxisBlocks {
    int points = 1;
    bool periodic = false;
    std::vector<BlockRange> blocks;
};

bool halves(const AxisBlocks& a) {
    if (a.periodic && a.points % 2 != 0) return false;
    return std::all_of(a.blocks.begin(), a.blocks.end(),
                       [](const BlockRange& b) { return b.size >= kMinHalvingBlock; });
}

// Coarse point c lies on fine position 2c; a Dirichlet axis whose last position is odd keeps it
// as one more coarse point, held by the last block.
AxisBlocks halve(const AxisBlocks& a) {
    const bool odd_end = !a.periodic && (a.points - 1) % 2 != 0;
    AxisBlocks c;
    c.periodic = a.periodic;
    c.points = a.periodic ? a.points / 2 : (a.points + 1) / 2 + (odd_end ? 1 : 0);
    for (std::size_t i = 0; i < a.blocks.size(); ++i) {
        const BlockRange& b = a.blocks[i];
        const int start = (b.start + 1) / 2;
        int end = (b.start + b.size + 1) / 2;
        if (odd_end && i + 1 == a.blocks.size()) ++end;
        c.blocks.push_back({start, end - start});
    }
    return c;
}

}  // namespace

namespace {

// Halves `levels.back()` into new levels while an axis halves and fewer than `max_levels` exist,
// on the rank at `coords` of the blocks in `axes`.
void halve_levels(std::vector<MgLevel>& levels, std::array<AxisBlocks, 3>& axes,
                  const std::array<int, 3>& coords, int max_levels) {
    while (static_cast<int>(levels.size()) < max_levels) {
        MgLevel next = levels.back();
        bool any = false;
        for (int d = 0; d < next.dims; ++d) {
            next.halved[d] = halves(axes[d]) ? 1 : 0;
            next.shift[d] = 0;
            if (next.halved[d] == 0) continue;
            any = true;
            const BlockRange fine = axes[d].blocks[coords[d]];
            axes[d] = halve(axes[d]);
            const BlockRange coarse = axes[d].blocks[coords[d]];
            next.points[d] = axes[d].points;
            next.sub.offset[d] = coarse.start;
            next.sub.size[d] = coarse.size;
            next.shift[d] = 2 * coarse.start - fine.start;
            ++next.halvings[d];
        }
        if (!any) return;
        levels.push_back(next);
    }
}

// `level`'s points whole on one rank: the gathered copy of it.
MgLevel gathered_copy(const MgLevel& level) {
    MgLevel g = level;
    g.gathered = true;
    g.halved = {0, 0, 0};
    g.shift = {0, 0, 0};
    Domain whole;
    whole.dims = level.dims;
    whole.solved = level.points;
    whole.periodic = level.periodic;
    g.sub = make_subdomain(whole, {1, 1, 1}, {0, 0, 0});
    return g;
}

}  // namespace

std::vector<MgLevel> plan_levels(const Domain& dom, const std::array<int, 3>& process_grid,
                                 const std::array<int, 3>& coords, int max_levels) {
    std::array<AxisBlocks, 3> axes;
    MgLevel level;
    level.dims = dom.dims;
    level.sub = make_subdomain(dom, process_grid, coords);
    int ranks = 1;
    for (int d = 0; d < dom.dims; ++d) {
        axes[d].points = dom.solved[d];
        axes[d].periodic = dom.periodic[d];
        for (int p = 0; p < process_grid[d]; ++p)
            axes[d].blocks.push_back(block_range(dom.solved[d], process_grid[d], p));
        level.points[d] = dom.solved[d];
        level.periodic[d] = dom.periodic[d];
        ranks *= process_grid[d];
    }
    std::vector<MgLevel> levels{level};
    halve_levels(levels, axes, coords, max_levels);
    if (ranks == 1 || static_cast<int>(levels.size()) >= max_levels) return levels;
    levels.push_back(gathered_copy(levels.back()));
    for (int d = 0; d < dom.dims; ++d) axes[d].blocks = {BlockRange{0, axes[d].points}};
    const std::size_t gathered = levels.size();
    halve_levels(levels, axes, {0, 0, 0}, max_levels);
    if (levels.size() == gathered) levels.pop_back();  // rank 0 would halve nothing more
    return levels;
}

LevelSpectrum level_spectrum(const MgLevel& level, const std::array<double, 3>& r) {
    const double pi = std::acos(-1.0);
    LevelSpectrum s;
    for (int d = 0; d < level.dims; ++d) {
        const double rd = std::ldexp(r[d], -2 * level.halvings[d]);
        const int n = level.points[d];
        double lo = 0.0;
        double hi = 0.0;
        if (level.periodic[d]) {
            hi = 2.0 - 2.0 * std::cos(2.0 * pi * (n / 2) / n);
        } else {
            const double c = std::cos(pi / (n - 1));  // n - 2 unknowns: pi / (unknowns + 1)
            lo = 2.0 - 2.0 * c;
            hi = 2.0 + 2.0 * c;
        }
        s.lo += rd * lo;
        s.hi += rd * hi;
    }
    return s;
}

void drop_gathering_that_does_not_pay(std::vector<MgLevel>& levels, const std::array<double, 3>& r,
                                      double reduction, int most_applications) {
    const auto first =
        std::find_if(levels.begin(), levels.end(), [](const MgLevel& l) { return l.gathered; });
    if (first == levels.begin() || first == levels.end()) return;
    if (chebyshev_degree_for(level_spectrum(*(first - 1), r), reduction) <= most_applications)
        levels.erase(first, levels.end());
}

int chebyshev_degree_for(const LevelSpectrum& s, double reduction) {
    if (s.hi - s.lo <= 1e-12 * s.hi) return 0;
    const double sigma = (s.hi + s.lo) / (s.hi - s.lo);
    return static_cast<int>(std::ceil(std::acosh(1.0 / reduction) / std::acosh(sigma)));
}

}  // namespace gridsim

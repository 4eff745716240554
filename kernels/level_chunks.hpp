// How a levels launch (temporal blocking) cuts its tiles along the walk axis into chunks, one
// block each. A pure function of its arguments, so it is unit-tested on the host.
#pragma once

#include <algorithm>
#include <cstdint>

namespace gridsim {

// The rows (2D; planes in 3D) of each chunk when every tile's `rows` are cut into equal chunks,
// a whole number of `granule` rows and at most `most_rows` (at least 1): each chunk of a tile is
// a block, and a block's steps are its rows plus 3 * levels to fill the pipeline. The chunk
// count minimises (waves of blocks) x (steps per block), `slots` blocks per wave, so that the
// last wave is not a few blocks on an idle GPU (docs/tuning.md, "Levels chunks").
inline int level_chunk_rows(std::int64_t tiles, int rows, int levels, std::int64_t slots,
                            int most_rows, int granule = 1) {
    auto ceil_div = [](std::int64_t n, std::int64_t d) { return (n + d - 1) / d; };
    const std::int64_t units = ceil_div(rows, granule);
    const std::int64_t per_chunk = std::max(1, most_rows / granule);
    const auto least = static_cast<int>(std::max<std::int64_t>(1, ceil_div(units, per_chunk)));
    const auto most = static_cast<int>(
        std::max<std::int64_t>(least, std::min(units, 4 * ceil_div(slots, tiles))));
    int chunks = least;
    std::int64_t best = -1;
    for (int c = least; c <= most; ++c) {
        const std::int64_t cost =
            ceil_div(tiles * c, slots) * (ceil_div(units, c) * granule + 3LL * levels);
        if (best < 0 || cost < best) {
            best = cost;
            chunks = c;
        }
    }
    return static_cast<int>(std::max<std::int64_t>(1, ceil_div(units, chunks) * granule));
}

}  // namespace gridsim

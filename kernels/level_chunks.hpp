// How a levels launch (temporal blocking) cuts its tiles along the walk axis into chunks, one
// block each. A pure function of its arguments, so it is unit-tested on the host.
#pragma once

#include <algorithm>
#include <cstdint>

namespace gridsim {

namespace chunks_detail {
inline std::int64_t ceil_div(std::int64_t n, std::int64_t d) { return (n + d - 1) / d; }
}  // namespace chunks_detail

// The most chunks a levels launch cuts a tile into: four blocks per slot of a wave.
inline std::int64_t most_level_chunks(std::int64_t tiles, std::int64_t slots) {
    return 4 * chunks_detail::ceil_div(slots, tiles);
}

// The rows (2D; planes in 3D) of each chunk when every tile's `rows` are cut into equal chunks,
// a whole number of `granule` rows and at most `most_rows` (at least 1): each chunk of a tile is
// a block, and a block's steps are its rows plus 3 * levels to fill the pipeline. The chunk
// count minimises (waves of blocks) x (steps per block), `slots` blocks per wave, so that the
// last wave is not a few blocks on an idle GPU (docs/tuning.md, "Levels chunks").
inline int level_chunk_rows(std::int64_t tiles, int rows, int levels, std::int64_t slots,
                            int most_rows, int granule = 1) {
    using chunks_detail::ceil_div;
    const std::int64_t units = ceil_div(rows, granule);
    const std::int64_t per_chunk = std::max(1, most_rows / granule);
    const auto least = static_cast<int>(std::max<std::int64_t>(1, ceil_div(units, per_chunk)));
    const auto most = static_cast<int>(
        std::max<std::int64_t>(least, std::min(units, most_level_chunks(tiles, slots))));
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

// The rows of each chunk of a float summing pass: the shortest chunks, at least `least_rows` and at
// most most_level_chunks a tile, a whole number of `granule` rows, where they make at least two
// waves of blocks; else level_chunk_rows. Such a pass runs faster in many waves of short blocks
// than in one of long ones, more than the fill steps of the extra blocks cost (docs/tuning.md,
// "Summing pass chunks").
inline int sum_pass_chunk_rows(std::int64_t tiles, int rows, int levels, std::int64_t slots,
                               int most_rows, int granule, int least_rows) {
    using chunks_detail::ceil_div;
    const std::int64_t shortest =
        std::max<std::int64_t>(least_rows, ceil_div(rows, most_level_chunks(tiles, slots)));
    const std::int64_t chunk = ceil_div(shortest, granule) * granule;
    if (chunk <= most_rows && tiles * ceil_div(rows, chunk) >= 2 * slots)
        return static_cast<int>(chunk);
    return level_chunk_rows(tiles, rows, levels, slots, most_rows, granule);
}

// The chunks that rows [lo, hi) (a non-empty range) meet, of `chunks` chunks of `rows` rows from
// `anchor`, the first also reaching down to every row below the anchor and the last up to every
// row above: the first chunk's index and how many. A launch over part of a box takes these, so
// that its blocks' rows are the whole box's launch's, cut at the range.
struct ChunkSpan {
    int first = 0;
    int count = 0;
};
inline ChunkSpan chunks_meeting(int lo, int hi, int anchor, int rows, int chunks) {
    auto chunk_of = [&](int row) {
        return row < anchor ? 0 : std::min(chunks - 1, (row - anchor) / rows);
    };
    const int first = chunk_of(lo);
    return {first, chunk_of(hi - 1) - first + 1};
}

}  // namespace gridsim

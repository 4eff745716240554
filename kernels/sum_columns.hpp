// The column ranges of a summing pass: the boxes a residual sweep sums over, grouped by the
// columns they span. A rank split along x sums its x faces' strips apart from the middle
// columns (where the y faces' slabs and the interior are row slabs of the same columns); the
// pass runs one launch per range, each laid out as the sweep's launches of that range's boxes.
// A pure function of the boxes, so it is unit-tested on the host.
#pragma once

#include <vector>

#include "mesh/box.hpp"

namespace gridsim {

// Columns [lo, hi) and the indices of the boxes that span exactly them, in order.
struct ColumnRange {
    int lo = 0;
    int hi = 0;
    std::vector<int> boxes;
};

// The boxes' column ranges in the order of each range's first box; empty where two boxes'
// columns overlap without being the same (no launch of the pass could sum them apart).
inline std::vector<ColumnRange> column_ranges(const std::vector<Box>& boxes) {
    std::vector<ColumnRange> ranges;
    for (int i = 0; i < static_cast<int>(boxes.size()); ++i) {
        const Box& b = boxes[static_cast<std::size_t>(i)];
        bool placed = false;
        for (ColumnRange& r : ranges) {
            if (r.lo == b.lo[0] && r.hi == b.hi[0]) {
                r.boxes.push_back(i);
                placed = true;
            } else if (b.lo[0] < r.hi && r.lo < b.hi[0]) {
                return {};
            }
        }
        if (!placed) ranges.push_back({b.lo[0], b.hi[0], {i}});
    }
    return ranges;
}

}  // namespace gridsim

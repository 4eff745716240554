#include "parallel/plane_pass_model.hpp"

#include <stdexcept>

#include "kernels/level_chunks.hpp"
#include "kernels/levels_3d_tile.hpp"

namespace gridsim {

using chunks_detail::ceil_div;

PlanePassShape plane_pass_shape(const std::array<long long, 3>& block, int value_bytes, int levels,
                                const PlanePassCosts& costs) {
    if (levels < 2 || levels > kMaxLevels3d)
        throw std::logic_error("a modelled 3D pass takes 2 to kMaxLevels3d levels");
    const int v = levels_3d_lane_points(value_bytes);
    PlanePassShape p;
    p.tiles = levels_3d_tiles_x(0, static_cast<int>(block[0]), v, levels) *
              levels_3d_tiles_y(0, static_cast<int>(block[1]), levels);
    const int nz = static_cast<int>(block[2]);
    p.planes = level_chunk_rows(p.tiles, nz, levels, costs.multiprocessors, kLevelPlanes);
    p.blocks = p.tiles * ceil_div(nz, p.planes);
    p.waves = ceil_div(p.blocks, costs.multiprocessors);
    p.steps = p.waves * (p.planes + 3LL * levels);
    return p;
}

double modelled_plane_pass_seconds(const std::array<long long, 3>& block, int value_bytes,
                                   int levels, const PlanePassCosts& costs) {
    const PlanePassShape p = plane_pass_shape(block, value_bytes, levels, costs);
    // One plane of a tile, read and written at a multiprocessor's share of the copy bandwidth.
    const double tile_points =
        32.0 * levels_3d_lane_points(value_bytes) * kThreadRows3d * kRowsPerThread3d;
    const double plane_seconds =
        2.0 * tile_points * value_bytes / (costs.copy_bandwidth / costs.multiprocessors);
    const double step = (costs.base + costs.per_level * levels) *
                        (value_bytes == 4 ? costs.float_factor : 1.0) * plane_seconds;
    return static_cast<double>(p.steps) * step / levels;
}

double modelled_single_sweep_seconds(const std::array<long long, 3>& block, int value_bytes,
                                     const PlanePassCosts& costs) {
    const double points = static_cast<double>(block[0]) * block[1] * block[2];
    return 2.0 * points * value_bytes / costs.copy_bandwidth;
}

}  // namespace gridsim

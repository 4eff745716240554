// The launch of the 3D levels kernel (temporal blocking in 3D): its tile shape, its most levels
// and the chunks its blocks walk along z.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <stdexcept>
#include <vector>

#include "kernels/block_order.hpp"
#include "kernels/cuda/launch_shapes.cuh"
#include "kernels/cuda/levels_3d.cuh"
#include "kernels/halo_arrivals.hpp"
#include "kernels/level_chunks.hpp"
#include "kernels/levels_3d_tile.hpp"

namespace gridsim::cuda {

// The blocks that write a halo exchange's faces first, and how many there are: a faces-first
// pass. Where no face box meets `b` there are none, and the order is the grid's own.
struct FacesFirst {
    const std::vector<Box>* boxes = nullptr;  // nullptr: no faces, the grid's own order
    unsigned* done = nullptr;                 // the face blocks' counter (block_signals.cuh)
};

// The signals of a levels launch beside the stencil: the faces it writes first (FacesFirst), or
// the halos it waits for (a pipelined pass: HaloArrivals, `arrivals` non-null); at most one.
struct LevelsSignals {
    FacesFirst faces;
    const HaloArrivals* arrivals = nullptr;
};

// A 32 V x Rows R tile per block, z chunks by level_chunk_rows, tiles fastest: the blocks of a
// wave walk the same planes of neighbouring tiles, sharing their rings in the L2 cache
// (docs/tuning.md, "Levels chunks"). With faces, a one-dimensional launch whose blocks that write
// them go first (BlockOrder) and signal faces.done; returns how many do. With arrivals, the
// grid's own order, in chunks no fewer than two where both z halos are waited for
// (pipelined_chunk_planes).
template <class T, class S, int Levels, int V, int R, int Rows>
long long launch_levels_3d(const AxisCoeffs<T>& r, FieldView<const T> in, FieldView<T> out,
                           const Box& b, const Box& live, int multiprocessors, cudaStream_t s,
                           const LevelsSignals& signals) {
    static_assert(
        Rows == (kReadsField<S> ? kFieldThreadRows3d : kThreadRows3d) && R == kRowsPerThread3d,
        "the tile of levels_3d_tile.hpp");
    constexpr std::size_t kSmem = LevelsPlanes<T, Levels, V, R, Rows, kReadsField<S>>::kBytes;
    auto kernel = stencil_levels_3d_kernel<T, S, Levels, V, R, Rows, LevelsOrder::plain>;
    auto faces_kernel =
        stencil_levels_3d_kernel<T, S, Levels, V, R, Rows, LevelsOrder::faces_first>;
    auto pipelined_kernel =
        stencil_levels_3d_kernel<T, S, Levels, V, R, Rows, LevelsOrder::pipelined>;
    static const long long wave = [&] {
        allow_shared(kernel, kSmem);
        allow_shared(faces_kernel, kSmem);
        allow_shared(pipelined_kernel, kSmem);
        return wave_slots(kernel, 32 * Rows, kSmem, multiprocessors);
    }();
    const auto tiles_x = static_cast<int>(levels_3d_tiles_x(b.lo[0], b.hi[0], V, Levels));
    const auto tiles_y = static_cast<int>(levels_3d_tiles_y(b.lo[1], b.hi[1], Levels, Rows));
    const int nz = b.hi[2] - b.lo[2];
    int planes =
        level_chunk_rows(static_cast<long long>(tiles_x) * tiles_y, nz, Levels, wave, kLevelPlanes);
    if (signals.arrivals != nullptr) {
        planes = pipelined_chunk_planes(*signals.arrivals, nz, planes, Levels);
        if (planes == 0) throw std::logic_error("a pipelined pass over a box too thin to chunk");
    }
    const int chunks = static_cast<int>(ceil_div(nz, planes));
    const dim3 grid(tiles_x, tiles_y, chunks);
    const BlockOrder plain = BlockOrder::plain(tiles_x, tiles_y, chunks);
    if (signals.arrivals != nullptr) {
        pipelined_kernel<<<grid, dim3(32, Rows, 1), kSmem, s>>>(in, out, b, live, r, planes, plain,
                                                                nullptr, *signals.arrivals);
        GRIDSIM_CUDA_CHECK(cudaGetLastError());
        return 0;
    }
    const FacesFirst& faces = signals.faces;
    if (faces.boxes == nullptr) {
        kernel<<<grid, dim3(32, Rows, 1), kSmem, s>>>(in, out, b, live, r, planes, plain, nullptr,
                                                      {});
        GRIDSIM_CUDA_CHECK(cudaGetLastError());
        return 0;
    }
    const BlockOrder order = faces_first_order(
        {tiles_x, tiles_y, chunks},
        {levels_3d_first_x(b.lo[0], V, Levels) + Levels, b.lo[1], b.lo[2]},
        {levels_3d_stride_x(V, Levels), levels_3d_stride_y(Levels, Rows), planes}, b, *faces.boxes);
    faces_kernel<<<static_cast<unsigned>(order.blocks()), dim3(32, Rows, 1), kSmem, s>>>(
        in, out, b, live, r, planes, order, faces.done, {});
    GRIDSIM_CUDA_CHECK(cudaGetLastError());
    return order.faces();
}

// The most levels of a 3D pass of S and its tile's thread rows: kMaxLevels3d and kThreadRows3d,
// kMaxFieldLevels3d and kFieldThreadRows3d where it reads a field.
template <class S>
constexpr int most_levels_3d() {
    return kReadsField<S> ? kMaxFieldLevels3d : kMaxLevels3d;
}
template <class S>
constexpr int thread_rows_3d() {
    return kReadsField<S> ? kFieldThreadRows3d : kThreadRows3d;
}

// The launch for `levels` (2 to most_levels_3d<S>()) in the measured tile shape.
template <class T, class S>
long long launch_levels_3d(const AxisCoeffs<T>& r, FieldView<const T> in, FieldView<T> out,
                           const Box& b, const Box& live, int levels, int multiprocessors,
                           cudaStream_t s, const LevelsSignals& signals) {
    long long face_blocks = 0;
    with_levels<2, most_levels_3d<S>()>(levels, [&](auto l) {
        face_blocks = launch_levels_3d<T, S, decltype(l)::value, levels_3d_lane_points(sizeof(T)),
                                       kRowsPerThread3d, thread_rows_3d<S>()>(
            r, in, out, b, live, multiprocessors, s, signals);
    });
    return face_blocks;
}

}  // namespace gridsim::cuda

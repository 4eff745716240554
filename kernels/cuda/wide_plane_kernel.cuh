// The plane walk for wide stars in 3D (radius R > 1, constant coefficients, one sweep, no sum): a
// block of 32 x kPlaneThreadRows threads owns a 32 x (kPlaneThreadRows Q) column tile of a box
// and walks a chunk of it along z. Each step copies one plane of the tile and its R-wide ring
// into shared memory (cp.async, kPlanesAhead planes ahead, a ring of R + kPlanesAhead + 1 plane
// slots), so each point of a plane comes from L2 or DRAM once per tile instead of once per star
// that reads it; a thread reads its column's x and y neighbours there (its Q rows' y neighbours
// in one column of Q + 2R loads) and keeps the 2R + 1 planes around each of its points along z
// in registers. It fills the same Star the naive kernel gathers (stencil_at), so both give the
// same bits. The wide stream kernel (wide_stream_kernel.cuh) takes what the walk does not
// (kPlaneWalkStencil, plane_walk_takes).
#pragma once

#include <cuda_pipeline_primitives.h>

#include "kernels/cuda/launch_shapes.cuh"
#include "kernels/cuda/walk_common.cuh"
#include "kernels/level_chunks.hpp"
#include "kernels/levels_3d_tile.hpp"

namespace gridsim::cuda {

// The tile: 32 x kPlaneThreadRows threads, kPlaneRowsPerThread rows each (32 x 32 points).
constexpr int kPlaneThreadRows = 8;
constexpr int kPlaneRowsPerThread = 4;
constexpr int kPlaneTileX = 32;
constexpr int kPlaneTileY = kPlaneThreadRows * kPlaneRowsPerThread;
// Planes a block's copies run ahead of the plane it reads.
constexpr int kPlanesAhead = 2;
// The stars the plane walk runs: this radius and more, in double; the wide stream kernel runs
// the narrower ones and float faster (docs/tuning.md, "Wide stars in 3D").
constexpr int kPlaneWalkRadius = 4;

// Whether sweeps of S in Dims dimensions and T that sum `Sum` may take the plane walk: a star of
// at least kPlaneWalkRadius with constant coefficients in 3D and double that sums nothing.
template <class T, int Dims, class S, StencilSum Sum>
inline constexpr bool kPlaneWalkStencil =
    Dims == 3 && S::kRadius >= kPlaneWalkRadius && !kReadsField<S> && Sum == StencilSum::none &&
    sizeof(T) == 8;

// The shared planes of the tile for a star of radius R.
template <class T, int R>
struct PlaneTile {
    static constexpr int kThreads = 32 * kPlaneThreadRows;
    static constexpr int kX = kPlaneTileX;     // columns a tile writes
    static constexpr int kY = kPlaneTileY;     // rows a tile writes
    static constexpr int kPitch = kX + 2 * R;  // a shared row: the tile's and its ring's
    static constexpr int kPoints = kPitch * (kY + 2 * R);
    // Read: the newest plane and the one R before it; written: the plane kPlanesAhead on.
    static constexpr int kSlots = R + kPlanesAhead + 1;
    static constexpr int kCopies = (kPoints + kThreads - 1) / kThreads;  // per thread per plane
    static constexpr std::size_t kBytes = std::size_t{kSlots} * kPoints * sizeof(T);
};

// A thread's copies of a plane of the tile at (x0, y0): shared point tid + k * threads from
// `from[k]` points past the plane's corner of the tile's ring (x0 - R, y0 - R); -1 beyond the
// box's ring (only columns the tile does not store read those).
template <class Tile, int R>
__device__ __forceinline__ void plane_copies(int tid, int x0, int y0, const Box& box,
                                             std::int64_t sy, int (&from)[Tile::kCopies]) {
#pragma unroll
    for (int k = 0; k < Tile::kCopies; ++k) {
        const int at = tid + k * Tile::kThreads;
        const int dx = at % Tile::kPitch;
        const int dy = at / Tile::kPitch;
        const bool copies =
            at < Tile::kPoints && x0 - R + dx < box.hi[0] + R && y0 - R + dy < box.hi[1] + R;
        from[k] = copies ? static_cast<int>(dx + dy * sy) : -1;
    }
}

// Chunk `blockIdx.z` (of `planes` planes from box.lo[2]) of tile (blockIdx.x, blockIdx.y).
template <class T, class S>
__global__ void __launch_bounds__(32 * kPlaneThreadRows)
    stencil_wide_plane_kernel(FieldView<const T> in, FieldView<T> out, Box box, AxisCoeffs<T> r,
                              int planes) {
    constexpr int R = S::kRadius;
    constexpr int Q = kPlaneRowsPerThread;
    using Tile = PlaneTile<T, R>;
    static_assert(R > 1 && !kReadsField<S>, "the plane walk: wide stars of constant coefficients");
    extern __shared__ __align__(16) unsigned char smem_raw[];
    T* const smem = reinterpret_cast<T*>(smem_raw);
    const int tx = static_cast<int>(threadIdx.x);
    const int row0 = Q * static_cast<int>(threadIdx.y);  // the thread's first tile row
    const int tid = 32 * static_cast<int>(threadIdx.y) + tx;
    const int x0 = box.lo[0] + static_cast<int>(blockIdx.x) * Tile::kX;
    const int y0 = box.lo[1] + static_cast<int>(blockIdx.y) * Tile::kY;
    const int z0 = box.lo[2] + static_cast<int>(blockIdx.z) * planes;
    const int z1 = min(z0 + planes, box.hi[2]);
    const FieldExtents& e = in.ext;
    int from[Tile::kCopies];
    plane_copies<Tile, R>(tid, x0, y0, box, e.sy, from);
    const int first = z0 - R;             // the plane step 0 copies
    const int steps = (z1 - z0) + 2 * R;  // planes first .. z1 - 1 + R
    auto copy = [&](int s) {              // plane first + s into slot s % kSlots, a group each
        if (s < steps) {
            const T* plane = in.data + e.index(x0 - R, y0 - R, first + s);
            T* slot = smem + (s % Tile::kSlots) * Tile::kPoints + tid;
#pragma unroll
            for (int k = 0; k < Tile::kCopies; ++k)
                if (from[k] >= 0)
                    __pipeline_memcpy_async(slot + k * Tile::kThreads, plane + from[k], sizeof(T));
        }
        __pipeline_commit();
    };
#pragma unroll
    for (int s = 0; s < kPlanesAhead; ++s) copy(s);
    const std::int64_t stride[3] = {1, e.sy, e.sz};
    const int centre = (row0 + R) * Tile::kPitch + tx + R;  // the thread's first point in a slot
    T w[Q][2 * R + 1] = {};  // row q's column at planes -R..R around the output plane
    for (int s = 0; s < steps; ++s) {
        __pipeline_wait_prior(kPlanesAhead - 1);  // this thread's copies of plane s landed
        __syncthreads();                          // everyone's, and everyone is past step s - 1
        copy(s + kPlanesAhead);
        const T* newest = smem + (s % Tile::kSlots) * Tile::kPoints + centre;
#pragma unroll
        for (int q = 0; q < Q; ++q) {
#pragma unroll
            for (int o = 0; o < 2 * R; ++o) w[q][o] = w[q][o + 1];
            w[q][2 * R] = newest[q * Tile::kPitch];
        }
        const int z = first + s - R;  // the output plane, its planes to z + R in hand
        if (z < z0) continue;
        const T* mid = smem + ((s - R) % Tile::kSlots) * Tile::kPoints + centre;
        T col[Q + 2 * R];  // the thread's column of plane z, rows -R..Q - 1 + R
#pragma unroll
        for (int q = 0; q < Q + 2 * R; ++q) col[q] = mid[(q - R) * Tile::kPitch];
#pragma unroll
        for (int q = 0; q < Q; ++q) {
            const int x = x0 + tx;
            const int y = y0 + row0 + q;
            if (x >= box.hi[0] || y >= box.hi[1]) continue;
            Star<T, R> star(w[q][R]);
#pragma unroll
            for (int o = 1; o <= R; ++o) {
                star.set(0, -o, mid[q * Tile::kPitch - o]);
                star.set(0, o, mid[q * Tile::kPitch + o]);
                star.set(1, -o, col[q + R - o]);
                star.set(1, o, col[q + R + o]);
                star.set(2, -o, w[q][R - o]);
                star.set(2, o, w[q][R + o]);
            }
            const std::int64_t at = e.index(x, y, z);
            out.data[at] = apply_point<T, 3, S>(star, at, stride, r);
        }
    }
}

// The fewest planes of a box the plane walk takes for a star of radius `radius`.
constexpr int plane_walk_planes(int radius) { return 4 * radius; }
// Whether the plane walk takes `b` for a star of radius `radius`: at least a tile wide and tall
// and plane_walk_planes deep (docs/tuning.md, "Wide stars in 3D").
inline bool plane_walk_takes(const Box& b, int radius) {
    return b.hi[0] - b.lo[0] >= kPlaneTileX && b.hi[1] - b.lo[1] >= kPlaneTileY &&
           b.hi[2] - b.lo[2] >= plane_walk_planes(radius);
}

// The plane walk over `b`: a block per tile and chunk of planes, tiles fastest (neighbouring
// tiles' rings meet in the L2 cache), the chunks cut as the levels kernels cut theirs.
template <class T, class S>
void launch_wide_planes(FieldView<const T> in, FieldView<T> out, const Box& b,
                        const AxisCoeffs<T>& r, int multiprocessors, cudaStream_t s) {
    using Tile = PlaneTile<T, S::kRadius>;
    auto kernel = stencil_wide_plane_kernel<T, S>;
    static const long long wave = [&] {
        allow_shared(kernel, Tile::kBytes);
        return wave_slots(kernel, Tile::kThreads, Tile::kBytes, multiprocessors);
    }();
    const unsigned tiles_x = ceil_div(b.hi[0] - b.lo[0], Tile::kX);
    const unsigned tiles_y = ceil_div(b.hi[1] - b.lo[1], Tile::kY);
    const int nz = b.hi[2] - b.lo[2];
    const int planes = level_chunk_rows(static_cast<long long>(tiles_x) * tiles_y, nz, S::kRadius,
                                        wave, kLevelPlanes);
    const dim3 grid(tiles_x, tiles_y, ceil_div(nz, planes));
    kernel<<<grid, dim3(32, kPlaneThreadRows, 1), Tile::kBytes, s>>>(in, out, b, r, planes);
    GRIDSIM_CUDA_CHECK(cudaGetLastError());
}

}  // namespace gridsim::cuda

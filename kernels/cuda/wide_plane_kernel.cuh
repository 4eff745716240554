// The plane walk for wide stars in 3D (radius R > 1, constant coefficients, one sweep, no sum): a
// block of 32 x kPlaneThreadRows threads owns a 32 x (kPlaneThreadRows Q) column tile of a box
// and walks a chunk of it along z. Each step copies one plane of the tile and its R-wide ring
// into shared memory (cp.async, kPlanesAhead planes ahead, a ring of R + kPlanesAhead + 1 plane
// slots), so each point of a plane comes from L2 or DRAM once per tile instead of once per star
// that reads it; a thread reads its column's x and y neighbours there (its Q rows' y neighbours
// in one column of Q + 2R loads) and keeps the 2R + 1 planes around each of its points along z
// in registers. It fills the same Star the naive kernel gathers (stencil_at), so both give the
// same bits. The wide stream kernel (wide_stream_kernel.cuh) takes what the walk does not
// (kPlaneWalkStencil, plane_walk_takes in wide_plane_launch.cuh, which launches the walk; a host
// compiler also builds this file: tests/unit/test_plane_walk_on_host.cpp).
#pragma once

#include <cuda_pipeline_primitives.h>

#include <cstdint>

#include "kernels/backend.hpp"

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
// `from[k]` bytes past the plane's corner of the tile's ring (x0 - R, y0 - R). A point beyond the
// box's ring (only columns the tile does not store read it) copies the ring's first point in the
// tile's first row instead, so that every copy but the last is unconditional; the last is the
// thread's where it lies in the plane (the result).
template <class Tile, int R, class T>
__device__ __forceinline__ bool plane_copies(int tid, int x0, int y0, const Box& box,
                                             std::int64_t sy, unsigned (&from)[Tile::kCopies]) {
    const int ring = max(box.lo[0] - x0, 0);  // the ring's first column in the tile's
#pragma unroll
    for (int k = 0; k < Tile::kCopies; ++k) {
        const int at = tid + k * Tile::kThreads;
        const int dx = at % Tile::kPitch;
        const int dy = at / Tile::kPitch;
        const bool copies =
            x0 + dx >= box.lo[0] && x0 - R + dx < box.hi[0] + R && y0 - R + dy < box.hi[1] + R;
        from[k] = static_cast<unsigned>((copies ? dx + dy * sy : ring) * std::int64_t{sizeof(T)});
    }
    return tid + (Tile::kCopies - 1) * Tile::kThreads < Tile::kPoints;
}

// Chunk `blockIdx.z` (of `planes` planes from box.lo[2]) of tile (blockIdx.x, blockIdx.y); two
// blocks a multiprocessor (docs/tuning.md, "Wide stars in 3D").
template <class T, class S>
__global__ void __launch_bounds__(32 * kPlaneThreadRows, 2)
    stencil_wide_plane_kernel(FieldView<const T> in, FieldView<T> out, Box box, PointCoeffs<S, T> k,
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
    const FieldExtents& e = in.ext;
    // The tiles start on a memory sector, the first at or below the box's first column.
    const int x0 =
        pack_start<kSectorPoints<T>>(box.lo[0]) + static_cast<int>(blockIdx.x) * Tile::kX;
    const int y0 = box.lo[1] + static_cast<int>(blockIdx.y) * Tile::kY;
    const int z0 = box.lo[2] + static_cast<int>(blockIdx.z) * planes;
    const int z1 = min(z0 + planes, box.hi[2]);
    unsigned from[Tile::kCopies];
    const bool last = plane_copies<Tile, R, T>(tid, x0, y0, box, e.sy, from);
    const int first = z0 - R;             // the plane step 0 copies
    const int steps = (z1 - z0) + 2 * R;  // planes first .. z1 - 1 + R
    auto copy = [&](int s) {              // plane first + s into slot s % kSlots, a group each
        if (s < steps) {
            const auto* plane =
                reinterpret_cast<const char*>(in.data + e.index(x0 - R, y0 - R, first + s));
            T* slot = smem + (s % Tile::kSlots) * Tile::kPoints + tid;
#pragma unroll
            for (int k = 0; k < Tile::kCopies; ++k)
                if (k < Tile::kCopies - 1 || last)
                    __pipeline_memcpy_async(slot + k * Tile::kThreads,
                                            reinterpret_cast<const T*>(plane + from[k]), sizeof(T));
        }
        __pipeline_commit();
    };
#pragma unroll
    for (int s = 0; s < kPlanesAhead; ++s) copy(s);
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
            // Every row's value is made, inside the box or not (shared reads, no branch a row);
            // those inside are stored.
            const T value = S::template point<3>(star, k);
            if (x >= box.lo[0] && x < box.hi[0] && y < box.hi[1])
                out.data[e.index(x, y, z)] = value;
        }
    }
}

}  // namespace gridsim::cuda

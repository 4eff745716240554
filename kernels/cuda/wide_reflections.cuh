// The reflections beyond the fixed faces inside a wide levels pass (wide_levels_3d.cuh): between
// levels the pass sets each level's points beyond the fixed faces as Backend::reflect does after
// a sweep (FaceMoves' mirror entries, from HaloExchange::reflections). A face across x or y acts
// on a level's shared centre plane after the step's barrier (then a second barrier, and each
// thread reads its points back into its registers); a face across z on each thread's window of
// planes in registers as the mirrored plane comes in, on the planes where it acts. Only the blocks
// whose footprint meets a face look at it (walk_faces).
#pragma once

#include "kernels/backend.hpp"
#include "mesh/box.hpp"

namespace gridsim::cuda {

// A pass's reflections beyond the fixed faces (FaceMoves' mirror entries): entry f sets the
// points of box[f] from their images through plane[f] along axis[f].
struct WideMirrors {
    static constexpr int kMax = 6;
    int count = 0;
    Box box[kMax];
    int axis[kMax] = {};
    int plane[kMax] = {};
};

template <class T>
WideMirrors wide_mirrors(const FaceMoves<T>& m) {
    WideMirrors w;
    for (int f = 0; f < m.count; ++f) {
        w.box[f] = m.box[f];
        w.axis[f] = m.axis[f];
        w.plane[f] = m.shift[f][m.axis[f]];
    }
    w.count = m.count;
    return w;
}

// Centre plane `c` of level l - 1 at z = `z`: each x and y reflection whose box holds the plane
// sets its points of the tile from their images (FaceMoves::reflect_point's formula), where the
// images lie in the footprint.
template <class Tile, class T, class Points>
__device__ __forceinline__ void reflect_centre(T* c, const Points& pt, const WideMirrors& m,
                                               unsigned faces, int fx, int fy, int z) {
    for (int f = 0; f < m.count; ++f) {
        const Box& b = m.box[f];
        const int a = m.axis[f];
        if (!(faces >> f & 1u) || z < b.lo[2] || z >= b.hi[2]) continue;
#pragma unroll
        for (int k = 0; k < Tile::kPoints; ++k) {
            const int x = pt.x_of(k);
            const int y = pt.y_of(k);
            if (x < b.lo[0] || x >= b.hi[0] || y < b.lo[1] || y >= b.hi[1]) continue;
            const int along = a == 0 ? x - fx : y - fy;
            const int d = m.plane[f] - (a == 0 ? fx : fy) - along;
            const int far = along + 2 * d;
            if (far < 0 || far >= (a == 0 ? Tile::kX : Tile::kY)) continue;
            const int step = a == 0 ? d : d * Tile::kX;
            const int at = pt.at_of(k);
            c[at] = T(2) * c[at + step] - c[at + 2 * step];
        }
    }
}

// Plane `z` of a level has just come into window `w` (its newest, w[2R]): each z reflection
// whose box holds the point's column sets its mirrored plane if the window holds it and its
// images: the new plane itself beyond a face above, or the plane as far below a face below.
// The window's indices stay constants (the faces decide which, then one unrolled loop writes).
template <int R, class T>
__device__ __forceinline__ void reflect_window(T (&w)[2 * R + 1], int x, int y, int z,
                                               const WideMirrors& m, unsigned faces) {
    int above = 0;  // z = q + above, beyond a face q with its box above it
    int below = 0;  // z = q + below, mirroring q - below of a face q with its box below it
    for (int f = 0; f < m.count; ++f) {
        const Box& b = m.box[f];
        const int q = m.plane[f];
        const int o = z - q;
        if (!(faces >> f & 1u) || o < 1 || o >= R) continue;
        if (x < b.lo[0] || x >= b.hi[0] || y < b.lo[1] || y >= b.hi[1]) continue;
        if (b.lo[2] > q && z < b.hi[2]) above = o;
        if (b.lo[2] <= q && q - o >= b.lo[2]) below = o;
    }
#pragma unroll
    for (int o = 1; o < R; ++o) {
        if (above == o) w[2 * R] = T(2) * w[2 * R - o] - w[2 * R - 2 * o];
        if (below == o) w[2 * R - 2 * o] = T(2) * w[2 * R - o] - w[2 * R];
    }
}

// The faces a block's walk meets.
struct WalkFaces {
    unsigned across = 0;  // by bit f: faces across x or y
    unsigned along = 0;   // by bit f: faces across z (most blocks: none)
    // The planes a level makes where a face across z acts (reflect_window: 0 < z - plane < R).
    int along_lo = 0, along_hi = 0;
};

// The faces of `m` whose boxes meet the footprint at (fx, fy) over planes [lo, hi).
template <class Tile, int R>
__device__ __forceinline__ WalkFaces walk_faces(const WideMirrors& m, int fx, int fy, int lo,
                                                int hi) {
    WalkFaces faces;
    faces.along_lo = hi;
    faces.along_hi = lo;
    for (int f = 0; f < m.count; ++f) {
        const Box& b = m.box[f];
        const bool meets = b.lo[0] < fx + Tile::kX && b.hi[0] > fx && b.lo[1] < fy + Tile::kY &&
                           b.hi[1] > fy && b.lo[2] < hi && b.hi[2] > lo;
        if (!meets) continue;
        if (m.axis[f] != 2) {
            faces.across |= 1u << f;
            continue;
        }
        faces.along |= 1u << f;
        faces.along_lo = min(faces.along_lo, m.plane[f] + 1);
        faces.along_hi = max(faces.along_hi, m.plane[f] + R);
    }
    return faces;
}

}  // namespace gridsim::cuda

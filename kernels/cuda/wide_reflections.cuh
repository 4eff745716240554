// The reflections beyond the fixed faces inside a wide levels pass (wide_levels_3d.cuh): between
// levels the pass sets each level's points beyond the fixed faces as Backend::reflect does after
// a sweep (FaceMoves' mirror entries, from HaloExchange::reflections). A face across x or y acts
// on a level's shared centre plane after the step's barrier, a point a thread (then a second
// barrier, and each thread reads its points back into its registers); a face across z on each
// thread's window of planes in registers as the mirrored plane comes in, on the planes where it
// acts. Only the blocks whose footprint meets a face look at it (walk_faces).
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

// Whether each face of `m` across x or y is at most `layers` points thick along its axis (the
// wide levels pass sets the points beyond them one a thread: centre_ghost).
inline bool wide_mirrors_fit(const WideMirrors& m, int layers) {
    for (int f = 0; f < m.count; ++f) {
        const int a = m.axis[f];
        if (a != 2 && m.box[f].hi[a] - m.box[f].lo[a] > layers) return false;
    }
    return true;
}

// A thread's share of the reflections across x and y of a level's centre plane: at most one
// point (the faces' points in the footprint are numbered face by face, a point a thread), found
// once a walk, so that a step's reflection is one point a thread and no search.
struct CentreGhost {
    int at = 0;              // the point in a shared plane
    int step = 0;            // from it towards its image, to the face's plane
    int z_lo = 0, z_hi = 0;  // the planes its face's box holds (none: no point)
};

// Thread `t`'s point of the footprint at (fx, fy) among the faces across x and y (bits of
// `across`) whose images lie in the footprint (FaceMoves::reflect_point's formula).
template <class Tile>
__device__ __forceinline__ CentreGhost centre_ghost(const WideMirrors& m, unsigned across, int fx,
                                                    int fy, int t) {
    CentreGhost g;
    for (int f = 0; f < m.count; ++f) {
        if (!(across >> f & 1u)) continue;
        const Box& b = m.box[f];
        const int x0 = max(b.lo[0] - fx, 0), nx = min(b.hi[0] - fx, Tile::kX) - x0;
        const int y0 = max(b.lo[1] - fy, 0), ny = min(b.hi[1] - fy, Tile::kY) - y0;
        if (nx <= 0 || ny <= 0) continue;
        if (t >= nx * ny) {
            t -= nx * ny;
            continue;
        }
        const int x = x0 + t % nx;
        const int y = y0 + t / nx;
        const int a = m.axis[f];
        const int along = a == 0 ? x : y;
        const int d = m.plane[f] - (a == 0 ? fx : fy) - along;
        const int far = along + 2 * d;
        if (far >= 0 && far < (a == 0 ? Tile::kX : Tile::kY)) {
            g.at = Tile::at(x, y);
            g.step = a == 0 ? d : d * Tile::kX;
            g.z_lo = b.lo[2];
            g.z_hi = b.hi[2];
        }
        break;
    }
    return g;
}

// Centre plane `c` of level l - 1 at z = `z`: the thread's point of the reflections across x and
// y, if it has one and its face's box holds the plane.
template <class T>
__device__ __forceinline__ void reflect_centre(T* c, const CentreGhost& g, int z) {
    if (z >= g.z_lo && z < g.z_hi) c[g.at] = T(2) * c[g.at + g.step] - c[g.at + 2 * g.step];
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

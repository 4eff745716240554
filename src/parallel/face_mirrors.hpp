// The reflections beyond a subdomain's fixed faces as mirror entries (FaceMoves::add_mirror,
// Backend::reflect): the halo exchange sets them after each sweep, and a pass of levels between
// its levels.
#pragma once

#include "kernels/backend.hpp"
#include "mesh/domain.hpp"

namespace gridsim {

// The `layers` halo layers beyond each fixed face of `sub` (a Dirichlet face of the domain) in a
// field of `halo`-deep halos, as mirror entries (FaceMoves::add_mirror, Backend::reflect): along
// the face's axis the layers alone, across it as far into the halos as they go.
template <class T>
FaceMoves<T> fixed_face_mirrors(const Subdomain& sub, int layers, int halo) {
    FaceMoves<T> mirrors;
    if (layers < 1) return mirrors;
    for (int face = 0; face < 2 * sub.dims; ++face) {
        if (!sub.fixed_face[face]) continue;
        const int d = face_axis(face);
        const Box layer = recv_box(sub, face, layers);
        Box mirror = extend_into_halos(layer, sub, halo);
        mirror.lo[d] = layer.lo[d];
        mirror.hi[d] = layer.hi[d];
        mirrors.add_mirror(mirror, d, face_side(face) == 0 ? 0 : sub.size[d] - 1);
    }
    return mirrors;
}

}  // namespace gridsim

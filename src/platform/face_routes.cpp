#include <mpi.h>

#include "parallel/mpi_check.hpp"
#include "platform/backend_select.hpp"

namespace gridsim {

template <class T>
FaceRoutes make_face_routes(const CartTopology& topo, const BackendChoice<T>& choice) {
    FaceRoutes routes;
    routes.sums = choice.transport;
    routes.face.fill(choice.transport);
    unsigned used = 0;
    const int me = topo.rank();
    for (int face = 0; face < 6; ++face) {
        const int peer = topo.neighbour(face);
        if (peer == MPI_PROC_NULL || peer == me) continue;
        if (choice.routes_per_face)
            routes.face[face] = route_between(choice.gpus, me, peer, choice.facts);
        used |= 1u << static_cast<unsigned>(routes.face[face]);
    }
    GRIDSIM_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &used, 1, MPI_UNSIGNED, MPI_BOR, topo.comm()));
    for (int i = kTransportCount - 1; i >= 0; --i) {  // the most direct first
        const TransportKind k = kTransportRows[i].kind;
        if ((used & (1u << static_cast<unsigned>(k))) != 0) routes.kinds.push_back(k);
    }
    if (routes.kinds.empty()) routes.kinds.push_back(choice.transport);  // no face leaves a rank
    return routes;
}

template FaceRoutes make_face_routes<float>(const CartTopology&, const BackendChoice<float>&);
template FaceRoutes make_face_routes<double>(const CartTopology&, const BackendChoice<double>&);

}  // namespace gridsim

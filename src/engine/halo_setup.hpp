// What a halo depth (sweeps between exchanges) sets up on a run's fields: the exchange of that
// many layers per point of the stencil's radius (and the reflection of the layers beyond fixed
// faces that a wider star reads), the halo slabs a sweep also updates while layers remain, and
// the split of the exchanging pass (its shell as deep as the halo it sends).
#pragma once

#include <memory>
#include <vector>

#include "engine/field_pair.hpp"
#include "engine/sweep_plan.hpp"
#include "parallel/cart_topology.hpp"
#include "parallel/halo_exchange.hpp"
#include "platform/backend_select.hpp"

namespace gridsim {

template <class T>
struct HaloSetup {
    int depth = 1;
    std::unique_ptr<HaloExchange<T>> halo;
    std::vector<std::vector<Box>> rings;  // [extend]: the halo slabs a sweep also updates, extend
                                          // x radius layers deep
    // The split of a pass (no sums): its shell only as deep as the halo, the points a pass of up
    // to `depth` levels reads a halo for. Launched on its own ahead of the exchange, a thinner
    // shell costs less (docs/tuning.md, "Pass shell").
    SweepRegions pass_regions;
    // Whether this rank's exchanging passes may be pipelined (ExchangePass::pipelined): the
    // backend runs pipelined passes, the exchange of the fields pipelines
    // (HaloExchange::pipelines), and the block holds two passes' halos along z, so that no chunk
    // of a pass reads both z halos.
    bool pipelines = false;
};

// Collective (the transport connects the neighbours).
template <class T>
HaloSetup<T> make_halo_setup(const CartTopology& topo, const BackendChoice<T>& choice,
                             FieldPair<T>& fields, const SweepGeometry& geo, int depth) {
    const Subdomain& sub = topo.subdomain();
    HaloSetup<T> s;
    s.depth = depth;
    const FaceRoutes routes = make_face_routes(topo, choice);
    IpcReach ipc = choice.ipc;
    // An ipc transport sums over the ranks only where the run's sums go on the device.
    ipc.sums = transport_row(routes.sums).sums;
    s.halo = std::make_unique<HaloExchange<T>>(
        topo, geo.halo_layers(depth), *choice.backend, choice.transport, ipc,
        std::vector<FieldView<T>>{fields.field(0), fields.field(1)}, &routes);
    s.halo->reflect_fixed_faces(sub, geo.radius - 1);
    for (int extend = 0; extend < depth; ++extend)
        s.rings.push_back(peel(extend_into_halos(geo.updated, sub, geo.halo_layers(extend)),
                               geo.updated, sub.dims));
    s.pass_regions = split_for_overlap(geo.updated, sub, geo.halo_layers(depth), geo.radius > 1);
    TimeBlocking<T>* tb = choice.backend->time_blocking();
    s.pipelines = depth > 1 && tb != nullptr && tb->pipelined(sub.dims, geo.kind) != nullptr &&
                  s.halo->pipelines(fields.field(0), sub.dims) &&
                  sub.size[sub.dims - 1] >= 2 * depth;
    return s;
}

}  // namespace gridsim

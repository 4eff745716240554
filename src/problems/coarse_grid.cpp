#include "problems/coarse_grid.hpp"

#include "platform/backend_select.hpp"

namespace gridsim {

template <class T>
CoarseGrid<T>::CoarseGrid(Simulation<T>& sim, const MgLevel& level, const StencilParams<T>& op)
    : be_(sim.backend_ops()),
      timer_(sim.timer()),
      topo_(level.gathered ? CartTopology::alone(level.sub) : sim.topology().with_block(level.sub)),
      ext_(FieldExtents::make(level.dims, level.sub.size, 1, be_.row_alignment())),
      updated_(updated_box(level.sub)),
      op_(op) {
    if (level.gathered) {  // its own faces alone: wrapped in place, no transport
        halo_ = std::make_unique<HaloExchange<T>>(topo_, 1, be_);
        return;
    }
    const BackendChoice<T>& choice = sim.backend();
    const FaceRoutes routes = make_face_routes(topo_, choice);
    IpcReach ipc = choice.ipc;
    ipc.sums = false;  // no sums over the ranks on a level
    halo_ = std::make_unique<HaloExchange<T>>(topo_, 1, be_, choice.transport, ipc,
                                              std::vector<FieldView<T>>{}, &routes);
}

template <class T>
void CoarseGrid<T>::apply(FieldView<T> in, FieldView<T> out) {
    be_.join_lanes();
    halo_->exchange(in);
    auto t = timer_.on_lane(Phase::interior, Lane::boundary);
    be_.apply(op_, in, out, updated_, Lane::boundary, StencilSum::none);
}

template class CoarseGrid<float>;
template class CoarseGrid<double>;

}  // namespace gridsim

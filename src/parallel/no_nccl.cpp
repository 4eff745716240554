// A build without NCCL: the transport does not exist, and its refusal says so, so that choosing it
// is refused before any halo exchange is built (platform/backend_select.cpp): reaching the
// factory is a logic error. The ipc transport (built with the CUDA backend) then sums over the
// ranks by its own mailboxes, so the selection offers it only where every rank reaches every
// other.
#include <stdexcept>

#include "parallel/nccl_transport.hpp"

namespace gridsim {

bool nccl_built() { return false; }

std::string nccl_version() { return {}; }

template <class T>
std::unique_ptr<Transport<T>> make_nccl_transport(const TransportArgs<T>& /*args*/) {
    throw std::logic_error("nccl transport requested from a build without NCCL");
}
template std::unique_ptr<Transport<float>> make_nccl_transport(const TransportArgs<float>&);
template std::unique_ptr<Transport<double>> make_nccl_transport(const TransportArgs<double>&);

std::string nccl_refusal(const RankGpuFacts& /*facts*/) {
    return "this build has no NCCL; use \"staged\" or \"auto\"";
}

}  // namespace gridsim

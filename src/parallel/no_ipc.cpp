// A build without the CUDA backend: there is no device memory to store into, so the transport
// does not exist and its refusal says so (the CPU backend refuses every transport that moves
// device memory before that): reaching the factory is a logic error.
#include <stdexcept>

#include "parallel/transport.hpp"

namespace gridsim {

template <class T>
std::unique_ptr<Transport<T>> make_ipc_transport(const TransportArgs<T>& /*args*/) {
    throw std::logic_error("ipc transport requested from a build without CUDA");
}
template std::unique_ptr<Transport<float>> make_ipc_transport(const TransportArgs<float>&);
template std::unique_ptr<Transport<double>> make_ipc_transport(const TransportArgs<double>&);

std::string ipc_refusal(const RankGpuFacts& /*facts*/) {
    return "this build has no CUDA backend; use \"staged\"";
}

}  // namespace gridsim

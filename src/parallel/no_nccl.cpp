// A build without NCCL: the transport does not exist, and choosing it is refused before any
// halo exchange is built (platform/backend_select.cpp), so reaching this is a logic error.
#include <stdexcept>

#include "parallel/nccl_transport.hpp"

namespace gridsim {

bool nccl_built() { return false; }

std::string nccl_version() { return {}; }

template <class T>
std::unique_ptr<Transport<T>> make_nccl_transport(MPI_Comm /*comm*/, Backend<T>& /*backend*/,
                                                  const std::vector<HaloFace<T>>& /*faces*/) {
    throw std::logic_error("nccl transport requested from a build without NCCL");
}

template <class T>
std::unique_ptr<Transport<T>> make_ipc_transport(MPI_Comm /*comm*/, Backend<T>& /*backend*/,
                                                 const std::vector<HaloFace<T>>& /*faces*/,
                                                 bool /*everywhere*/,
                                                 const std::vector<FieldView<T>>& /*fields*/) {
    throw std::logic_error("ipc transport requested from a build without NCCL");
}

template std::unique_ptr<Transport<float>> make_ipc_transport<float>(
    MPI_Comm, Backend<float>&, const std::vector<HaloFace<float>>&, bool,
    const std::vector<FieldView<float>>&);
template std::unique_ptr<Transport<double>> make_ipc_transport<double>(
    MPI_Comm, Backend<double>&, const std::vector<HaloFace<double>>&, bool,
    const std::vector<FieldView<double>>&);
template std::unique_ptr<Transport<float>> make_nccl_transport<float>(
    MPI_Comm, Backend<float>&, const std::vector<HaloFace<float>>&);
template std::unique_ptr<Transport<double>> make_nccl_transport<double>(
    MPI_Comm, Backend<double>&, const std::vector<HaloFace<double>>&);

}  // namespace gridsim

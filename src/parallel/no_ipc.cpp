// A build without the CUDA backend: there is no device memory to store into, and the CPU
// backend refuses every transport that moves device memory (platform/backend_select.cpp), so
// reaching this is a logic error.
#include <stdexcept>

#include "parallel/transport.hpp"

namespace gridsim {

template <class T>
std::unique_ptr<Transport<T>> make_ipc_transport(MPI_Comm /*comm*/, Backend<T>& /*backend*/,
                                                 const std::vector<HaloFace<T>>& /*faces*/,
                                                 IpcReach /*reach*/,
                                                 const std::vector<FieldView<T>>& /*fields*/) {
    throw std::logic_error("ipc transport requested from a build without CUDA");
}

template std::unique_ptr<Transport<float>> make_ipc_transport<float>(
    MPI_Comm, Backend<float>&, const std::vector<HaloFace<float>>&, IpcReach,
    const std::vector<FieldView<float>>&);
template std::unique_ptr<Transport<double>> make_ipc_transport<double>(
    MPI_Comm, Backend<double>&, const std::vector<HaloFace<double>>&, IpcReach,
    const std::vector<FieldView<double>>&);

}  // namespace gridsim

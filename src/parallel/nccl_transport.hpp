// The `nccl` halo transport: ncclSend/ncclRecv between device buffers, grouped, enqueued on the
// boundary lane's stream, so halos move GPU to GPU (NVLink within a node) and the host never
// waits for them. The communicator is bootstrapped over MPI. Built when NCCL is found (the one
// file outside kernels/cuda/ that includes a CUDA header: NCCL takes a cudaStream_t).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "parallel/transport.hpp"

namespace gridsim {

// Collective over `comm` (ncclCommInitRank). Needs one GPU per rank: NCCL refuses two ranks
// on one device.
template <class T>
std::unique_ptr<Transport<T>> make_nccl_transport(MPI_Comm comm, Backend<T>& backend,
                                                  const std::vector<HaloFace<T>>& faces);

// Whether this build has the NCCL transport, and the NCCL version ("" without it). A build
// without NCCL links parallel/no_nccl.cpp, whose make_nccl_transport throws (the backend choice
// refuses `nccl` before that).
bool nccl_built();
std::string nccl_version();

}  // namespace gridsim

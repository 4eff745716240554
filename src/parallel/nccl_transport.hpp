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

// Whether this build has the NCCL transport, and the NCCL version ("" without it). A build
// without NCCL links parallel/no_nccl.cpp, whose make_nccl_transport throws (nccl_refusal refuses
// `nccl` before that). The factory (collective over the communicator: ncclCommInitRank) needs one
// GPU per rank: NCCL refuses two ranks on one device.
bool nccl_built();
std::string nccl_version();

}  // namespace gridsim

// Whether halo faces may move by direct stores into the neighbour's GPU memory (CUDA IPC: the
// boundary lane writes its faces straight into the neighbour's receive buffers over NVLink or
// PCIe, parallel.transport = "ipc"). Decided from a table of every rank's node, GPU and the GPUs
// that GPU can reach, gathered once; the decision itself is a pure function of that table, so
// each rank decides alike for both ends of a face, and tests can state any machine.
#pragma once

#include <array>
#include <string>
#include <vector>

#include <mpi.h>

#include "config/config.hpp"

namespace gridsim {

// One rank as the route decision sees it.
struct RankGpu {
    std::string node;    // host name (MPI_Get_processor_name)
    std::string bus_id;  // PCI bus id of the GPU the rank drives ("" : none)
    // Bus ids of the other GPUs this rank's process sees and its GPU can load from and store to
    // (cudaDeviceCanAccessPeer). A GPU the launcher hid from the process (per-task binding,
    // CUDA_VISIBLE_DEVICES) is not in it: its memory cannot be opened there.
    std::vector<std::string> reaches;
};

// A RankGpu as text and back (the table is gathered as text).
std::string encode(const RankGpu& r);
RankGpu decode_rank_gpu(const std::string& line);

// "" when ranks `a` and `b` (indices into `ranks`) can store into each other's GPU memory, else
// why not, naming the ranks, and the nodes or GPUs at fault. Two ranks on one GPU can (without
// MPS the GPU time-slices between their processes, and the handshake waits for each turn).
std::string ipc_obstacle(const std::vector<RankGpu>& ranks, int a, int b);

// "" when every pair of ranks on one node can store into each other's GPU memory, else the first
// pair's reason (per-task GPU binding hides the other GPUs of a node from each rank): what a run
// loses inside its nodes, where ranks on different nodes cannot reach each other anyway.
std::string same_node_obstacle(const std::vector<RankGpu>& ranks);

// "" when every rank can store into every other rank's GPU memory (then the sums over the ranks
// go by IPC too, and no NCCL communicator is needed), else the first pair's reason.
std::string ipc_everywhere(const std::vector<RankGpu>& ranks);

// How the ipc transport's puts go, the same on every rank.
struct IpcReach {
    // Every rank stores into every other's GPU (ipc_everywhere): the sums over the ranks go by
    // IPC as well, and no NCCL communicator is made.
    bool everywhere = false;
    // Ranks share GPUs (parallel.share_gpus, as the device map assigned them): every put is a
    // copy engine's, between a meeting and a telling kernel of one warp each; with a GPU per rank
    // a put is one kernel whose blocks wait for the peer (IpcTransport::launch).
    bool shared_gpus = false;
    // Whether the transport sums over the ranks (by mailboxes where `everywhere`, else through
    // NCCL); a transport that moves only some faces of a route per neighbour does not.
    bool sums = true;
};

// "" when rank `me` reaches the rank across each of its faces, else the first face's reason.
// `peers[face]`: the rank across it, or -1 where no other rank is (no neighbour, or this rank
// itself).
std::string neighbour_obstacle(const std::vector<RankGpu>& ranks, int me,
                               const std::array<int, 6>& peers);

// What the GPU runs found out about their ranks, the same on every rank.
struct RankGpuFacts {
    int ranks = 1;
    bool own_gpus = false;       // no two ranks of a node drive the same GPU
    bool shared_by_mps = false;  // every rank's GPU runs its contexts through MPS
    bool nccl_built = false;
    bool cuda_aware = false;  // MPI takes device buffers (MPIX_Query_cuda_support)
    // "" where every rank stores into every other's GPU, else why not (ipc_everywhere).
    std::string ipc_gap = "the ranks' GPUs were not asked";

    [[nodiscard]] bool reach_everywhere() const { return ipc_gap.empty(); }
};

// The transport parallel.transport = "auto" takes for a GPU run where every face takes one, and
// where the sums over the ranks go: ipc where every rank reaches every other and the ranks'
// kernels run side by side (a GPU each, or GPUs shared through MPS); else NCCL where every rank
// has a GPU of its own; else CUDA-aware MPI where MPI has it; else staged. One rank has no peer:
// staged.
// Without MPS, ranks sharing a GPU take turns on it, and a handshake on the device waits for
// the peer's turn, where MPI messages between the hosts do not (docs/tuning.md, "Transport").
TransportKind automatic_transport(const RankGpuFacts& f);

// The route of a face between ranks `a` and `b` of a GPU run under parallel.transport = "auto":
// the best both ends share, decided alike at both ends: ipc where each GPU is reachable from the
// other (one node, peer access) and the ranks' kernels run side by side; else NCCL where every
// rank has a GPU of its own and the build has NCCL; else CUDA-aware MPI where MPI has it; else
// staged MPI.
TransportKind route_between(const std::vector<RankGpu>& ranks, int a, int b, const RankGpuFacts& f);

// Every rank's RankGpu, in rank order, on every rank of `comm` (collective).
std::vector<RankGpu> gather_rank_gpus(MPI_Comm comm, const RankGpu& mine);

}  // namespace gridsim

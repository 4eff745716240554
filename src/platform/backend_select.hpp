// Chooses and creates the backend a deck asks for: `cpu`, `cuda` (one GPU per rank, chosen from
// the devices every rank of the node sees, whatever the launcher made visible), or `auto` (CUDA
// when this build has it and every rank has a GPU of its own, else CPU, saying why). The device
// backend is reached only through DeviceRuntime (kernels/device_runtime.hpp). Collective over
// `comm`.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <mpi.h>

#include "config/config.hpp"
#include "kernels/backend.hpp"
#include "kernels/device_runtime.hpp"
#include "parallel/cart_topology.hpp"
#include "parallel/node_map.hpp"
#include "parallel/peer_routes.hpp"
#include "parallel/transport.hpp"
#include "platform/placement.hpp"

namespace gridsim {

template <class T>
struct BackendChoice {
    std::unique_ptr<Backend<T>> backend;
    DeviceInfo device;                                // device = -1 on the CPU backend
    TransportKind transport = TransportKind::staged;  // resolved: staged, cuda_aware, nccl, ipc
    // Every rank's node and GPU, for the ipc routes (parallel/peer_routes.hpp); empty with one
    // rank, or where neither "ipc" nor "auto" was asked for.
    std::vector<RankGpu> gpus;
    // How the ipc transport's puts go (on the CUDA backend).
    IpcReach ipc;
    // What decides each face's route (a GPU run), and whether the faces take a route each
    // (parallel.transport "auto" on several ranks of GPUs; make_face_routes).
    RankGpuFacts facts;
    bool routes_per_face = false;
    // Why `auto` chose what it chose, and how ranks that share GPUs run on them ("" otherwise).
    std::string note;
    // Why ranks of one node do not store into each other's GPU memory where ipc was not taken
    // ("" otherwise): the header says the fast route is lost and how to keep it.
    std::string transport_note;
    RankPlacement placement;  // parallel.bind, applied before the backend allocated anything
    NodeMap nodes;            // the ranks on each node (parallel/node_map.hpp)
};

// Throws ConfigError (naming parallel.backend, parallel.transport or parallel.bind) for a choice
// this build, these devices, this MPI or this machine cannot honour.
template <class T>
BackendChoice<T> choose_backend(const Config& cfg, MPI_Comm comm);

// Each face's route for this rank of `topo` (route_between; the run's transport for every face
// where `routes_per_face` is false), the kinds the ranks use, agreed, and where the sums go (the
// run's transport). Collective over topo.comm().
template <class T>
FaceRoutes make_face_routes(const CartTopology& topo, const BackendChoice<T>& choice);

// Whether choose_backend takes the CUDA backend for `cfg` on the ranks of `comm`, without making
// a device current or refusing anything. Collective over `comm` where parallel.backend is auto.
bool runs_on_gpus(const Config& cfg, MPI_Comm comm);

// Whether this build has the CUDA backend, how many devices this process sees, and the
// version of the CUDA runtime linked in ("" without CUDA).
bool cuda_backend_built();
int cuda_devices_visible();
std::string cuda_runtime_version();

// The halo transports this build and this MPI offer, each with where it applies, for
// `gridsim info`: staged always; cuda-aware where MPI says so; ipc with the CUDA backend (across
// every pair of ranks without NCCL, whose sums it needs otherwise); nccl where NCCL was found.
std::string transports_offered();
// What a GPU run of this build lacks among the transports ("" where it lacks none): the header
// says it beside the transport taken.
std::string transports_missing();

// The device this rank drives (device = -1: none) and whether another rank of its node drives
// the same physical GPU, decided from the PCI bus ids every rank of the node sees
// (platform/device_map.hpp), without selecting it; whether that GPU runs its contexts through
// MPS. Collective over `comm`.
struct DevicePlan {
    DeviceInfo info;
    bool shared = false;
    bool mps = false;
};
DevicePlan plan_device(MPI_Comm comm);

}  // namespace gridsim

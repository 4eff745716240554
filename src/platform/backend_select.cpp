#include "platform/backend_select.hpp"

#include <fmt/format.h>

#include <iterator>
#include <sstream>

#include "kernels/device_code.hpp"
#include "parallel/collectives.hpp"
#include "parallel/gather.hpp"
#include "parallel/mpi_check.hpp"
#include "parallel/mpi_session.hpp"
#include "parallel/nccl_transport.hpp"
#include "parallel/node_map.hpp"
#include "parallel/peer_routes.hpp"
#include "parallel/together.hpp"
#include "parallel/transport.hpp"
#include "platform/device_map.hpp"

namespace gridsim {

bool cuda_backend_built() { return device_runtime() != nullptr; }

int cuda_devices_visible() {
    return cuda_backend_built() ? device_runtime()->visible_devices() : 0;
}

std::string cuda_runtime_version() {
    return cuda_backend_built() ? device_runtime()->version() : std::string();
}

std::string transports_offered() {
    // Each row whose refusal passes a run at its best: GPUs of their own that reach each other.
    RankGpuFacts best;
    best.ranks = 2;
    best.own_gpus = true;
    best.ipc_gap.clear();
    best.nccl_built = nccl_built();
    best.cuda_aware = mpi_is_cuda_aware();
    std::string out;
    for (int i = kTransportCount - 1; i >= 0; --i) {
        const TransportRow& row = kTransportRows[i];
        if (row.memory == TransportMemory::device && !cuda_backend_built()) continue;
        if (!transport_refusal(row.kind, best).empty()) continue;
        out += fmt::format("{}{} ({})", out.empty() ? "" : ", ", row.name, row.meaning);
    }
    return out;
}

std::string transports_missing() {
    if (!cuda_backend_built() || nccl_built()) return {};
    return "this build has no NCCL: ipc only where every rank's GPU reaches every other's, else "
           "staged";
}

namespace {

// The identities of the devices this process sees, in its visible order.
std::vector<std::string> visible_device_ids() {
    std::vector<std::string> ids;
    const int visible = cuda_devices_visible();
    for (int d = 0; d < visible; ++d) ids.push_back(device_runtime()->describe(d).pci_bus_id);
    return ids;
}

// Every node-local rank's visible device list, in local-rank order, on every rank of the node.
std::vector<std::vector<std::string>> node_device_lists(MPI_Comm node) {
    std::string mine;
    for (const std::string& id : visible_device_ids()) mine += id + ' ';
    std::vector<std::vector<std::string>> lists;
    for (const std::string& line : gather_strings(node, mine, true)) {
        std::istringstream words(line);
        lists.emplace_back(std::istream_iterator<std::string>(words),
                           std::istream_iterator<std::string>());
    }
    return lists;
}

}  // namespace

DevicePlan plan_device(MPI_Comm comm) {
    const Communicator owned = node_comm(comm);
    const std::vector<DeviceAssignment> map = assign_devices(node_device_lists(owned.get()));
    DevicePlan plan;
    const DeviceAssignment& mine = map[owned.rank()];
    if (mine.device >= 0) {
        plan.info = device_runtime()->describe(mine.device);
        plan.mps = device_runtime()->shared_by_mps(mine.device);
    }
    plan.info.local_rank = owned.rank();
    plan.info.local_ranks = owned.size();
    plan.info.visible_devices = cuda_devices_visible();
    plan.shared = mine.shared;
    return plan;
}

namespace {

// 2: every rank has a GPU of its own, 1: every rank has one but some share a physical GPU,
// 0: some rank sees none (or no CUDA in this build). Collective over `comm`.
int device_coverage(MPI_Comm comm, const DevicePlan& plan) {
    const int mine = plan.info.device < 0 ? 0 : (plan.shared ? 1 : 2);
    return allreduce(comm, mine, Reduce::min);
}

// Whether every rank's GPU runs its contexts through MPS (false where some rank has none).
// Collective over `comm`.
bool every_gpu_under_mps(MPI_Comm comm, const DevicePlan& plan) {
    const int mine = plan.info.device >= 0 && plan.mps ? 1 : 0;
    return allreduce(comm, mine, Reduce::min) == 1;
}

// Whether `cfg` takes the CUDA backend where `coverage` (device_coverage) holds.
bool takes_cuda(const Config& cfg, int coverage) {
    if (cfg.backend != BackendKind::automatic) return cfg.backend == BackendKind::cuda;
    return coverage == 2 || (coverage == 1 && cfg.share_gpus);
}

// How ranks that share GPUs run on them, for the run header.
std::string sharing_note(bool mps) {
    return mps ? "ranks share GPUs (parallel.share_gpus = true) through MPS, side by side"
               : "ranks share GPUs (parallel.share_gpus = true) without MPS: their kernels take "
                 "turns on each GPU; start MPS (nvidia-cuda-mps-control -d) to run them side by "
                 "side";
}

// Makes the planned device current. Throws ConfigError (prefixed with `where`) when some rank has
// none, or ranks would share a GPU and `allow_sharing` is false; `coverage` is collective, so
// every rank throws the same error or none does.
DeviceInfo select_device(const DevicePlan& plan, int coverage, bool allow_sharing,
                         const std::string& where) {
    if (coverage == 0) throw ConfigError(where + "a rank sees no CUDA device");
    if (coverage == 1 && !allow_sharing) {
        throw ConfigError(
            where + fmt::format("ranks of a node would share a GPU (this node: {} ranks, this rank "
                                "sees {} GPU(s)); use one rank per GPU or set "
                                "parallel.share_gpus = true",
                                plan.info.local_ranks, plan.info.visible_devices));
    }
    device_runtime()->select(plan.info.device);
    return plan.info;
}

// The CPU backend's transport: the deck's where it hands over host memory ("auto": staged).
TransportKind cpu_transport(const Config& cfg) {
    if (moves_device_memory(cfg.transport)) {
        throw ConfigError(
            cfg.where("parallel.transport") + "\"" + to_string(cfg.transport) +
            "\" moves device memory and needs the CUDA backend; the CPU backend uses \"staged\"");
    }
    return cfg.transport == TransportKind::automatic ? TransportKind::staged : cfg.transport;
}

// What decides the routes of a GPU run, the same on every rank.
RankGpuFacts gpu_facts(bool own_gpus, bool mps, MPI_Comm comm, const std::string& ipc_gap) {
    RankGpuFacts facts;
    facts.ranks = comm_size(comm);
    facts.own_gpus = own_gpus;
    facts.shared_by_mps = mps;
    facts.ipc_gap = ipc_gap;
    facts.nccl_built = nccl_built();
    facts.cuda_aware = mpi_is_cuda_aware();
    return facts;
}

// The GPU transport: the deck's, unless its row's refusal (parallel/transport_table.hpp) says this
// run cannot take it; `auto`: automatic_transport (parallel/peer_routes.hpp; docs/tuning.md,
// "Transport"); halos then move GPU to GPU without the host wherever the ranks' kernels run side
// by side.
TransportKind gpu_transport(const Config& cfg, const RankGpuFacts& facts) {
    if (cfg.transport == TransportKind::automatic) return automatic_transport(facts);
    if (const std::string why = transport_refusal(cfg.transport, facts); !why.empty()) {
        throw ConfigError(cfg.where("parallel.transport") + "\"" + to_string(cfg.transport) +
                          "\": " + why);
    }
    return cfg.transport;
}

// Ends every rank with one line (exit 1) where some rank's GPU has no code in this build, before
// any collective that such a rank could leave others waiting in. Collective over `comm`.
void require_device_code(MPI_Comm comm, const DeviceInfo& device) {
    const std::string mine =
        device.device < 0 ? std::string()
                          : missing_device_code(device_runtime()->architectures(), device.device,
                                                device.name, device.cc_major, device.cc_minor);
    const std::string agreed = agree_on_error(comm, mine, true);
    if (!agreed.empty()) fail_together(comm, agreed);
}

// This rank's node, GPU and the GPUs it reaches, for the ipc routes.
RankGpu this_rank_gpu(const DeviceInfo& device, const std::string& node) {
    RankGpu mine;
    mine.node = node;
    mine.bus_id = device.pci_bus_id;
    if (device.device >= 0) mine.reaches = device_runtime()->reachable_peers(device.device);
    return mine;
}

// Reads the placement back with a host buffer allocated by the backend the way its staging
// buffers are (pinned on the CUDA backend), 4 MiB so that it spans many pages.
template <class T>
RankPlacement probe_placement(const Topology& topo, const BindDecision& bound,
                              const BackendChoice<T>& choice, const std::string& node) {
    const std::size_t n = (std::size_t{4} << 20) / sizeof(T);
    const Buffer<T> probe = choice.backend->allocate_host(n);
    const std::string gpu = choice.device.device >= 0
                                ? choice.device.name + " (" + choice.device.pci_bus_id + ")"
                                : std::string();
    return read_placement(topo, bound, node, gpu, probe.data(), n * sizeof(T));
}

}  // namespace

template <class T>
BackendChoice<T> choose_backend(const Config& cfg, MPI_Comm comm) {
    BackendChoice<T> choice;
    if (cfg.backend == BackendKind::cuda && !cuda_backend_built()) {
        throw ConfigError(
            cfg.where("parallel.backend") +
            "\"cuda\" is not available: this build has no CUDA backend (configure with "
            "-DGRIDSIM_CUDA=ON where nvcc is installed); use \"cpu\" or \"auto\"");
    }
    choice.nodes = gather_node_map(comm);
    const std::string node_name = choice.nodes.names[choice.nodes.node_of[comm_rank(comm)]];
    const DevicePlan plan = plan_device(comm);
    const int coverage = device_coverage(comm, plan);
    const bool mps = every_gpu_under_mps(comm, plan);
    const bool cuda = takes_cuda(cfg, coverage);
    if (cfg.backend == BackendKind::automatic) {
        choice.note =
            cuda ? (coverage == 2 ? "auto: every rank has a CUDA device of its own"
                                  : "auto: " + sharing_note(mps))
            : coverage == 1
                ? "auto: ranks of a node would share a GPU (parallel.share_gpus = true "
                  "shares them), using the CPU"
                : (cuda_backend_built() ? "auto: not every rank sees a CUDA device, using the CPU"
                                        : "auto: built without CUDA, using the CPU");
    }
    // Bound before the device is made current and before any buffer exists, so the CUDA
    // context's host allocations and every staging buffer land on the GPU's NUMA node.
    const Topology topo = Topology::system();
    const BindDecision bound =
        bind_this_rank(cfg, comm, topo, cuda ? plan.info.pci_bus_id : std::string(),
                       plan.info.local_rank, plan.info.local_ranks);
    if (cuda) {
        require_device_code(comm, plan.info);
        if (comm_size(comm) > 1 &&
            (cfg.transport == TransportKind::ipc || cfg.transport == TransportKind::automatic)) {
            choice.gpus = gather_rank_gpus(comm, this_rank_gpu(plan.info, node_name));
        }
        const std::string ipc_gap = ipc_everywhere(choice.gpus);
        choice.facts = gpu_facts(coverage == 2, mps, comm, ipc_gap);
        choice.transport = gpu_transport(cfg, choice.facts);
        if (coverage == 1 && choice.note.empty()) choice.note = sharing_note(mps);
        choice.ipc = {ipc_gap.empty(), coverage != 2};
        choice.routes_per_face = cfg.transport == TransportKind::automatic && !choice.gpus.empty();
        if (!choice.gpus.empty()) {
            const std::string lost = same_node_obstacle(choice.gpus);
            if (!lost.empty()) {
                choice.transport_note =
                    "ipc lost inside a node: " + lost +
                    "; give every rank all the GPUs of its node (srun --gpus-per-node without "
                    "--gpus-per-task; docs/running.md, \"On a cluster\") to keep it";
            }
        }
        choice.device =
            select_device(plan, coverage, cfg.share_gpus, cfg.where("parallel.backend"));
        LaunchConfig launch;
        launch.kernel = cfg.kernel;
        launch.block_x = cfg.block[0];
        launch.block_y = cfg.block[1];
        launch.points = cfg.rows;
        choice.backend = make_device_backend<T>(*device_runtime(), launch);
    } else {
        choice.transport = cpu_transport(cfg);
        choice.backend = make_cpu_backend<T>();
    }
    choice.placement = probe_placement(topo, bound, choice, node_name);
    return choice;
}

bool runs_on_gpus(const Config& cfg, MPI_Comm comm) {
    // Only `auto` looks at the devices (and only it needs the collective).
    const bool automatic = cfg.backend == BackendKind::automatic;
    return takes_cuda(cfg, automatic ? device_coverage(comm, plan_device(comm)) : 0);
}

template BackendChoice<float> choose_backend<float>(const Config&, MPI_Comm);
template BackendChoice<double> choose_backend<double>(const Config&, MPI_Comm);

}  // namespace gridsim

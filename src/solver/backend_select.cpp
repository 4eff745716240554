#include "solver/backend_select.hpp"

#include <fmt/format.h>

#include "comm/mpi_check.hpp"
#include "comm/mpi_session.hpp"
#include "comm/nccl_transport.hpp"

namespace gridsim {

bool cuda_backend_built() { return device_runtime() != nullptr; }

int cuda_devices_visible() {
    return cuda_backend_built() ? device_runtime()->visible_devices() : 0;
}

std::string cuda_runtime_version() {
    return cuda_backend_built() ? device_runtime()->version() : std::string();
}

DeviceInfo describe_device(int local_rank, int local_ranks) {
    DeviceInfo info;
    const int visible = cuda_devices_visible();
    if (visible > 0) info = device_runtime()->describe(local_rank % visible);
    info.local_rank = local_rank;
    info.local_ranks = local_ranks;
    info.visible_devices = visible;
    return info;
}

namespace {

// 2: every rank has a GPU of its own, 1: every rank sees one but some node runs more ranks
// than GPUs (they would share), 0: some rank sees none (or no CUDA in this build).
int device_coverage(MPI_Comm comm) {
    int mine = 0;
    const int visible = cuda_devices_visible();
    if (visible > 0) {
        int local_rank = 0;
        int local_ranks = 1;
        local_rank_and_size(comm, local_rank, local_ranks);
        mine = local_ranks > visible ? 1 : 2;
    }
    int all = 0;
    GRIDSIM_MPI_CHECK(MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, comm));
    return all;
}

// Selects device = node-local rank and makes it current. Throws ConfigError (prefixed with
// `where`) when the node has more ranks than devices and `allow_sharing` is false; then ranks
// share devices round-robin. Collective over `comm`: every rank throws the same error or none.
DeviceInfo select_device(MPI_Comm comm, bool allow_sharing, const std::string& where) {
    int local_rank = 0;
    int local_ranks = 1;
    local_rank_and_size(comm, local_rank, local_ranks);
    const int visible = cuda_devices_visible();
    int too_many = local_ranks > visible ? 1 : 0;
    int any = 0;
    GRIDSIM_MPI_CHECK(MPI_Allreduce(&too_many, &any, 1, MPI_INT, MPI_MAX, comm));
    int fewest = 0;
    GRIDSIM_MPI_CHECK(MPI_Allreduce(&visible, &fewest, 1, MPI_INT, MPI_MIN, comm));
    if (fewest == 0) throw ConfigError(where + "a rank sees no CUDA device");
    if (any != 0 && !allow_sharing) {
        throw ConfigError(
            where +
            fmt::format("a node runs more ranks than it has GPUs ({} ranks, {} GPUs); use one "
                        "rank per GPU or set parallel.share_gpus = true",
                        local_ranks, visible));
    }
    const DeviceInfo info = describe_device(local_rank, local_ranks);
    device_runtime()->select(info.device);
    return info;
}

void check_cpu_transport(const Config& cfg) {
    if (cfg.transport == TransportKind::cuda_aware || cfg.transport == TransportKind::nccl) {
        throw ConfigError(
            cfg.where("parallel.transport") + "\"" + to_string(cfg.transport) +
            "\" moves device memory and needs the CUDA backend; the CPU backend uses \"staged\"");
    }
}

// The GPU transport: staged always; cuda-aware where MPI says so; nccl where built and every
// rank has a GPU of its own (NCCL refuses two ranks on one device). `auto` takes nccl when it
// can and there is more than one rank: halos then move GPU to GPU without the host.
TransportKind gpu_transport(const Config& cfg, bool own_gpus, MPI_Comm comm) {
    switch (cfg.transport) {
        case TransportKind::staged:
            return TransportKind::staged;
        case TransportKind::cuda_aware:
            if (!mpi_is_cuda_aware()) {
                throw ConfigError(
                    cfg.where("parallel.transport") +
                    "\"cuda-aware\" needs a CUDA-aware MPI, and this one says it is not "
                    "(MPIX_Query_cuda_support); use \"staged\" or \"nccl\"");
            }
            return TransportKind::cuda_aware;
        case TransportKind::nccl:
            if (!nccl_built()) {
                throw ConfigError(cfg.where("parallel.transport") +
                                  "\"nccl\": this build has no NCCL; use \"staged\" or \"auto\"");
            }
            if (!own_gpus) {
                throw ConfigError(
                    cfg.where("parallel.transport") +
                    "\"nccl\" needs one GPU per rank (ranks share GPUs here); use \"staged\"");
            }
            return TransportKind::nccl;
        case TransportKind::automatic:
            break;
    }
    // One rank has no peer: every halo is a copy in device memory, so no NCCL communicator.
    return nccl_built() && own_gpus && comm_size(comm) > 1 ? TransportKind::nccl
                                                           : TransportKind::staged;
}

}  // namespace

template <class T>
BackendChoice<T> choose_backend(const Config& cfg, MPI_Comm comm) {
    BackendChoice<T> choice;
    bool cuda = cfg.backend == BackendKind::cuda;
    if (cuda && !cuda_backend_built()) {
        throw ConfigError(
            cfg.where("parallel.backend") +
            "\"cuda\" is not available: this build has no CUDA backend (configure with "
            "-DGRIDSIM_CUDA=ON where nvcc is installed); use \"cpu\" or \"auto\"");
    }
    const int coverage = device_coverage(comm);
    if (cfg.backend == BackendKind::automatic) {
        cuda = coverage == 2 || (coverage == 1 && cfg.share_gpus);
        choice.note =
            cuda ? "auto: every rank has a CUDA device"
            : coverage == 1
                ? "auto: a node runs more ranks than it has GPUs (parallel.share_gpus = true "
                  "shares them), using the CPU"
                : (cuda_backend_built() ? "auto: not every rank sees a CUDA device, using the CPU"
                                        : "auto: built without CUDA, using the CPU");
    }
    if (cuda) {
        choice.transport = gpu_transport(cfg, coverage == 2, comm);
        choice.device = select_device(comm, cfg.share_gpus, cfg.where("parallel.backend"));
        LaunchConfig launch;
        launch.kernel = cfg.kernel;
        launch.block_x = cfg.block[0];
        launch.block_y = cfg.block[1];
        launch.points = cfg.rows;
        choice.backend = make_device_backend<T>(*device_runtime(), launch);
        return choice;
    }
    check_cpu_transport(cfg);
    choice.backend = make_cpu_backend<T>();
    return choice;
}

template BackendChoice<float> choose_backend<float>(const Config&, MPI_Comm);
template BackendChoice<double> choose_backend<double>(const Config&, MPI_Comm);

}  // namespace gridsim

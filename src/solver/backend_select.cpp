#include "solver/backend_select.hpp"

#include "comm/mpi_check.hpp"
#include "comm/mpi_session.hpp"
#ifdef GRIDSIM_HAVE_CUDA
#include "kernels/cuda/cuda_backend.hpp"
#endif

namespace gridsim {

bool nccl_built() {
#ifdef GRIDSIM_HAVE_NCCL
    return true;
#else
    return false;
#endif
}

bool cuda_backend_built() {
#ifdef GRIDSIM_HAVE_CUDA
    return true;
#else
    return false;
#endif
}

int cuda_devices_visible() {
#ifdef GRIDSIM_HAVE_CUDA
    return visible_cuda_devices();
#else
    return 0;
#endif
}

std::string cuda_runtime_version() {
#ifdef GRIDSIM_HAVE_CUDA
    return cuda_runtime_version_string();
#else
    return {};
#endif
}

namespace {

// 2: every rank has a GPU of its own, 1: every rank sees one but some node runs more ranks
// than GPUs (they would share), 0: some rank sees none (or no CUDA in this build).
int device_coverage(MPI_Comm comm) {
    int mine = 0;
#ifdef GRIDSIM_HAVE_CUDA
    const int visible = cuda_devices_visible();
    int local_rank = 0;
    int local_ranks = 1;
    local_rank_and_size(comm, local_rank, local_ranks);
    mine = visible == 0 ? 0 : (local_ranks > visible ? 1 : 2);
#endif
    int all = 0;
    GRIDSIM_MPI_CHECK(MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, comm));
    return all;
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
// can: halos then move GPU to GPU without the host.
TransportKind gpu_transport(const Config& cfg, bool own_gpus) {
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
    return nccl_built() && own_gpus ? TransportKind::nccl : TransportKind::staged;
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
#ifdef GRIDSIM_HAVE_CUDA
    if (cuda) {
        choice.transport = gpu_transport(cfg, coverage == 2);
        choice.device = select_device(comm, cfg.share_gpus, cfg.where("parallel.backend"));
        CudaLaunchConfig launch;
        launch.kernel = cfg.kernel;
        launch.block_x = cfg.block[0];
        launch.block_y = cfg.block[1];
        launch.points = cfg.rows;
        choice.backend = make_cuda_backend<T>(launch);
        return choice;
    }
#endif
    check_cpu_transport(cfg);
    choice.backend = make_cpu_backend<T>();
    return choice;
}

template BackendChoice<float> choose_backend<float>(const Config&, MPI_Comm);
template BackendChoice<double> choose_backend<double>(const Config&, MPI_Comm);

}  // namespace gridsim

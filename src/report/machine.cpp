#include "report/machine.hpp"
#include "parallel/collectives.hpp"

#include <fmt/format.h>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "config/config.hpp"
#include "io/stopwatch.hpp"
#include "kernels/backend.hpp"
#include "kernels/device_runtime.hpp"
#include "parallel/binding.hpp"
#include "parallel/gather.hpp"
#include "parallel/mpi_session.hpp"
#include "parallel/nccl_transport.hpp"
#include "platform/backend_select.hpp"
#include "report/report.hpp"

namespace gridsim {

namespace {

// The GPU this rank would drive ("GPU 0 name (bus id)", or "no GPU"), whatever `auto` decides.
std::string device_text(MPI_Comm comm) {
    const DevicePlan plan = plan_device(comm);
    const DeviceInfo& d = plan.info;
    if (d.device < 0) return "no GPU";
    return fmt::format("GPU {} {} ({}){}", d.device, d.name, d.pci_bus_id,
                       plan.shared ? " [shared with another rank of this node]" : "");
}

}  // namespace

std::string machine_info(MPI_Comm comm) {
    const std::vector<std::string> ranks = gather_strings(comm, device_text(comm));
    // Binds as a run with the default deck would (parallel.bind = "auto") and reads it back.
    const BackendChoice<double> choice = choose_backend<double>(Config{}, comm);
    const std::vector<RankPlacement> places = gather_placements(comm, choice.placement);
    if (comm_rank(comm) != 0) return {};
    const nlohmann::json v = versions();
    std::string out = fmt::format("gridsim {}\n", v["gridsim"].get<std::string>());
    out += fmt::format(
        "  compiler      {}\n  MPI           {}\n  HDF5          {}\n  hwloc         {}\n",
        v["compiler"].get<std::string>(), v["mpi"].get<std::string>(), v["hdf5"].get<std::string>(),
        v["hwloc"].get<std::string>());
    out += fmt::format(
        "  backends      cpu{}\n",
        cuda_backend_built() ? ", cuda (CUDA runtime " + cuda_runtime_version() + ")" : "");
    out += fmt::format("  transports    {}\n", transports_offered());
    out += fmt::format("  NCCL          {}\n", nccl_built() ? nccl_version() : "not built");
    out += fmt::format(
        "  CUDA-aware MPI {}\n",
        mpi_is_cuda_aware() ? "yes" : "no (MPIX_Query_cuda_support says no or is absent)");
    out += fmt::format("  ranks         {}\n", ranks.size());
    out += fmt::format("  nodes         {}\n", choice.nodes.text());
    for (std::size_t r = 0; r < ranks.size(); ++r)
        out += fmt::format("  rank {:<4}     {}\n", r, ranks[r]);
    out += fmt::format("  backend       {} ({})\n", choice.backend->name(), choice.note);
    return out + placement_map(places);
}

namespace {

// Staged ping-pong of `bytes` between ranks 0 and 1 through the backend's memory: the path a
// halo takes. Returns one-way bytes per second (rank 0), 0 elsewhere or with one rank.
template <class T>
double ping_pong(MPI_Comm comm, Backend<T>& be, std::size_t bytes, int reps, int other = 1) {
    const int rank = comm_rank(comm);
    if (comm_size(comm) < 2 || (rank != 0 && rank != other)) return 0.0;
    const std::size_t n = std::max<std::size_t>(1, bytes / sizeof(T));
    bytes = n * sizeof(T);
    Buffer<T> dev = be.allocate(n);
    Buffer<T> host = be.allocate_host(n);
    const int peer = rank == 0 ? other : 0;
    const bool ping = rank == 0;
    auto send = [&] {
        be.copy(host.data(), dev.data(), n, Lane::boundary);
        be.wait(Lane::boundary);
        send_bytes(comm, host.data(), bytes, peer);
    };
    auto recv = [&] {
        receive_bytes(comm, host.data(), bytes, peer);
        be.copy(dev.data(), host.data(), n, Lane::boundary);
        be.wait(Lane::boundary);
    };
    double best = 1e30;
    for (int r = 0; r <= reps; ++r) {  // r = 0 warms up
        const double t0 = wall_seconds();
        if (ping) {
            send();
            recv();
        } else {
            recv();
            send();
        }
        if (r > 0) best = std::min(best, (wall_seconds() - t0) / 2.0);
    }
    return ping ? static_cast<double>(bytes) / best : 0.0;
}

// Rows of a staged halo ping-pong between rank 0 and the first rank of another node, where the
// run has one: a small message's one-way time and a large one's bandwidth, the figures the
// process grid's model of the network takes (parallel.network_latency_us, .network_bandwidth_GBps).
template <class T>
std::string across_nodes_rows(MPI_Comm comm, Backend<T>& be, const NodeMap& nodes, int reps) {
    if (nodes.nodes() < 2) return {};
    const int other = nodes.ranks_on(1).front();  // node 0 is rank 0's
    const double small = ping_pong(comm, be, 8, reps * 20, other);
    const double large = ping_pong(comm, be, std::size_t{8} << 20, reps, other);
    return fmt::format(
        "  {:<44} {:10.2f} us  (parallel.network_latency_us)\n"
        "  {:<44} {:10.2f} GB/s  (one rank; parallel.network_bandwidth_GBps is a node's)\n",
        fmt::format("ping-pong to another node (rank {}), 8 B", other),
        small > 0 ? 8.0 / small * 1e6 : 0.0,
        fmt::format("ping-pong to another node (rank {}), 8 MiB", other), large / 1e9);
}

// Seconds of the fastest of `reps` calls of f (after one warm-up call).
template <class F>
double best_seconds(int reps, F&& f) {
    f();
    double best = 1e30;
    for (int r = 0; r < reps; ++r) {
        const double t0 = wall_seconds();
        f();
        best = std::min(best, wall_seconds() - t0);
    }
    return best;
}

// The stand-alone reductions on a field of about `bytes`, as bandwidth (bytes each must read
// over its time) and as a share of the copy bandwidth `copy`. Each call waits for its result,
// as a run's statistics do.
template <class T>
std::string reduction_rows(Backend<T>& be, std::size_t bytes, int reps, double copy) {
    const int nx = 1024;
    const int ny = 512;
    const int nz = std::max<int>(1, static_cast<int>(bytes / (sizeof(T) * nx * ny)));
    const FieldExtents e = FieldExtents::make(3, {nx, ny, nz}, 1, be.row_alignment());
    std::vector<T> host(e.total);
    for (std::size_t p = 0; p < host.size(); ++p) host[p] = static_cast<T>(p % 1000) * T(0.001);
    Field<T> a = be.allocate_field(e);
    Field<T> b = be.allocate_field(e);
    be.upload(host, a.view());
    be.upload(host, b.view());
    const Box box{{0, 0, 0}, {nx, ny, nz}};
    const double field_bytes = static_cast<double>(box.count()) * sizeof(T);
    const char* type = sizeof(T) == 4 ? "float" : "double";
    std::string out;
    auto row = [&](const char* what, double read, double seconds) {
        out += fmt::format("  {:<44} {:10.1f} GB/s  ({:.2f} of copy)\n",
                           fmt::format("{} ({}, {} MiB field)", what, type,
                                       static_cast<long long>(field_bytes) >> 20),
                           read / seconds / 1e9, read / seconds / copy);
    };
    row("reduction: stats (min/max/sum/non-finite)", field_bytes,
        best_seconds(reps, [&] { be.reductions().stats(a.view(), box); }));
    row("reduction: sum of squares", field_bytes,
        best_seconds(reps, [&] { be.reductions().sum_sq(a.view(), box); }));
    row("reduction: sum of squared differences", 2 * field_bytes,
        best_seconds(reps, [&] { be.reductions().sum_sq_diff(a.view(), b.view(), box); }));
    return out;
}

// The calling thread's memory policy bound to `nodes` while alive, `restore` afterwards.
class MemoryPolicy {
public:
    MemoryPolicy(const Topology& topo, const std::string& nodes, std::string restore)
        : topo_(topo), restore_(std::move(restore)) {
        BindDecision d;
        d.mem_nodes = nodes;
        apply_binding(topo_, d);
    }
    MemoryPolicy(const MemoryPolicy&) = delete;
    MemoryPolicy& operator=(const MemoryPolicy&) = delete;
    ~MemoryPolicy() {
        BindDecision d;
        d.mem_nodes = restore_;
        try {
            apply_binding(topo_, d);
        } catch (const std::exception&) {  // it was bound there before: cannot fail in practice
        }
    }

private:
    const Topology& topo_;
    std::string restore_;
};

// Pinned host<->device bandwidth with the buffer on a NUMA node other than the GPU's (the cost
// of a wrong placement), when the machine has one.
std::string remote_pinned_rows(const DeviceRuntime& rt, const RankPlacement& local,
                               const BenchOptions& opt) {
    const Topology topo = Topology::system();
    const std::vector<int> ids = topo.numa_node_ids();
    if (ids.size() < 2) return fmt::format("  {:<44} none (one NUMA node)\n", "remote NUMA node");
    if (local.mem_nodes.empty())
        return fmt::format("  {:<44} not measured ({})\n", "remote NUMA node", local.note);
    const auto remote = std::find_if(ids.begin(), ids.end(),
                                     [&](int id) { return !list_contains(local.mem_nodes, id); });
    if (remote == ids.end())
        return fmt::format("  {:<44} none (the GPU's nodes are all of them)\n", "remote NUMA node");
    const MemoryPolicy there(topo, std::to_string(*remote), local.mem_nodes);
    std::string out;
    for (const Direction dir : {Direction::host_to_device, Direction::device_to_host}) {
        out += fmt::format(
            "  {:<44} {:10.1f} GB/s\n",
            fmt::format("{}, pinned on remote node {}",
                        dir == Direction::host_to_device ? "host -> device" : "device -> host",
                        *remote),
            rt.transfer_bandwidth(HostMemory::pinned, dir, opt.bytes, opt.reps) / 1e9);
    }
    return out;
}

// Writes `bytes` of `block` (repeated) into `fd` from `offset` on; "" or the error.
std::string write_block(int fd, const std::string& path, const std::vector<char>& block,
                        std::size_t bytes, off_t offset) {
    for (std::size_t done = 0; done < bytes;) {
        const std::size_t n = std::min(block.size(), bytes - done);
        const ssize_t w = ::pwrite(fd, block.data(), n, offset + static_cast<off_t>(done));
        if (w <= 0) return fmt::format("cannot write '{}': {}", path, std::strerror(errno));
        done += static_cast<std::size_t>(w);
    }
    return {};
}

// Opens `path` for writing (`flags` added: O_CREAT | O_TRUNC makes it afresh), writes `bytes`
// at `offset` (none: just opens it), fsync()s it when `sync`; "" or the error.
std::string write_file(const std::string& path, int flags, const std::vector<char>& block,
                       std::size_t bytes, off_t offset, bool sync) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC | flags, 0644);
    if (fd < 0) return fmt::format("cannot create '{}': {}", path, std::strerror(errno));
    std::string error = write_block(fd, path, block, bytes, offset);
    if (error.empty() && sync && ::fsync(fd) != 0)
        error = fmt::format("cannot sync '{}': {}", path, std::strerror(errno));
    ::close(fd);
    return error;
}
constexpr int kFresh = O_CREAT | O_TRUNC;

// One repetition: every rank writes `bytes`, to a file of its own (`shared` false) or to its
// slice of one file that rank 0 then fsyncs, as a snapshot is written; the seconds from the
// start to the last byte on disk (the slowest rank's). Throws ConfigError on every rank when a
// rank fails.
double timed_write(MPI_Comm comm, const std::string& dir, const std::vector<char>& block,
                   std::size_t bytes, bool shared) {
    const int rank = comm_rank(comm);
    const std::string path = shared ? dir + "/.gridsim_io_probe.shared"
                                    : fmt::format("{}/.gridsim_io_probe.{}", dir, rank);
    std::string error;
    if (shared && rank == 0) error = write_file(path, kFresh, block, 0, 0, false);  // empty
    error = agree_on_error(comm, error);
    if (!error.empty()) throw ConfigError("--io: " + error);
    barrier(comm);
    Stopwatch watch;
    error = shared ? write_file(path, 0, block, bytes, static_cast<off_t>(bytes) * rank, false)
                   : write_file(path, kFresh, block, bytes, 0, true);
    if (shared) {  // rank 0 syncs the file after every rank has written its slice
        barrier(comm);
        if (rank == 0 && error.empty()) error = write_file(path, 0, block, 0, 0, true);
    }
    const double took = watch.lap();
    if (!shared || rank == 0) ::unlink(path.c_str());
    error = agree_on_error(comm, error);
    if (!error.empty()) throw ConfigError("--io: " + error);
    return allreduce(comm, took, Reduce::max);
}

}  // namespace

std::string io_bench(MPI_Comm comm, const std::string& dir, const BenchOptions& opt) {
    const int ranks = comm_size(comm);
    std::vector<char> block(std::size_t{16} << 20);
    for (std::size_t i = 0; i < block.size(); ++i) block[i] = static_cast<char>(i * 131 + 7);
    auto best_rate = [&](bool shared) {
        double best = 0.0;
        for (int rep = 0; rep < opt.reps; ++rep) {
            const double took = timed_write(comm, dir, block, opt.bytes, shared);
            best = std::max(best, static_cast<double>(opt.bytes) * ranks / took);
        }
        return best;
    };
    std::string out = fmt::format(
        "gridsim bench --io {}: {} rank(s), {} MiB each in 16 MiB writes + fsync, best of {}\n"
        "  {:<44} {:10.1f} MB/s\n",
        dir, ranks, opt.bytes >> 20, opt.reps, "file write ceiling (all ranks)",
        best_rate(false) / 1e6);
    // A snapshot is one file all ranks write and rank 0 fsyncs: on a local file system its
    // write-back may be slower than that of a file per rank, so both are measured.
    if (ranks > 1) {
        out += fmt::format("  {:<44} {:10.1f} MB/s\n", "one shared file, rank 0 fsyncs",
                           best_rate(true) / 1e6);
    }
    return out;
}

std::string machine_bench(MPI_Comm comm, const BenchOptions& opt) {
    Config cfg;  // defaults: backend auto, staged transport
    BackendChoice<double> choice = choose_backend<double>(cfg, comm);
    Backend<double>& be = *choice.backend;
    std::string out = fmt::format(
        "gridsim bench: backend {}{} on rank 0 ({} MiB per copy, best of {})\n", be.name(),
        choice.device.device >= 0 ? " " + choice.device.name : "", opt.bytes >> 20, opt.reps);
    const double copy = be.measure_copy_bandwidth();
    out += fmt::format("  {:<44} {:10.1f} GB/s\n", "device copy (read + write, as the run report)",
                       copy / 1e9);
    if (be.on_device()) {
        const DeviceRuntime& rt = *device_runtime();
        const double peak = rt.theoretical_memory_bandwidth();
        out += fmt::format("  {:<44} {:10.1f} GB/s  (copy reaches {:.0f}%)\n",
                           "theoretical peak (2 x clock x bus width)", peak / 1e9,
                           100.0 * copy / peak);
        const struct {
            const char* what;
            HostMemory mem;
            Direction dir;
        } rows[] = {{"host -> device, pinned", HostMemory::pinned, Direction::host_to_device},
                    {"device -> host, pinned", HostMemory::pinned, Direction::device_to_host},
                    {"host -> device, pageable", HostMemory::pageable, Direction::host_to_device},
                    {"device -> host, pageable", HostMemory::pageable, Direction::device_to_host}};
        out += fmt::format("  {:<44} node {} (GPU's: {})\n", "pinned host buffers on NUMA node",
                           choice.placement.pages, choice.placement.numa_node);
        for (const auto& row : rows) {
            out += fmt::format("  {:<44} {:10.1f} GB/s\n", row.what,
                               rt.transfer_bandwidth(row.mem, row.dir, opt.bytes, opt.reps) / 1e9);
        }
        out += remote_pinned_rows(rt, choice.placement, opt);
    }
    out += reduction_rows(be, opt.bytes, opt.reps, copy);
    {
        BackendChoice<float> single = choose_backend<float>(cfg, comm);
        out += reduction_rows(*single.backend, opt.bytes, opt.reps, copy);
    }
    const double pp = ping_pong(comm, be, std::size_t{8} << 20, opt.reps);
    if (comm_size(comm) >= 2) {
        out += fmt::format("  {:<44} {:10.2f} GB/s\n", "halo ping-pong rank 0 <-> 1, 8 MiB, staged",
                           pp / 1e9);
    }
    out += across_nodes_rows(comm, be, choice.nodes, opt.reps);
    barrier(comm);
    return comm_rank(comm) == 0 ? out : std::string();
}

}  // namespace gridsim

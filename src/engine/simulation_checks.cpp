// What Simulation decides once from the deck, the grid and the backend (simulation.hpp): whether
// sweeps sum in passes, whether they are recorded, whether ipc reaches every neighbour, whether
// the fields fit, and the devices' description for the header.
#include "engine/simulation.hpp"

#include <fmt/format.h>

#include <map>

#include "parallel/gather.hpp"
#include "parallel/mpi_session.hpp"
#include "parallel/peer_routes.hpp"

namespace gridsim {

// Overlap "auto" or "fused" (a summing pass is one launch, then the halos: forced overlap
// splits the shell from the interior), a backend that sums every level of a pass over this sweep's
// boxes as the sweep itself would, on every rank (a rank's boxes depend on its faces), and with
// several ranks a residual all-reduced on the host: each level's sum then goes through the
// MPI_Allreduce of one double that a sweep's goes through, so the global sums have the same bits.
// NCCL all-reduces a sweep's sum on the device, in an order of its own beyond two ranks.
template <class T>
bool Simulation<T>::can_sum_in_passes() const {
    const int here =
        may_fuse(cfg_.overlap) && (topo_.size() == 1 || choice_.transport != TransportKind::nccl) &&
                be_.level_sums() != nullptr && be_.level_sums()->sums_levels(sum_boxes_, dom_.dims)
            ? 1
            : 0;
    return allreduce(topo_.comm(), here, Reduce::min) == 1;
}

template <class T>
int Simulation<T>::kernel_wrap_period() const {
    const int walk = dom_.dims - 1;
    if (block_ != 1 || !(be_.box_sweeps() != nullptr) || !halo_->local_only() ||
        halo_->self_axes() != (1u << walk))
        return 0;
    return topo_.subdomain().size[walk];
}

// Points in the x-y cross-section of the smallest subdomain (the same on every rank).
template <class T>
std::int64_t Simulation<T>::smallest_cross_section() const {
    const std::array<int, 3> grid = topo_.process_grid();
    return std::int64_t{dom_.solved[0] / grid[0]} * (dom_.solved[1] / grid[1]);
}

// parallel.graphs. The ranks decide together: they must issue the same NCCL calls in the same
// order, and a rank whose exchange waits on the host (MPI) cannot record its sweeps.
template <class T>
bool Simulation<T>::decide_recording() {
    if (cfg_.graphs == GraphMode::off) return false;
    const int mine = (be_.recorder() != nullptr) && halo_->host_free() ? 1 : 0;
    const int all = allreduce(topo_.comm(), mine, Reduce::min);
    if (all == 0 && cfg_.graphs == GraphMode::on) {
        throw ConfigError(
            cfg_.where("parallel.graphs") +
            "\"on\" needs the CUDA backend and a halo exchange without host steps "
            "(transport \"nccl\" or \"ipc\", or no neighbour on another rank); this run has " +
            ((be_.recorder() != nullptr) ? "transport " + std::string(transport_name())
                                         : "the " + be_.name() + " backend"));
    }
    return all == 1;
}

// parallel.transport "ipc": every face to another rank goes by direct stores, which needs both
// ranks' GPUs to reach each other (parallel/peer_routes.hpp); where one cannot, the run is refused
// on every rank with the first reason ("auto" takes ipc only where every rank reaches every
// other, so it never is). Nothing to check where every rank reaches every other, or for
// another transport.
template <class T>
void Simulation<T>::check_ipc_neighbours() {
    if (choice_.transport != TransportKind::ipc || choice_.ipc_everywhere) return;
    const Subdomain& sub = topo_.subdomain();
    std::array<int, 6> peers;
    peers.fill(-1);
    for (int face = 0; face < 2 * sub.dims; ++face) {
        if (sub.has_neighbour[face] && topo_.neighbour(face) != topo_.rank())
            peers[face] = topo_.neighbour(face);
    }
    const std::string why =
        agree_on_error(topo_.comm(), neighbour_obstacle(choice_.gpus, topo_.rank(), peers));
    if (!why.empty()) {
        throw ConfigError(cfg_.where("parallel.transport") + "\"ipc\": " + why +
                          "; use \"nccl\" or \"auto\"");
    }
}

// Refuses (ConfigError, on every rank) a deck whose fields do not fit, before allocating them:
// the problem's fields in backend memory, plus one host copy of a field (output, checks) and,
// on the CPU, the node's ranks sharing its available memory. The numbers are the neediest
// rank's.
template <class T>
void Simulation<T>::check_memory(std::size_t field_bytes) {
    const int ranks_on_node = node_comm(topo_.comm()).size();
    const double on_node = ranks_on_node;
    const double field = static_cast<double>(field_bytes);
    const double host_free = static_cast<double>(available_host_memory());
    const double kept = cfg_.dump_on_failure ? 1.0 : 0.0;  // the last good state
    const double fields = field_count() + kept;
    const double host_need = (be_.on_device() ? 1.0 : 1.0 + fields) * field * on_node;
    const double dev_need = fields * field;
    const double dev_free = be_.on_device() ? static_cast<double>(be_.free_memory()) : 0.0;
    // How many times the need exceeds what there is: MAXLOC finds the neediest rank.
    struct {
        double ratio;
    } mine{0.0};
    std::string what;
    if (host_free > 0 && host_need > host_free) {
        mine.ratio = host_need / host_free;
        what = fmt::format(
            "needs {:.3g} GiB of host memory on its node ({} rank(s) x {} "
            "field(s) of {:.3g} GiB), {:.3g} GiB available",
            host_need / 1073741824.0, ranks_on_node,
            be_.on_device() ? 1 : 1 + static_cast<int>(fields), field / 1073741824.0,
            host_free / 1073741824.0);
    }
    if (be_.on_device() && dev_need > dev_free && dev_need / dev_free > mine.ratio) {
        mine.ratio = dev_need / dev_free;
        what = fmt::format(
            "needs {:.3g} GiB of device memory ({} fields of {:.3g} GiB), {:.3g} GiB free",
            dev_need / 1073741824.0, static_cast<int>(fields), field / 1073741824.0,
            dev_free / 1073741824.0);
    }
    const RankedValue worst = allreduce_maxloc(topo_.comm(), mine.ratio, topo_.rank());
    if (worst.value <= 0.0) return;
    const int root = worst.rank;
    std::string text = topo_.rank() == root ? what : std::string();
    broadcast_string(topo_.comm(), text, root);
    const std::vector<int> cells(cfg_.cells.begin(), cfg_.cells.begin() + cfg_.dims);
    throw ConfigError(cfg_.where("grid.cells") +
                      fmt::format("{} points on {} rank(s) do not fit: rank {} {}",
                                  fmt::join(cells, "x"), topo_.size(), root, text));
}

template <class T>
std::string Simulation<T>::describe_devices() {
    const std::string mine = choice_.device.device >= 0 ? choice_.device.name : be_.name();
    std::string text;
    if (topo_.rank() == 0) {
        std::map<std::string, int> count;
        for (const std::string& d : gather_strings(topo_.comm(), mine)) ++count[d];
        for (const auto& [name, n] : count)
            text += fmt::format("{}{} x {}", text.empty() ? "" : ", ", n, name);
    } else {
        gather_strings(topo_.comm(), mine);
    }
    broadcast_string(topo_.comm(), text);
    return text;
}

template class Simulation<float>;
template class Simulation<double>;

}  // namespace gridsim

#include "parallel/binding.hpp"

#include <hwloc.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <vector>

namespace gridsim {

namespace {

// RAII for an hwloc bitmap.
struct BitmapDeleter {
    void operator()(hwloc_bitmap_s* b) const { hwloc_bitmap_free(b); }
};
using Bitmap = std::unique_ptr<hwloc_bitmap_s, BitmapDeleter>;

Bitmap new_bitmap() {
    Bitmap b(hwloc_bitmap_alloc());
    if (!b) throw std::runtime_error("hwloc_bitmap_alloc failed");
    return b;
}

Bitmap copy_of(hwloc_const_bitmap_t src) {
    Bitmap b(hwloc_bitmap_dup(src));
    if (!b) throw std::runtime_error("hwloc_bitmap_dup failed");
    return b;
}

Bitmap parse_list(const std::string& text) {
    Bitmap b = new_bitmap();
    if (hwloc_bitmap_list_sscanf(b.get(), text.c_str()) != 0)
        throw std::runtime_error("cannot read CPU/NUMA set '" + text + "'");
    return b;
}

std::string list_of(hwloc_const_bitmap_t b) {
    char* text = nullptr;
    if (hwloc_bitmap_list_asprintf(&text, b) < 0 || text == nullptr) return "unknown";
    std::string out = text;
    std::free(text);
    return out;
}

hwloc_topology_t init_topology() {
    hwloc_topology_t t = nullptr;
    if (hwloc_topology_init(&t) != 0) throw std::runtime_error("hwloc_topology_init failed");
    // GPUs and the bridges above them: what locality is decided from.
    hwloc_topology_set_io_types_filter(t, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
    return t;
}

// Where a GPU or a CPU rank belongs: NUMA nodes and their CPUs; empty `why` when known.
struct Locality {
    Bitmap nodes;
    Bitmap cpus;
    std::string how;  // for the note: "the node of GPU 0000:41:00.0", "the only one", ...
    std::string why_unknown;
};

std::vector<hwloc_obj_t> numa_objects(hwloc_topology_t t) {
    std::vector<hwloc_obj_t> out;
    for (hwloc_obj_t n = nullptr; (n = hwloc_get_next_obj_by_type(t, HWLOC_OBJ_NUMANODE, n));)
        out.push_back(n);
    return out;
}

Locality single_node(hwloc_topology_t t) {
    const hwloc_obj_t root = hwloc_get_root_obj(t);
    return {copy_of(root->nodeset), copy_of(root->cpuset), "the only one", ""};
}

Locality gpu_locality(hwloc_topology_t t, const std::string& bus_id) {
    if (numa_objects(t).size() <= 1) return single_node(t);
    const hwloc_obj_t dev = hwloc_get_pcidev_by_busidstring(t, bus_id.c_str());
    if (dev == nullptr) {
        return {
            nullptr, nullptr, "",
            fmt::format("hwloc has no PCI information for GPU {} (no I/O discovery here)", bus_id)};
    }
    const hwloc_obj_t above = hwloc_get_non_io_ancestor_obj(t, dev);
    const hwloc_obj_t root = hwloc_get_root_obj(t);
    if (above == nullptr || above->nodeset == nullptr ||
        hwloc_bitmap_isequal(above->nodeset, root->nodeset)) {
        return {nullptr, nullptr, "",
                fmt::format("the NUMA node of GPU {} is unknown (the system reports none for "
                            "it: sysfs numa_node -1)",
                            bus_id)};
    }
    return {copy_of(above->nodeset), copy_of(above->cpuset), "the node of GPU " + bus_id, ""};
}

// A CPU rank: the NUMA nodes the launcher's CPUs touch, shared out in blocks of local ranks.
Locality cpu_locality(hwloc_topology_t t, hwloc_const_bitmap_t launcher, int local_rank,
                      int local_ranks) {
    std::vector<hwloc_obj_t> candidates;
    for (hwloc_obj_t n : numa_objects(t)) {
        if (n->cpuset != nullptr && hwloc_bitmap_intersects(n->cpuset, launcher))
            candidates.push_back(n);
    }
    if (candidates.empty()) {
        return {nullptr, nullptr, "", "no NUMA node holds any of the launcher's CPUs"};
    }
    if (numa_objects(t).size() == 1) return single_node(t);
    const auto k = candidates.size();
    const auto pick = static_cast<std::size_t>(local_rank) * k / std::max(local_ranks, 1);
    const hwloc_obj_t n = candidates[std::min(pick, k - 1)];
    return {copy_of(n->nodeset), copy_of(n->cpuset),
            fmt::format("local rank {} of {} spread over {} node(s)", local_rank, local_ranks, k),
            ""};
}

// Could not bind as asked: a note (auto), a warning (numa) or an error (strict).
void cannot_bind(BindDecision& d, BindMode mode, const std::string& why) {
    if (mode == BindMode::strict) {
        d.error = why;
        return;
    }
    d.warn = mode == BindMode::numa;
    d.note = why;
}

}  // namespace

void Topology::Deleter::operator()(hwloc_topology* t) const { hwloc_topology_destroy(t); }

Topology Topology::system() {
    hwloc_topology_t t = init_topology();
    Topology owned(t);
    if (hwloc_topology_load(t) != 0) throw std::runtime_error("hwloc_topology_load failed");
    return owned;
}

Topology Topology::from_xml(const std::string& path) {
    hwloc_topology_t t = init_topology();
    Topology owned(t);
    if (hwloc_topology_set_xml(t, path.c_str()) != 0 || hwloc_topology_load(t) != 0)
        throw std::runtime_error("cannot load hwloc XML topology '" + path + "'");
    return owned;
}

std::vector<int> Topology::numa_node_ids() const {
    std::vector<int> ids;
    for (hwloc_obj_t n : numa_objects(t_.get())) ids.push_back(static_cast<int>(n->os_index));
    return ids;
}

std::string Topology::all_cpus() const { return list_of(hwloc_get_root_obj(t_.get())->cpuset); }

BindDecision decide_binding(const Topology& topo, const BindRequest& req) {
    BindDecision d;
    if (req.mode == BindMode::none) {
        d.note = "parallel.bind = \"none\": left as the launcher placed it";
        return d;
    }
    hwloc_topology_t t = topo.get();
    const Bitmap launcher = req.launcher_cpus.empty() ? copy_of(hwloc_get_root_obj(t)->cpuset)
                                                      : parse_list(req.launcher_cpus);
    const Locality loc = req.bus_id.empty()
                             ? cpu_locality(t, launcher.get(), req.local_rank, req.local_ranks)
                             : gpu_locality(t, req.bus_id);
    if (!loc.why_unknown.empty()) {
        cannot_bind(d, req.mode, loc.why_unknown + ": left as the launcher placed it");
        return d;
    }
    d.locality = list_of(loc.nodes.get());
    d.mem_nodes = d.locality;
    const Bitmap cpus = new_bitmap();
    hwloc_bitmap_and(cpus.get(), loc.cpus.get(), launcher.get());
    if (hwloc_bitmap_iszero(cpus.get())) {
        // Never widen what the launcher gave: the memory still goes next to the GPU (DMA reads
        // it from there), the CPUs stay where they are.
        cannot_bind(
            d, req.mode,
            fmt::format("the launcher's CPUs {} exclude NUMA node {} ({}, CPUs {}): "
                        "memory bound there, CPUs left as given",
                        list_of(launcher.get()), d.locality, loc.how, list_of(loc.cpus.get())));
        return d;
    }
    d.cpus = list_of(cpus.get());
    d.note = fmt::format("bound to NUMA node {}, {}", d.locality, loc.how);
    return d;
}

void apply_binding(const Topology& topo, const BindDecision& d) {
    hwloc_topology_t t = topo.get();
    if (!d.cpus.empty()) {
        const Bitmap cpus = parse_list(d.cpus);
        if (hwloc_set_cpubind(t, cpus.get(), HWLOC_CPUBIND_PROCESS) != 0)
            throw std::runtime_error(
                fmt::format("binding to CPUs {} failed: {}", d.cpus, std::strerror(errno)));
    }
    if (!d.mem_nodes.empty()) {
        const Bitmap nodes = parse_list(d.mem_nodes);
        if (hwloc_set_membind(t, nodes.get(), HWLOC_MEMBIND_BIND,
                              HWLOC_MEMBIND_THREAD | HWLOC_MEMBIND_BYNODESET) != 0) {
            throw std::runtime_error(fmt::format("binding memory to NUMA node {} failed: {}",
                                                 d.mem_nodes, std::strerror(errno)));
        }
    }
}

BoundState bound_state(const Topology& topo) {
    hwloc_topology_t t = topo.get();
    BoundState s;
    const Bitmap cpus = new_bitmap();
    s.cpus = hwloc_get_cpubind(t, cpus.get(), HWLOC_CPUBIND_PROCESS) == 0 ? list_of(cpus.get())
                                                                          : "unknown";
    const Bitmap nodes = new_bitmap();
    hwloc_membind_policy_t policy = HWLOC_MEMBIND_DEFAULT;
    if (hwloc_get_membind(t, nodes.get(), &policy,
                          HWLOC_MEMBIND_THREAD | HWLOC_MEMBIND_BYNODESET) != 0) {
        s.policy = "unknown";
        return s;
    }
    switch (policy) {
        case HWLOC_MEMBIND_BIND:
            s.policy = "bind";
            break;
        case HWLOC_MEMBIND_INTERLEAVE:
            s.policy = "interleave";
            break;
        case HWLOC_MEMBIND_FIRSTTOUCH:
            s.policy = "firsttouch";
            break;
        default:
            s.policy = "default";
    }
    if (policy == HWLOC_MEMBIND_BIND || policy == HWLOC_MEMBIND_INTERLEAVE)
        s.mem_nodes = list_of(nodes.get());
    return s;
}

bool list_contains(const std::string& list, int id) {
    return hwloc_bitmap_isset(parse_list(list).get(), static_cast<unsigned>(id)) != 0;
}

std::string pages_numa_nodes(const Topology& topo, const void* p, std::size_t bytes) {
    const Bitmap nodes = new_bitmap();
    if (p == nullptr || bytes == 0 ||
        hwloc_get_area_memlocation(topo.get(), p, bytes, nodes.get(), HWLOC_MEMBIND_BYNODESET) !=
            0 ||
        hwloc_bitmap_iszero(nodes.get())) {
        return "unknown";
    }
    return list_of(nodes.get());
}

std::string hwloc_version() {
    const unsigned v = hwloc_get_api_version();
    return fmt::format("{}.{}.{}", v >> 16, (v >> 8) & 0xff, v & 0xff);
}

}  // namespace gridsim

#include "affinity/binding.hpp"

#include <hwloc.h>
#include <unistd.h>

#include <fmt/format.h>

#include <memory>
#include <stdexcept>

namespace gridsim {

namespace {

// RAII for an hwloc topology and bitmap.
struct TopologyDeleter {
    void operator()(hwloc_topology* t) const { hwloc_topology_destroy(t); }
};
struct BitmapDeleter {
    void operator()(hwloc_bitmap_s* b) const { hwloc_bitmap_free(b); }
};
using TopologyPtr = std::unique_ptr<hwloc_topology, TopologyDeleter>;
using BitmapPtr = std::unique_ptr<hwloc_bitmap_s, BitmapDeleter>;

TopologyPtr load_topology() {
    hwloc_topology_t t = nullptr;
    if (hwloc_topology_init(&t) != 0) throw std::runtime_error("hwloc_topology_init failed");
    TopologyPtr owned(t);
    if (hwloc_topology_load(t) != 0) throw std::runtime_error("hwloc_topology_load failed");
    return owned;
}

}  // namespace

Placement current_placement() {
    Placement p;
    char host[256] = {};
    gethostname(host, sizeof host - 1);
    p.host = host;
    const TopologyPtr topo = load_topology();
    const BitmapPtr set(hwloc_bitmap_alloc());
    if (!set || hwloc_get_cpubind(topo.get(), set.get(), HWLOC_CPUBIND_PROCESS) != 0) {
        p.cpus = "unknown";
        return p;
    }
    char* text = nullptr;
    hwloc_bitmap_list_asprintf(&text, set.get());
    p.cpus = text != nullptr ? text : "unknown";
    std::free(text);
    return p;
}

int numa_node_of_pci(const std::string& bus_id) {
    hwloc_topology_t t = nullptr;
    if (hwloc_topology_init(&t) != 0) return -1;
    const TopologyPtr topo(t);
    hwloc_topology_set_io_types_filter(t, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
    if (hwloc_topology_load(t) != 0) return -1;
    hwloc_obj_t dev = hwloc_get_pcidev_by_busidstring(t, bus_id.c_str());
    hwloc_obj_t parent = dev != nullptr ? hwloc_get_non_io_ancestor_obj(t, dev) : nullptr;
    if (parent == nullptr || parent->nodeset == nullptr ||
        hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_NUMANODE) <= 1) {
        return -1;
    }
    return hwloc_bitmap_first(parent->nodeset);
}

std::string hwloc_version() {
    const unsigned v = hwloc_get_api_version();
    return fmt::format("{}.{}.{}", v >> 16, (v >> 8) & 0xff, v & 0xff);
}

}  // namespace gridsim

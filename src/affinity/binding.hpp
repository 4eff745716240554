// Where this process runs: host name and the CPUs it is bound to, read through hwloc. (The
// GPU -> NUMA binding of DESIGN.md section 7 builds on this with the CUDA backend.)
#pragma once

#include <string>

namespace gridsim {

struct Placement {
    std::string host;
    std::string cpus;  // hwloc list syntax, e.g. "0-3,8"
};

Placement current_placement();
std::string hwloc_version();

}  // namespace gridsim

// Versions of everything a result depends on, for run reports and /provenance in HDF5 files.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace gridsim {

// (name, version) pairs: gridsim (git describe), compiler, flags, MPI, HDF5, hwloc, toml++, fmt,
// CUDA runtime (when built), NCCL ("not built").
std::vector<std::pair<std::string, std::string>> build_versions();
// gridsim's own version: `git describe` of the source at build time (README, "Building and
// installing").
std::string gridsim_version();

}  // namespace gridsim

#include "io/provenance.hpp"

#include <fmt/format.h>
#include <hdf5.h>
#include <toml++/toml.h>

#include "gridsim_version.hpp"
#include "parallel/binding.hpp"
#include "parallel/mpi_session.hpp"
#include "parallel/nccl_transport.hpp"
#include "platform/backend_select.hpp"

namespace gridsim {

std::string gridsim_version() { return GRIDSIM_VERSION; }

std::vector<std::pair<std::string, std::string>> build_versions() {
    unsigned maj = 0, min = 0, rel = 0;
    H5get_libversion(&maj, &min, &rel);
    std::vector<std::pair<std::string, std::string>> v = {
        {"gridsim", GRIDSIM_VERSION},
        {"compiler", fmt::format("{} {}", GRIDSIM_COMPILER_ID, __VERSION__)},
        {"flags", GRIDSIM_BUILD_FLAGS},
        {"mpi", mpi_library_version()},
        {"hdf5", fmt::format("{}.{}.{}", maj, min, rel)},
        {"hwloc", hwloc_version()},
        {"tomlplusplus", fmt::format("{}.{}.{}", TOML_LIB_MAJOR, TOML_LIB_MINOR, TOML_LIB_PATCH)},
        {"fmt",
         fmt::format("{}.{}.{}", FMT_VERSION / 10000, FMT_VERSION / 100 % 100, FMT_VERSION % 100)},
    };
    v.emplace_back("nccl", nccl_built() ? nccl_version() : "not built");
    if (cuda_backend_built()) v.emplace_back("cuda_runtime", cuda_runtime_version());
    return v;
}

}  // namespace gridsim

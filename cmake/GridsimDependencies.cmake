# Finds every external dependency of gridsim and turns each into an imported target, so the
# layer targets only ever name targets. Configure stops here with a clear message when a
# required dependency (or the parallel flavour of HDF5) is missing.

find_package(MPI REQUIRED COMPONENTS C CXX)

# HDF5 must be the MPI-IO (parallel) build: a serial HDF5 would silently give a code that cannot
# write collectively. Debian installs the parallel build beside the serial one, so prefer it.
set(HDF5_PREFER_PARALLEL TRUE)
find_package(HDF5 REQUIRED COMPONENTS C)
if(NOT HDF5_IS_PARALLEL)
    message(FATAL_ERROR
        "gridsim needs a parallel (MPI-IO) HDF5, but the HDF5 found at '${HDF5_INCLUDE_DIRS}' is "
        "serial. On Debian/Ubuntu: apt-get install libhdf5-openmpi-dev")
endif()
if(NOT TARGET gridsim::hdf5)
    add_library(gridsim::hdf5 INTERFACE IMPORTED)
    target_include_directories(gridsim::hdf5 INTERFACE ${HDF5_C_INCLUDE_DIRS} ${HDF5_INCLUDE_DIRS})
    target_link_libraries(gridsim::hdf5 INTERFACE ${HDF5_C_LIBRARIES} MPI::MPI_C)
    target_compile_definitions(gridsim::hdf5 INTERFACE ${HDF5_DEFINITIONS})
endif()

# hwloc ships no CMake package; its pkg-config file is the supported way to find it.
find_package(PkgConfig REQUIRED)
pkg_check_modules(HWLOC REQUIRED IMPORTED_TARGET hwloc>=2.0)
if(NOT TARGET gridsim::hwloc)
    add_library(gridsim::hwloc INTERFACE IMPORTED)
    target_link_libraries(gridsim::hwloc INTERFACE PkgConfig::HWLOC)
endif()

find_package(CLI11 REQUIRED)
find_package(tomlplusplus REQUIRED)
find_package(fmt REQUIRED)
find_package(nlohmann_json REQUIRED)
if(GRIDSIM_BUILD_TESTS)
    find_package(GTest REQUIRED)
endif()

# GRIDSIM_CUDA = AUTO (build the CUDA backend when a CUDA compiler is found), ON (require it),
# OFF (CPU only). Sets GRIDSIM_HAVE_CUDA for the rest of the build.
include(CheckLanguage)
set(GRIDSIM_HAVE_CUDA OFF)
if(NOT GRIDSIM_CUDA STREQUAL "OFF")
    check_language(CUDA)
    if(CMAKE_CUDA_COMPILER)
        if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
            # H100/H200 (sm_90) are the GPU hosts this code is verified on.
            set(CMAKE_CUDA_ARCHITECTURES 90)
        endif()
        enable_language(CUDA)
        find_package(CUDAToolkit REQUIRED)
        set(CMAKE_CUDA_STANDARD 17)
        set(CMAKE_CUDA_STANDARD_REQUIRED ON)
        set(GRIDSIM_HAVE_CUDA ON)
    elseif(GRIDSIM_CUDA STREQUAL "ON")
        message(FATAL_ERROR "GRIDSIM_CUDA=ON but no CUDA compiler was found (set CMAKE_CUDA_COMPILER)")
    endif()
endif()
message(STATUS "gridsim: CUDA backend ${GRIDSIM_HAVE_CUDA} (GRIDSIM_CUDA=${GRIDSIM_CUDA})")

# NCCL (the device-to-device halo transport) ships with the CUDA toolkit here and on the GPU
# hosts; it is used when found next to the CUDA libraries.
set(GRIDSIM_HAVE_NCCL OFF)
if(GRIDSIM_HAVE_CUDA)
    find_path(GRIDSIM_NCCL_INCLUDE_DIR nccl.h HINTS ${CUDAToolkit_INCLUDE_DIRS})
    find_library(GRIDSIM_NCCL_LIBRARY nccl HINTS ${CUDAToolkit_LIBRARY_DIR} ${CUDAToolkit_LIBRARY_ROOT}/lib
                 ${CUDAToolkit_TARGET_DIR}/lib /usr/local/cuda/lib /usr/local/cuda/lib64)
    if(GRIDSIM_NCCL_INCLUDE_DIR AND GRIDSIM_NCCL_LIBRARY)
        set(GRIDSIM_HAVE_NCCL ON)
        add_library(gridsim::nccl INTERFACE IMPORTED)
        target_include_directories(gridsim::nccl INTERFACE ${GRIDSIM_NCCL_INCLUDE_DIR})
        target_link_libraries(gridsim::nccl INTERFACE ${GRIDSIM_NCCL_LIBRARY})
    endif()
endif()
message(STATUS "gridsim: NCCL transport ${GRIDSIM_HAVE_NCCL} (${GRIDSIM_NCCL_LIBRARY})")

# GRIDSIM_CUDA = AUTO (build the CUDA backend when a CUDA compiler is found), ON (require it),
# OFF (CPU only). Sets GRIDSIM_HAVE_CUDA for the rest of the build.
include(CheckLanguage)

# The GPUs a build has code for. CMAKE_CUDA_ARCHITECTURES (or the CUDAARCHS environment variable)
# wins; without either: `native` (the GPUs visible at configure time, through nvidia-smi) where
# any is visible, else this list: machine code for the A100 (80) and H100/H200 (90) generations
# and PTX of 90 that the driver compiles for newer GPUs at start-up.
set(GRIDSIM_DEFAULT_CUDA_ARCHITECTURES "80-real;90-real;90-virtual")

macro(gridsim_default_cuda_architectures)
    set(_gridsim_arch_why " (CMAKE_CUDA_ARCHITECTURES)")
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES AND NOT DEFINED ENV{CUDAARCHS})
        find_program(GRIDSIM_NVIDIA_SMI nvidia-smi)
        set(_gpus "")
        if(GRIDSIM_NVIDIA_SMI)
            execute_process(COMMAND ${GRIDSIM_NVIDIA_SMI} --query-gpu=compute_cap --format=csv,noheader
                            OUTPUT_VARIABLE _gpus ERROR_QUIET RESULT_VARIABLE _smi_rc)
            if(NOT _smi_rc EQUAL 0 OR NOT _gpus MATCHES "[0-9]\\.[0-9]")
                set(_gpus "")
            endif()
        endif()
        if(_gpus)
            set(CMAKE_CUDA_ARCHITECTURES native CACHE STRING "CUDA architectures to build for")
            set(_gridsim_arch_why " (the GPUs visible at configure time)")
        else()
            set(CMAKE_CUDA_ARCHITECTURES "${GRIDSIM_DEFAULT_CUDA_ARCHITECTURES}" CACHE STRING
                "CUDA architectures to build for")
            set(_gridsim_arch_why " (no GPU visible at configure time: the default list)")
        endif()
    endif()
endmacro()

# The architectures as a list of NN[-real|-virtual] entries: native, all and all-major expanded
# to what the compiler check found (the binary's own start-up check compares them with the GPU).
function(gridsim_resolved_cuda_architectures out)
    set(archs "${CMAKE_CUDA_ARCHITECTURES}")
    if(archs STREQUAL "native")
        set(archs "${CMAKE_CUDA_ARCHITECTURES_NATIVE}")
    elseif(archs STREQUAL "all")
        set(archs "${CMAKE_CUDA_ARCHITECTURES_ALL}")
    elseif(archs STREQUAL "all-major")
        set(archs "${CMAKE_CUDA_ARCHITECTURES_ALL_MAJOR}")
    endif()
    set(${out} "${archs}" PARENT_SCOPE)
endfunction()
set(GRIDSIM_HAVE_CUDA OFF)
if(NOT GRIDSIM_CUDA STREQUAL "OFF")
    check_language(CUDA)
    if(CMAKE_CUDA_COMPILER)
        gridsim_default_cuda_architectures()
        enable_language(CUDA)
        gridsim_resolved_cuda_architectures(GRIDSIM_CUDA_ARCHITECTURES)
        if(GRIDSIM_CUDA_ARCHITECTURES STREQUAL CMAKE_CUDA_ARCHITECTURES)
            message(STATUS "gridsim: CUDA architectures ${GRIDSIM_CUDA_ARCHITECTURES}${_gridsim_arch_why}")
        else()
            message(STATUS "gridsim: CUDA architectures ${GRIDSIM_CUDA_ARCHITECTURES} "
                           "(CMAKE_CUDA_ARCHITECTURES=${CMAKE_CUDA_ARCHITECTURES}${_gridsim_arch_why})")
        endif()
        find_package(CUDAToolkit REQUIRED)
        set(CMAKE_CUDA_STANDARD 17)
        set(CMAKE_CUDA_STANDARD_REQUIRED ON)
        set(GRIDSIM_HAVE_CUDA ON)
    elseif(GRIDSIM_CUDA STREQUAL "ON")
        message(FATAL_ERROR "GRIDSIM_CUDA=ON but no CUDA compiler was found (set CMAKE_CUDA_COMPILER)")
    endif()
endif()
message(STATUS "gridsim: CUDA backend ${GRIDSIM_HAVE_CUDA} (GRIDSIM_CUDA=${GRIDSIM_CUDA})")

# NVTX (the CUDA toolkit's header-only nvtx3): ranges around the timed phases for Nsight Systems
# and Nsight Compute (kernels/trace_range.hpp). Comes with the CUDA backend; without it the ranges
# compile to nothing.
add_library(gridsim_nvtx INTERFACE)
if(GRIDSIM_HAVE_CUDA)
    find_path(GRIDSIM_NVTX_INCLUDE_DIR nvtx3/nvToolsExt.h HINTS ${CUDAToolkit_INCLUDE_DIRS})
    if(GRIDSIM_NVTX_INCLUDE_DIR)
        target_include_directories(gridsim_nvtx SYSTEM INTERFACE ${GRIDSIM_NVTX_INCLUDE_DIR})
        target_compile_definitions(gridsim_nvtx INTERFACE GRIDSIM_NVTX)
        target_link_libraries(gridsim_nvtx INTERFACE ${CMAKE_DL_LIBS})
    endif()
endif()
if(GRIDSIM_NVTX_INCLUDE_DIR)
    message(STATUS "gridsim: NVTX ranges ON (${GRIDSIM_NVTX_INCLUDE_DIR}/nvtx3)")
else()
    message(STATUS "gridsim: NVTX ranges OFF (no CUDA toolkit)")
endif()


include(GridsimNccl)

# The CUDA backend: everything that includes a CUDA header lives in this folder. Included by
# kernels/CMakeLists.txt when the build has CUDA (cmake/GridsimCuda.cmake decides).
# CUDA translation units: the backend with its stencil launches and halo moves, the residual's
# sums and recordings, the BLAS calls, the phase timer, the CUB reductions and the Thrust initial
# conditions (the library ones compile slowly, so they are kept small); runtime.cpp is plain C++
# on the CUDA runtime (devices, probes, errors).
add_library(gridsim_kernels_cuda STATIC cuda/cuda_backend.cu cuda/residual_sums.cu cuda/blas_ops.cu
    cuda/interval_timer.cu cuda/reductions.cu cuda/initial.cu)
target_link_libraries(gridsim_kernels_cuda PUBLIC gridsim_kernels CUDA::cudart_static CUDA::cublas fmt::fmt)
target_compile_options(gridsim_kernels_cuda PRIVATE
    $<$<COMPILE_LANGUAGE:CUDA>:--expt-relaxed-constexpr -lineinfo -Xcompiler=-Wall
                            -Xcompiler=-Werror=switch>)
# CUDA code that instantiates the kernel templates for a stencil of its own (tests/gpu) needs the
# constexpr host helpers the kernels call.
target_compile_options(gridsim_kernels_cuda INTERFACE
    $<$<COMPILE_LANGUAGE:CUDA>:--expt-relaxed-constexpr>)

add_library(gridsim_device_runtime STATIC cuda/runtime.cpp)
target_link_libraries(gridsim_device_runtime PUBLIC gridsim_kernels_cuda PRIVATE gridsim_warnings)
# The architectures the kernels were built for, which the runtime holds against each GPU.
string(REPLACE ";" "," _gridsim_archs_text "${GRIDSIM_CUDA_ARCHITECTURES}")
target_compile_definitions(gridsim_device_runtime PRIVATE
                           GRIDSIM_CUDA_ARCHITECTURES="${_gridsim_archs_text}")

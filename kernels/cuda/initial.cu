// Initial conditions on the device: Thrust's for_each over a counting iterator on the boundary
// stream, each point evaluated by the same initial_value() the CPU backend loops over.
#include <thrust/execution_policy.h>
#include <thrust/for_each.h>
#include <thrust/iterator/counting_iterator.h>

#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/initial.cuh"

namespace gridsim::cuda {

namespace {

// Point t of the owned box, x fastest: one 64-bit division per point (set-up only, once).
template <class T>
struct FillPoint {
    InitialParams p;
    FieldView<T> u;
    int ox, oy, oz;
    __device__ void operator()(long long t) const {
        const int nx = u.ext.n[0];
        const long long row = t / nx;
        const int i = static_cast<int>(t - row * nx);
        const int j = static_cast<int>(row % u.ext.n[1]);
        const int k = static_cast<int>(row / u.ext.n[1]);
        const int g[3] = {ox + i, oy + j, oz + k};
        u(i, j, k) = static_cast<T>(initial_value(p, g));
    }
};

}  // namespace

template <class T>
void fill_initial(const InitialParams& p, FieldView<T> u, const std::array<int, 3>& origin,
                  cudaStream_t stream) {
    const long long n = static_cast<long long>(u.ext.n[0]) * u.ext.n[1] * u.ext.n[2];
    thrust::for_each(thrust::cuda::par_nosync.on(stream), thrust::counting_iterator<long long>(0),
                     thrust::counting_iterator<long long>(n),
                     FillPoint<T>{p, u, origin[0], origin[1], origin[2]});
    GRIDSIM_CUDA_CHECK(cudaGetLastError());
}

template void fill_initial<float>(const InitialParams&, FieldView<float>, const std::array<int, 3>&,
                                  cudaStream_t);
template void fill_initial<double>(const InitialParams&, FieldView<double>,
                                   const std::array<int, 3>&, cudaStream_t);

}  // namespace gridsim::cuda

// Deterministic reductions over a box of a field. Declared here, defined in reductions.cu (the
// one translation unit that includes CUB).
#pragma once

#include <cuda_runtime.h>

#include "kernels/backend.hpp"
#include "mesh/box.hpp"

namespace gridsim::cuda {

// Scratch space for the two-pass reductions: per-block partials, then one block reduces them in
// a fixed order. The grid size depends only on the box, so a rerun adds the same numbers in the
// same order and reproduces the result bit for bit.
class ReductionScratch {
public:
    ReductionScratch();
    ReductionScratch(const ReductionScratch&) = delete;
    ReductionScratch& operator=(const ReductionScratch&) = delete;
    ~ReductionScratch();

    template <class T>
    double sum_sq_diff(FieldView<const T> a, FieldView<const T> b, const Box& box, cudaStream_t s);
    template <class T>
    double sum_sq(FieldView<const T> a, const Box& box, cudaStream_t s);
    template <class T>
    FieldStats stats(FieldView<const T> a, const Box& box, cudaStream_t s);
    // The fused CG update of every point of the box (kernels/vector_ops.hpp), and the sum of
    // the new r z from the same pass, written to `sum` in device memory and not waited for
    // (ordered on `s`).
    template <class T>
    void cg_update(const CgUpdate<T>& u, const Box& box, double* sum, cudaStream_t s);

    static constexpr int kBlocks = 1024;  // partials per reduction (upper bound)
    static constexpr int kThreads = 256;

private:
    void* partials_ = nullptr;  // kBlocks x sizeof(FieldStats) on the device
    void* result_ = nullptr;    // one FieldStats, page-locked host memory
};

}  // namespace gridsim::cuda

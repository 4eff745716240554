// The CPU backend: plain loops over kernels/stencil.hpp, x innermost so the compiler can
// vectorise the contiguous rows. Work runs on the calling thread as soon as it is issued.
#include <algorithm>
#include <cstring>

#include "kernels/backend.hpp"

namespace gridsim {

namespace {

template <class F>
void for_each_row(const Box& b, F&& row) {
    for (int k = b.lo[2]; k < b.hi[2]; ++k) {
        for (int j = b.lo[1]; j < b.hi[1]; ++j) row(j, k);
    }
}

template <class T, int Dims, StencilKind Kind>
void apply_box(FieldView<const T> in, FieldView<T> out, const Box& b, const HeatCoeffs<T>& r) {
    for_each_row(b, [&](int j, int k) {
        T* __restrict__ dst = &out(0, j, k);
        for (int i = b.lo[0]; i < b.hi[0]; ++i) dst[i] = stencil_at<T, Dims, Kind>(in, i, j, k, r);
    });
}

template <class T>
class CpuBackend final : public Backend<T> {
public:
    [[nodiscard]] std::string name() const override { return "cpu"; }

    Buffer<T> allocate(std::size_t elements) override { return Buffer<T>::host(elements); }

    void upload(const std::vector<T>& host, FieldView<T> dst) override {
        std::copy(host.begin(), host.end(), dst.data);
    }
    void download(FieldView<const T> src, std::vector<T>& host) override {
        host.assign(src.data, src.data + src.ext.total);
    }

    void apply(const StencilParams<T>& p, FieldView<const T> in, FieldView<T> out, const Box& b,
               Lane /*lane*/) override {
        if (b.empty()) return;
        const bool heat = p.kind == StencilKind::heat;
        if (in.ext.dims == 2) {
            heat ? apply_box<T, 2, StencilKind::heat>(in, out, b, p.r)
                 : apply_box<T, 2, StencilKind::jacobi>(in, out, b, p.r);
        } else {
            heat ? apply_box<T, 3, StencilKind::heat>(in, out, b, p.r)
                 : apply_box<T, 3, StencilKind::jacobi>(in, out, b, p.r);
        }
    }

    void pack(FieldView<const T> u, const Box& b, T* dst, Lane /*lane*/) override {
        const int nx = b.hi[0] - b.lo[0];
        for_each_row(b, [&](int j, int k) {
            std::memcpy(dst, &u(b.lo[0], j, k), sizeof(T) * nx);
            dst += nx;
        });
    }
    void unpack(const T* src, FieldView<T> u, const Box& b, Lane /*lane*/) override {
        const int nx = b.hi[0] - b.lo[0];
        for_each_row(b, [&](int j, int k) {
            std::memcpy(&u(b.lo[0], j, k), src, sizeof(T) * nx);
            src += nx;
        });
    }

    double sum_sq_diff(FieldView<const T> a, FieldView<const T> c, const Box& b) override {
        double sum = 0.0;
        for_each_row(b, [&](int j, int k) {
            for (int i = b.lo[0]; i < b.hi[0]; ++i) {
                const double d = static_cast<double>(a(i, j, k)) - static_cast<double>(c(i, j, k));
                sum += d * d;
            }
        });
        return sum;
    }
    double sum_sq(FieldView<const T> a, const Box& b) override {
        double sum = 0.0;
        for_each_row(b, [&](int j, int k) {
            for (int i = b.lo[0]; i < b.hi[0]; ++i) {
                const double v = a(i, j, k);
                sum += v * v;
            }
        });
        return sum;
    }

    void wait(Lane /*lane*/) override {}
};

}  // namespace

template <class T>
std::unique_ptr<Backend<T>> make_cpu_backend() {
    return std::make_unique<CpuBackend<T>>();
}

template std::unique_ptr<Backend<float>> make_cpu_backend<float>();
template std::unique_ptr<Backend<double>> make_cpu_backend<double>();

}  // namespace gridsim

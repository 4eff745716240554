// The per-point math of every problem, written once. A stencil is a type with a description (its
// radius and the sum its passes fold) and one point function that reads its neighbours through a
// `Star`. Every loop and kernel (the CPU backend, the CUDA stream, tiled, naive and levels
// kernels, summing passes, the CG's operator) is a template over the stencil type and fills a
// `Star` from wherever it holds the values, so all compute the same expression in the same order
// (README, "Deck keys", gives the definitions).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <type_traits>

#include "mesh/field.hpp"
#include "mesh/host_device.hpp"

namespace gridsim {

// A stencil's coefficients: constant ones per axis (rz = 0 in 2D; heat's r_d = alpha dt / h_d^2)
// and, for a stencil that reads one (kField), a read-only coefficient field laid out as the
// fields it updates (the same extents), else null.
template <class T>
struct AxisCoeffs {
    T rx, ry, rz;
    const T* field = nullptr;
};

// What a point function reads: u() is the point's value, u(d, o) the value o points along axis d
// (0 < |o| <= R; d = 2 only in 3D, and 2D kernels leave z unset, never read). A kernel fills it
// from wherever it holds the values (memory, registers, a tile) by set().
template <class T, int R = 1>
class Star {
public:
    static constexpr int kRadius = R;
    GRIDSIM_HD explicit Star(T c) : c_(c) {}
    // Radius 1 from the six neighbours.
    GRIDSIM_HD Star(T c, T xm, T xp, T ym, T yp, T zm, T zp)
        : c_(c), minus_{{xm}, {ym}, {zm}}, plus_{{xp}, {yp}, {zp}} {
        static_assert(R == 1, "Star: six neighbours make a star of radius 1");
    }
    GRIDSIM_HD T operator()() const { return c_; }
    GRIDSIM_HD T operator()(int d, int o) const {
        return o < 0 ? minus_[d][-o - 1] : plus_[d][o - 1];
    }
    GRIDSIM_HD void set(int d, int o, T v) {
        if (o < 0) {
            minus_[d][-o - 1] = v;
        } else {
            plus_[d][o - 1] = v;
        }
    }

private:
    T c_;
    T minus_[3][R]{};
    T plus_[3][R]{};
};

// What a stencil pass sums over its points beside the update, in double: nothing; the squared
// change (out - in)^2 (jacobi's residual); or the product in * out (the CG's p . A p).
enum class StencilSum { none, change, product };
template <StencilSum Sum, class T>
GRIDSIM_HD inline double stencil_sum_term(T updated, T old) {
    if constexpr (Sum == StencilSum::product) {
        return static_cast<double>(updated) * static_cast<double>(old);
    } else {
        const double d = static_cast<double>(updated) - static_cast<double>(old);
        return d * d;
    }
}

// A stencil type holds:
//  - kRadius: how far along each axis its star reads (a field's halo is this many layers per
//    level of a pass);
//  - kSum: the sum its sweeps and passes may fold beside the update (StencilSum::none if none);
//  - optionally kField = true: it reads the coefficient field AxisCoeffs::field, as a star of the
//    same shape at the same point;
//  - point<Dims>(u, r), or point<Dims>(u, f, r) with kField: the updated value of a point from
//    its Star<T, kRadius> (and the coefficient field's) and the coefficients;
//  - optionally Weights<T>, its constant coefficients combined once by weights<Dims>(r), and
//    point<Dims>(u, w) from them (PointCoeffs), as HeatOrderStencil does.

// FTCS heat: u' = u + sum_d r_d (u[+e_d] + u[-e_d] - 2u). Its sum is the CG's p . A p.
struct HeatStencil {
    static constexpr int kRadius = 1;
    static constexpr StencilSum kSum = StencilSum::product;
    template <int Dims, class T>
    GRIDSIM_HD static T point(const Star<T>& u, const AxisCoeffs<T>& r) {
        const T c = u();
        const T two_c = T(2) * c;
        if constexpr (Dims == 2) {
            return c + r.rx * (u(0, -1) + u(0, 1) - two_c) + r.ry * (u(1, -1) + u(1, 1) - two_c);
        } else {
            return c + r.rx * (u(0, -1) + u(0, 1) - two_c) + r.ry * (u(1, -1) + u(1, 1) - two_c) +
                   r.rz * (u(2, -1) + u(2, 1) - two_c);
        }
    }
};

// Jacobi for Laplace: the mean of the 2*dims neighbours. Its sum is the residual's squared change.
struct JacobiStencil {
    static constexpr int kRadius = 1;
    static constexpr StencilSum kSum = StencilSum::change;
    template <int Dims, class T>
    GRIDSIM_HD static T point(const Star<T>& u, const AxisCoeffs<T>& /*r*/) {
        if constexpr (Dims == 2) {
            return T(0.25) * (u(0, -1) + u(0, 1) + u(1, -1) + u(1, 1));
        } else {
            return (u(0, -1) + u(0, 1) + u(1, -1) + u(1, 1) + u(2, -1) + u(2, 1)) * (T(1) / T(6));
        }
    }
};

// Heat of a higher order (problem.order = 2R: 4 or 8): the same FTCS step with the standard
// central second difference of radius R along each axis, u' = u + sum_d r_d (w_0 u + sum_{o=1..R}
// w_o (u[+o e_d] + u[-o e_d])), its weights combined once (Weights): u' = u + a u + sum_{o=1..R}
// sum_d k_{d,o} (u[+o e_d] + u[-o e_d]), a = w_0 sum_d r_d, k_{d,o} = r_d w_o, a product and a sum
// per pair of neighbours. Its sum is the CG's p . A p.
template <int R>
struct HeatOrderStencil {
    static_assert(R == 2 || R == 4, "HeatOrderStencil: orders 4 and 8");
    static constexpr int kRadius = R;
    static constexpr StencilSum kSum = StencilSum::product;
    // w_0..w_R of the central second difference of order 2R.
    GRIDSIM_HD static constexpr double weight(int o) {
        if (R == 2) return o == 0 ? -5.0 / 2.0 : o == 1 ? 4.0 / 3.0 : -1.0 / 12.0;
        return o == 0   ? -205.0 / 72.0
               : o == 1 ? 8.0 / 5.0
               : o == 2 ? -1.0 / 5.0
               : o == 3 ? 8.0 / 315.0
                        : -1.0 / 560.0;
    }
    // The coefficients combined: own = a, k[d][o - 1] = k_{d,o} (zero for the axes past Dims).
    // weights() forms them by products and sums alone, so they have the same bits wherever they
    // are formed: on the host for the CUDA kernels' parameters (PointCoeffs), or inline.
    template <class T>
    struct Weights {
        T own;
        T k[3][R];
    };
    template <int Dims, class T>
    GRIDSIM_HD static Weights<T> weights(const AxisCoeffs<T>& r) {
        const T rd[3] = {r.rx, r.ry, r.rz};
        Weights<T> w{};
        T sum = rd[0];
        for (int d = 1; d < Dims; ++d) sum += rd[d];
        w.own = static_cast<T>(weight(0)) * sum;
        for (int d = 0; d < Dims; ++d)
            for (int o = 1; o <= R; ++o) w.k[d][o - 1] = rd[d] * static_cast<T>(weight(o));
        return w;
    }
    template <int Dims, class T>
    GRIDSIM_HD static T point(const Star<T, R>& u, const Weights<T>& w) {
        const T c = u();
        T out = c + w.own * c;
        for (int o = 1; o <= R; ++o)
            for (int d = 0; d < Dims; ++d) out += w.k[d][o - 1] * (u(d, -o) + u(d, o));
        return out;
    }
    template <int Dims, class T>
    GRIDSIM_HD static T point(const Star<T, R>& u, const AxisCoeffs<T>& r) {
        return point<Dims>(u, weights<Dims>(r));
    }
};

// a * b + c for a point function whose bits must not depend on the kernel that inlines it: on
// the GPU one fused multiply-add (nvcc contracts a * b + c, or not, as the code around it
// allows), on the CPU a product and a sum (the x86-64 baseline has no FMA instruction). The two
// backends agree to rounding.
template <class T>
GRIDSIM_HD inline T mul_add(T a, T b, T c) {
#ifdef __CUDA_ARCH__
    return fma(a, b, c);
#else
    return a * b + c;
#endif
}

// Heat with a conductivity per face (problem.conductivity = "density"): the coefficient field
// holds a density per point, and the face between two neighbours conducts with the mean of their
// densities, u' = u + sum_d r_d (k+ (u[+e_d] - u) - k- (u - u[-e_d])), k+- = (rho + rho[+-e_d]) /
// 2. The operator I - L stays symmetric (one k per face) and, for positive densities, positive
// definite. Its sum is the CG's p . A p.
struct ConductionStencil {
    static constexpr int kRadius = 1;
    static constexpr StencilSum kSum = StencilSum::product;
    static constexpr bool kField = true;
    template <int Dims, class T>
    GRIDSIM_HD static T point(const Star<T>& u, const Star<T>& rho, const AxisCoeffs<T>& r) {
        const T c = u();
        const T rd[3] = {r.rx, r.ry, r.rz};
        T out = c;
        for (int d = 0; d < Dims; ++d) {
            const T kp = T(0.5) * (rho() + rho(d, 1));
            const T km = T(0.5) * (rho() + rho(d, -1));
            const T flux = mul_add(kp, u(d, 1) - c, -(km * (c - u(d, -1))));
            out = mul_add(rd[d], flux, out);
        }
        return out;
    }
};

// Whether stencil type S reads a coefficient field (S::kField; false where S does not say).
template <class S, class = void>
struct ReadsField : std::false_type {};
template <class S>
struct ReadsField<S, std::void_t<decltype(S::kField)>> : std::bool_constant<S::kField> {};
template <class S>
inline constexpr bool kReadsField = ReadsField<S>::value;
// What a kernel passes S's point function: S::Weights<T>, its coefficients combined once by
// S::weights<Dims>, where S defines them, else AxisCoeffs<T>. The CUDA kernels of stars that are
// not plain take them as a parameter, so that their points read them from the parameter bank
// instead of forming them in registers (docs/tuning.md, "Combined weights").
template <class S, class T, class = void>
struct PointCoeffsOf {
    using type = AxisCoeffs<T>;
};
template <class S, class T>
struct PointCoeffsOf<S, T, std::void_t<typename S::template Weights<T>>> {
    using type = typename S::template Weights<T>;
};
template <class S, class T>
using PointCoeffs = typename PointCoeffsOf<S, T>::type;
template <class S, int Dims, class T>
PointCoeffs<S, T> point_coeffs(const AxisCoeffs<T>& r) {
    if constexpr (std::is_same_v<PointCoeffs<S, T>, AxisCoeffs<T>>) {
        return r;
    } else {
        return S::template weights<Dims>(r);
    }
}
// Whether S is a star of radius 1 with constant coefficients: the only stencils the radius-1
// stream kernel and summing passes take (the tiled kernel takes any star, the levels kernels
// stars of radius 1 that read a coefficient field too).
template <class S>
inline constexpr bool kPlainStar = S::kRadius == 1 && !kReadsField<S>;
// The stencils a deck can name, by run time kind: heat of order 2, 4 and 8, heat with density
// conductivity, jacobi.
enum class StencilKind { heat, heat_order4, heat_order8, conduction, jacobi };

// f(S{}) for the stencil type S of a run-time `kind`: the one dispatch from a run-time kind to
// compiled code (CPU loops, CUDA launches). A kind without a case here does not compile
// (-Werror=switch).
template <class F>
decltype(auto) by_stencil_kind(StencilKind kind, F&& f) {
    switch (kind) {
        case StencilKind::heat:
            return f(HeatStencil{});
        case StencilKind::heat_order4:
            return f(HeatOrderStencil<2>{});
        case StencilKind::heat_order8:
            return f(HeatOrderStencil<4>{});
        case StencilKind::conduction:
            return f(ConductionStencil{});
        case StencilKind::jacobi:
            return f(JacobiStencil{});
    }
    throw std::logic_error("by_stencil_kind: not a stencil kind");
}

// How far along each axis the star of a run-time kind reads.
inline int stencil_radius(StencilKind kind) {
    return by_stencil_kind(kind, [](auto s) { return decltype(s)::kRadius; });
}
// Whether a run-time kind reads a coefficient field.
inline bool stencil_reads_field(StencilKind kind) {
    return by_stencil_kind(kind, [](auto s) { return kReadsField<decltype(s)>; });
}
// Whether a run-time kind is a plain star (kPlainStar).
inline bool stencil_plain_star(StencilKind kind) {
    return by_stencil_kind(kind, [](auto s) { return kPlainStar<decltype(s)>; });
}
template <class T>
struct StencilParams {
    StencilKind kind = StencilKind::heat;
    AxisCoeffs<T> r{};
};

// The update of one point from its value and its neighbours' (zm, zp unused in 2D): the call of
// the kernels that hold a star of radius 1 (tiled, levels), so all compute the same expression.
template <class T, int Dims, class S>
GRIDSIM_HD inline T stencil_point(T c, T xm, T xp, T ym, T yp, T zm, T zp, const AxisCoeffs<T>& r) {
    static_assert(kPlainStar<S>, "stencil_point: a star of radius 1, constant coefficients");
    return S::template point<Dims>(Star<T>(c, xm, xp, ym, yp, zm, zp), r);
}

// The star of radius R around p (strides 1, sy, sz) read from memory.
template <class T, int Dims, int R>
GRIDSIM_HD inline Star<T, R> gather_star(const T* p, const std::int64_t stride[3]) {
    Star<T, R> star(p[0]);
    for (int d = 0; d < Dims; ++d) {  // no z halo exists in 2D: never read one
        for (int o = 1; o <= R; ++o) {
            star.set(d, -o, p[-o * stride[d]]);
            star.set(d, o, p[o * stride[d]]);
        }
    }
    return star;
}

// S's update of the point at index `at` from its star `u`, the coefficient field's star gathered
// from memory where S reads one: every kernel calls this, however it filled `u`. `r`: the
// AxisCoeffs, or S's PointCoeffs.
template <class T, int Dims, class S, class C>
GRIDSIM_HD inline T apply_point(const Star<T, S::kRadius>& u, std::int64_t at,
                                const std::int64_t stride[3], const C& r) {
    if constexpr (kReadsField<S>) {
        return S::template point<Dims>(u, gather_star<T, Dims, S::kRadius>(r.field + at, stride),
                                       r);
    } else {
        (void)at;
        (void)stride;
        return S::template point<Dims>(u, r);
    }
}

// Gathers the star of (i, j, k) from memory and applies the stencil: the whole update of one
// point for loop-based code (CPU backend, naive GPU kernel), any radius.
template <class T, int Dims, class S, class C>
GRIDSIM_HD inline T stencil_at(FieldView<const T> u, int i, int j, int k, const C& r) {
    const std::int64_t at = u.ext.index(i, j, k);
    const std::int64_t stride[3] = {1, u.ext.sy, u.ext.sz};
    return apply_point<T, Dims, S>(gather_star<T, Dims, S::kRadius>(u.data + at, stride), at,
                                   stride, r);
}

}  // namespace gridsim

// The per-point math against hand-computed values, and the CPU backend's loops, packing and
// reductions against direct loops written here.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "kernels/backend.hpp"
#include "kernels/stencil.hpp"
#include "support/random_values.hpp"
#include "support/stencil_kinds.hpp"

using namespace gridsim;

TEST(StencilPoint, HeatMatchesTheFtcsFormula) {
    const AxisCoeffs<double> r{0.1, 0.2, 0.05};
    // 2D: 1 + 0.1*(2+4-2) + 0.2*(3+5-2) = 1 + 0.4 + 1.2
    EXPECT_DOUBLE_EQ(HeatStencil::point<2>(Star<double>(1.0, 2.0, 4.0, 3.0, 5.0, 1.0, 1.0), r),
                     2.6);
    // 3D adds 0.05*(7+9-2) = 0.7
    EXPECT_DOUBLE_EQ(HeatStencil::point<3>(Star<double>(1.0, 2.0, 4.0, 3.0, 5.0, 7.0, 9.0), r),
                     3.3);
    // A linear field is a fixed point of the Laplacian; 2D never reads z.
    EXPECT_DOUBLE_EQ(HeatStencil::point<2>(Star<double>(5.0, 4.0, 6.0, 3.0, 7.0, 99.0, -99.0), r),
                     5.0);
}

TEST(StencilPoint, JacobiIsTheNeighbourMean) {
    const AxisCoeffs<float> rf{};
    EXPECT_FLOAT_EQ(JacobiStencil::point<2>(Star<float>(7.0f, 1.0f, 2.0f, 3.0f, 6.0f, 0, 0), rf),
                    3.0f);
    const AxisCoeffs<double> r{};
    EXPECT_DOUBLE_EQ(JacobiStencil::point<3>(Star<double>(7.0, 1.0, 2.0, 3.0, 4.0, 5.0, 9.0), r),
                     4.0);
}

TEST(StencilPoint, TheStarHandsOutEachNeighbourByAxisAndSide) {
    const Star<int> u(1, 2, 3, 4, 5, 6, 7);
    EXPECT_EQ(u(), 1);
    EXPECT_EQ(u(0, -1), 2);
    EXPECT_EQ(u(0, 1), 3);
    EXPECT_EQ(u(1, -1), 4);
    EXPECT_EQ(u(1, 1), 5);
    EXPECT_EQ(u(2, -1), 6);
    EXPECT_EQ(u(2, 1), 7);
}

// Each run-time kind reaches its own stencil type, with the sum its passes fold.
TEST(StencilPoint, EachKindDispatchesToItsStencilType) {
    EXPECT_TRUE(by_stencil_kind(StencilKind::heat,
                                [](auto s) { return std::is_same_v<decltype(s), HeatStencil>; }));
    EXPECT_TRUE(by_stencil_kind(StencilKind::jacobi,
                                [](auto s) { return std::is_same_v<decltype(s), JacobiStencil>; }));
    static_assert(HeatStencil::kSum == StencilSum::product);
    static_assert(JacobiStencil::kSum == StencilSum::change);
}

// The central second difference of order 2R is exact on polynomials of degree up to 2R + 1: on
// x^m along one axis (h = 1, r = 1 on that axis) the point's change is m (m - 1) x^(m - 2), and
// on x^(2R + 2) it is not. Integers at x = 3, so every sum is exact in double.
template <int R>
void check_exact_degree(StencilKind kind) {
    using S = HeatOrderStencil<R>;
    EXPECT_TRUE(by_stencil_kind(kind, [](auto s) { return std::is_same_v<decltype(s), S>; }));
    static_assert(S::kRadius == R && S::kSum == StencilSum::product);
    for (int axis = 0; axis < 3; ++axis) {
        AxisCoeffs<double> r{0.0, 0.0, 0.0};
        (axis == 0 ? r.rx : axis == 1 ? r.ry : r.rz) = 1.0;
        for (int m = 0; m <= 2 * R + 2; ++m) {
            const double x = 3.0;
            Star<double, R> u(std::pow(x, m));
            for (int d = 0; d < 3; ++d) {
                for (int o = 1; o <= R; ++o) {  // the other axes hold the point's value
                    u.set(d, -o, d == axis ? std::pow(x - o, m) : u());
                    u.set(d, o, d == axis ? std::pow(x + o, m) : u());
                }
            }
            const double exact = m < 2 ? 0.0 : m * (m - 1) * std::pow(x, m - 2);
            const double change = S::template point<3>(u, r) - u();
            if (m <= 2 * R + 1) {
                EXPECT_NEAR(change, exact, 1e-9 * std::pow(x + R, m)) << "R " << R << " m " << m;
            } else {
                EXPECT_GT(std::abs(change - exact), 1e-3) << "R " << R << " m " << m;
            }
        }
    }
}

TEST(StencilPoint, HigherOrderHeatIsExactUpToItsDegree) {
    check_exact_degree<2>(StencilKind::heat_order4);
    check_exact_degree<4>(StencilKind::heat_order8);
    EXPECT_EQ(stencil_radius(StencilKind::heat_order4), 2);
    EXPECT_EQ(stencil_radius(StencilKind::heat_order8), 4);
    EXPECT_EQ(stencil_radius(StencilKind::heat), 1);
}

// The higher orders' combined weights are the products and sums of the definition's (README,
// "Heat, explicit"): a = w_0 sum_d r_d, k_{d,o} = r_d w_o, zero past the dimensions; a kernel that
// takes them (PointCoeffs) gets them, a stencil without them AxisCoeffs. The combined form agrees
// with the definition's, evaluated here in long double, to a few units in the last place.
TEST(StencilPoint, HigherOrderWeightsAreTheDefinitionsCombined) {
    using S = HeatOrderStencil<2>;
    static_assert(std::is_same_v<PointCoeffs<S, double>, S::Weights<double>>);
    static_assert(std::is_same_v<PointCoeffs<HeatStencil, float>, AxisCoeffs<float>>);
    static_assert(std::is_same_v<PointCoeffs<ConductionStencil, double>, AxisCoeffs<double>>);
    const AxisCoeffs<double> r{0.1, 0.2, 0.05};
    const auto w3 = point_coeffs<S, 3>(r);
    EXPECT_EQ(w3.own, -2.5 * (0.1 + 0.2 + 0.05));
    EXPECT_EQ(w3.k[1][0], 0.2 * (4.0 / 3.0));
    EXPECT_EQ(w3.k[2][1], 0.05 * (-1.0 / 12.0));
    const auto w2 = point_coeffs<S, 2>(r);
    EXPECT_EQ(w2.own, -2.5 * (0.1 + 0.2));
    EXPECT_EQ(w2.k[2][0], 0.0);
    EXPECT_EQ(w2.k[2][1], 0.0);
    const std::vector<double> v = test::random_values<double>(13 * 50, 11);
    for (int t = 0; t < 50; ++t) {
        const double* p = v.data() + 13 * t;
        Star<double, 2> u(p[0]);
        long double sum = 0.0L;
        const long double rd[3] = {0.1L, 0.2L, 0.05L};
        for (int d = 0; d < 3; ++d) {
            long double s = -2.5L * p[0];
            for (int o = 1; o <= 2; ++o) {
                u.set(d, -o, p[1 + 4 * d + 2 * (o - 1)]);
                u.set(d, o, p[2 + 4 * d + 2 * (o - 1)]);
                s += static_cast<long double>(S::weight(o)) *
                     (u(d, -o) + static_cast<long double>(u(d, o)));
            }
            sum += rd[d] * s;
        }
        const double want = static_cast<double>(p[0] + sum);
        EXPECT_NEAR(S::point<3>(u, r), want, 8 * std::numeric_limits<double>::epsilon() * 4.0);
        EXPECT_EQ(S::point<3>(u, r), S::point<3>(u, w3));
    }
}

// Density conduction: with one density everywhere it is heat with r_d scaled by it; each face's
// conductivity is the mean of its two densities; the operator is symmetric, bit for bit.
TEST(StencilPoint, ConductionConductsThroughFaceMeans) {
    static_assert(kReadsField<ConductionStencil> && !kPlainStar<ConductionStencil>);
    static_assert(kPlainStar<HeatStencil> && !kReadsField<HeatOrderStencil<2>>);
    EXPECT_TRUE(stencil_reads_field(StencilKind::conduction));
    EXPECT_FALSE(stencil_plain_star(StencilKind::conduction));
    EXPECT_TRUE(stencil_plain_star(StencilKind::jacobi));
    EXPECT_TRUE(by_stencil_kind(StencilKind::conduction, [](auto s) {
        return std::is_same_v<decltype(s), ConductionStencil>;
    }));
    const AxisCoeffs<double> r{0.1, 0.2, 0.05};
    const Star<double> u(1.0, 2.0, 4.0, 3.0, 5.0, 7.0, 9.0);
    const Star<double> three(3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0);
    const AxisCoeffs<double> r3{0.3, 0.6, 0.15};
    EXPECT_NEAR((ConductionStencil::point<3>(u, three, r)), HeatStencil::point<3>(u, r3), 1e-14);
    // x only: faces x- (densities 2 and 4: 3) and x+ (2 and 8: 5); 1 + 0.1 (5 (2 - 1) - 3 (1 - 4)).
    const Star<double> v(1.0, 4.0, 2.0, 1.0, 1.0, 1.0, 1.0);
    const Star<double> rho(2.0, 4.0, 8.0, 1.0, 1.0, 1.0, 1.0);
    EXPECT_DOUBLE_EQ((ConductionStencil::point<2>(v, rho, {0.1, 0.0, 0.0})), 1.0 + 0.1 * 14.0);
}

TEST(StencilPoint, ConductionOperatorIsSymmetric) {
    // A 6 x 5 periodic field, random densities in [0.5, 1.5]: the matrix of u -> stencil(u) - u
    // from unit vectors, each entry against its transpose.
    const FieldExtents e = FieldExtents::make(2, {6, 5, 1}, 1);
    const std::vector<double> noise = test::random_values<double>(e.total, 7);
    std::vector<double> rho(e.total, 0.0);
    auto wrapped = [&](int i, int j) { return e.index((i + 6) % 6, (j + 5) % 5, 0); };
    for (int j = -1; j <= 5; ++j)
        for (int i = -1; i <= 6; ++i) rho[e.index(i, j, 0)] = 1.0 + 0.5 * noise[wrapped(i, j)];
    AxisCoeffs<double> r{0.3, 0.2, 0.0};
    r.field = rho.data();
    std::vector<double> a(30 * 30, 0.0);
    for (int col = 0; col < 30; ++col) {
        std::vector<double> unit(e.total, 0.0);
        for (int j = -1; j <= 5; ++j)
            for (int i = -1; i <= 6; ++i)
                unit[e.index(i, j, 0)] = wrapped(i, j) == e.index(col % 6, col / 6, 0) ? 1.0 : 0.0;
        const FieldView<const double> view{unit.data(), e};
        for (int row = 0; row < 30; ++row) {
            const int i = row % 6;
            const int j = row / 6;
            a[row * 30 + col] =
                stencil_at<double, 2, ConductionStencil>(view, i, j, 0, r) - unit[e.index(i, j, 0)];
        }
    }
    int off_diagonal = 0;
    for (int row = 0; row < 30; ++row)
        for (int col = 0; col < 30; ++col) {
            EXPECT_EQ(a[row * 30 + col], a[col * 30 + row]) << row << " " << col;
            if (row != col && a[row * 30 + col] != 0.0) ++off_diagonal;
        }
    EXPECT_EQ(off_diagonal, 30 * 4);  // four neighbours each
}

TEST(CpuBackend, AppliesTheStencilOnExactlyTheBox) {
    auto be = make_cpu_backend<double>();
    const FieldExtents e = FieldExtents::make(3, {5, 4, 3}, 1);
    const std::vector<double> in_host = test::random_values<double>(e.total, 1);
    Field<double> in = be->allocate_field(e);
    Field<double> out = be->allocate_field(e);
    be->upload(in_host, in.view());
    const Box box{{1, 0, 0}, {4, 4, 2}};
    StencilParams<double> p;
    p.kind = StencilKind::heat;
    p.r = {0.1, 0.15, 0.2};
    // The product sum the CG's operator pass accumulates: in * out over the box, folded.
    be->apply(p, in.view(), out.view(), box, Lane::interior, StencilSum::product);
    const double product = *be->sums().fold_residual();
    double expect_product = 0.0;
    std::vector<double> got;
    be->download(out.view(), got);
    // Direct index arithmetic, independent of FieldView: x stride 1, y stride 7, z stride 42.
    auto at = [&](int i, int j, int k) { return (i + 1) + 7 * (j + 1) + 42 * (k + 1); };
    for (int k = -1; k <= 3; ++k)
        for (int j = -1; j <= 4; ++j)
            for (int i = -1; i <= 5; ++i) {
                if (!box.contains(i, j, k)) {
                    EXPECT_EQ(got[at(i, j, k)], 0.0);
                    continue;
                }
                const double c = in_host[at(i, j, k)];
                const double expect =
                    c + 0.1 * (in_host[at(i - 1, j, k)] + in_host[at(i + 1, j, k)] - 2 * c) +
                    0.15 * (in_host[at(i, j - 1, k)] + in_host[at(i, j + 1, k)] - 2 * c) +
                    0.2 * (in_host[at(i, j, k - 1)] + in_host[at(i, j, k + 1)] - 2 * c);
                EXPECT_DOUBLE_EQ(got[at(i, j, k)], expect);
                expect_product += c * expect;
            }
    EXPECT_NEAR(product, expect_product, 1e-12 * std::abs(expect_product));
    EXPECT_NE(expect_product, 0.0);
}

// A periodic x axis held by one rank: each x halo column is the owned column at the other end.
TEST(CpuBackend, WrapFillsEachHaloFromTheOppositeOwnedLayer) {
    auto be = make_cpu_backend<double>();
    const FieldExtents e = FieldExtents::make(2, {6, 5, 1}, 1);
    std::vector<double> host(e.total);
    for (std::size_t n = 0; n < host.size(); ++n) host[n] = 1000.0 + static_cast<double>(n);
    Field<double> a = be->allocate_field(e);
    be->upload(host, a.view());
    FaceMoves<double> wrap;
    wrap.add(Box{{-1, 0, 0}, {0, 5, 1}}, nullptr, {6, 0, 0});
    wrap.add(Box{{6, 0, 0}, {7, 5, 1}}, nullptr, {-6, 0, 0});
    be->wrap(a.view(), wrap, Lane::boundary);
    std::vector<double> got;
    be->download(a.view(), got);
    for (int j = 0; j < 5; ++j) {
        const int row = 8 * (j + 1);  // halo column 0, owned 1..6, halo column 7
        EXPECT_EQ(got[row + 0], host[row + 6]);
        EXPECT_EQ(got[row + 7], host[row + 1]);
        for (int i = 1; i <= 6; ++i) EXPECT_EQ(got[row + i], host[row + i]);
    }
    for (int i = 0; i < 8; ++i) {  // the y halo rows are not touched
        EXPECT_EQ(got[i], host[i]);
        EXPECT_EQ(got[8 * 6 + i], host[8 * 6 + i]);
    }
}

TEST(CpuBackend, PackUnpackRoundTripAndReductions) {
    auto be = make_cpu_backend<float>();
    const FieldExtents e = FieldExtents::make(2, {6, 5, 1}, 1);
    std::vector<float> host(e.total);
    for (std::size_t n = 0; n < host.size(); ++n) host[n] = static_cast<float>(n);
    Field<float> a = be->allocate_field(e);
    Field<float> b = be->allocate_field(e);
    be->upload(host, a.view());
    // Two faces in one pass: the last owned row and the first owned column.
    const Box face{{0, 4, 0}, {6, 5, 1}};
    const Box column{{0, 0, 0}, {1, 5, 1}};
    std::vector<float> buf(face.count());
    std::vector<float> col(column.count());
    FaceMoves<float> packs;
    packs.add(face, buf.data());
    packs.add(column, col.data());
    be->pack(a.view(), packs, Lane::boundary);
    for (int i = 0; i < 6; ++i) EXPECT_EQ(buf[i], host[(i + 1) + 8 * 5]);
    for (int j = 0; j < 5; ++j) EXPECT_EQ(col[j], host[1 + 8 * (j + 1)]);
    const Box halo{{0, -1, 0}, {6, 0, 1}};
    const Box right{{6, 0, 0}, {7, 5, 1}};
    FaceMoves<float> unpacks;
    unpacks.add(halo, buf.data());
    unpacks.add(right, col.data());
    be->unpack(b.view(), unpacks, Lane::boundary);
    std::vector<float> got;
    be->download(b.view(), got);
    for (int i = 0; i < 6; ++i) EXPECT_EQ(got[i + 1], buf[i]);
    for (int j = 0; j < 5; ++j) EXPECT_EQ(got[7 + 8 * (j + 1)], col[j]);

    const Box owned{{0, 0, 0}, {6, 5, 1}};
    double sum_sq = 0.0;
    for (int j = 0; j < 5; ++j)
        for (int i = 0; i < 6; ++i)
            sum_sq += double(host[(i + 1) + 8 * (j + 1)]) * host[(i + 1) + 8 * (j + 1)];
    EXPECT_DOUBLE_EQ(be->reductions().sum_sq(a.view(), owned), sum_sq);
    EXPECT_DOUBLE_EQ(be->reductions().sum_sq_diff(a.view(), a.view(), owned), 0.0);
}

// The CPU backend's parts: sums, reductions and vector operations, and of the capabilities only
// passes, summing or not (level by level: test_cpu_passes.cpp).
TEST(CpuBackend, HandsOverItsPartsAndOnlyThePassCapabilities) {
    auto be = make_cpu_backend<double>();
    EXPECT_EQ(be->box_sweeps(), nullptr);
    ASSERT_NE(be->time_blocking(), nullptr);
    EXPECT_EQ(be->time_blocking()->faces_first(3, StencilKind::heat), nullptr);
    EXPECT_EQ(be->time_blocking()->pipelined(3, StencilKind::heat), nullptr);
    EXPECT_EQ(be->recorder(), nullptr);
    ASSERT_NE(be->level_sums(), nullptr);
    EXPECT_TRUE(be->level_sums()->sums_levels({}, 2));
    // Passes of up to 8 levels of every stencil, level by level: each a pass over memory.
    for (const StencilKind kind : test::kStencilKinds) {
        for (const int dims : {2, 3}) {
            EXPECT_EQ(be->levels_per_pass(dims, kind), 8);
            EXPECT_EQ(be->levels_per_memory_pass(dims, kind), 1);
        }
    }
    // The required parts are there and work: a fold of nothing is zero, read back by id.
    EXPECT_EQ(be->sums().finish_read(be->sums().fold_and_read()), 0.0);
    auto f = be->allocate_field(FieldExtents::make(2, {4, 3, 1}, 1, be->row_alignment()));
    be->fill(f.view(), Box{{0, 0, 0}, {4, 3, 1}}, 2.0);
    EXPECT_EQ(be->reductions().sum_sq(f.view(), Box{{0, 0, 0}, {4, 3, 1}}), 48.0);
}

// Field layout: every owned and halo point has its own element inside the allocation, and with
// row alignment every owned row starts on an aligned element. A box of a field staged packed
// into host memory, and the landing that says when it is there.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <set>
#include <thread>
#include <vector>

#include "kernels/backend.hpp"
#include "mesh/field.hpp"
#include "mesh/landing.hpp"

using namespace gridsim;

namespace {

void check_layout(int dims, std::array<int, 3> n, int halo, int align) {
    const FieldExtents e = FieldExtents::make(dims, n, halo, align);
    const int hz = dims == 3 ? halo : 0;
    std::set<std::int64_t> seen;
    for (int k = -hz; k < n[2] + hz; ++k)
        for (int j = -halo; j < n[1] + halo; ++j)
            for (int i = -halo; i < n[0] + halo; ++i) {
                const std::int64_t at = e.index(i, j, k);
                ASSERT_GE(at, 0);
                ASSERT_LT(at, e.total);
                ASSERT_TRUE(seen.insert(at).second) << "two points share element " << at;
                if (i == 0) ASSERT_EQ(at % align, 0) << "row " << j << "," << k << " not aligned";
            }
    // Rows are contiguous in x.
    EXPECT_EQ(e.index(1, 0, 0) - e.index(0, 0, 0), 1);
}

}  // namespace

TEST(FieldExtents, UnalignedLayoutIsDense) {
    const FieldExtents e = FieldExtents::make(3, {5, 4, 3}, 1);
    EXPECT_EQ(e.sy, 7);
    EXPECT_EQ(e.sz, 42);
    EXPECT_EQ(e.total, 7 * 6 * 5);
    check_layout(3, {5, 4, 3}, 1, 1);
}

// Without halos and alignment a field is its owned points back to back (a staged download).
TEST(FieldExtents, NoHaloLayoutIsPacked) {
    const FieldExtents e = FieldExtents::make(3, {5, 4, 3}, 0);
    EXPECT_EQ(e.origin, 0);
    EXPECT_EQ(e.sy, 5);
    EXPECT_EQ(e.sz, 20);
    EXPECT_EQ(e.total, 60);
    check_layout(2, {6, 3, 1}, 0, 1);
}

TEST(FieldExtents, AlignedRowsForEveryShape) {
    for (int align : {1, 8, 16, 32}) {
        for (int nx : {1, 7, 31, 32, 33, 100}) {
            check_layout(3, {nx, 3, 2}, 1, align);
            check_layout(2, {nx, 5, 1}, 1, align);
            check_layout(2, {nx, 4, 1}, 2, align);
            check_layout(3, {nx, 3, 2}, 8, align);  // deep halos (time blocks)
        }
    }
}

// pack_start<4> of doubles: the nearest column at or below x whose element's byte offset in the
// allocation is a multiple of 32 (a memory sector), in every row of every plane of a field whose
// rows are aligned to a sector or more; of floats the same with 8.
TEST(FieldExtents, PackStartIsTheNearestSectorStartAtOrBelow) {
    for (int align : {8, 16}) {
        for (int halo : {1, 4, 7}) {
            const FieldExtents e = FieldExtents::make(3, {37, 5, 3}, halo, align);
            for (int x = -halo; x < 37 + halo; ++x) {
                const int c = pack_start<4>(x);
                EXPECT_TRUE(c <= x && c > x - 4) << "x " << x << ", halo " << halo;
                for (int j = -halo; j < 5 + halo; ++j)
                    for (int k = -halo; k < 3 + halo; ++k)
                        EXPECT_EQ(e.index(c, j, k) * 8 % 32, 0) << x << " " << j << " " << k;
                EXPECT_EQ(e.index(pack_start<8>(x), 0, 0) * 4 % 32, 0) << "float, x " << x;
            }
        }
    }
}

// A staged download (Backend::download_box) on the CPU backend: the box's points, and only
// them, land packed x fastest; each point's value is a function of its coordinates, so the
// expected order is known without the field's layout.
TEST(DownloadBox, PacksTheBoxXFastest) {
    auto be = make_cpu_backend<double>();
    const auto value = [](int i, int j, int k) { return 10000.0 * k + 100.0 * j + i + 0.5; };
    for (int dims : {2, 3}) {
        SCOPED_TRACE(dims);
        const std::array<int, 3> n{7, 5, dims == 3 ? 4 : 1};
        Field<double> f = be->allocate_field(FieldExtents::make(dims, n, 2, 8));
        const FieldView<double> u = f.view();
        const int hz = dims == 3 ? 2 : 0;
        for (int k = -hz; k < n[2] + hz; ++k)
            for (int j = -2; j < n[1] + 2; ++j)
                for (int i = -2; i < n[0] + 2; ++i) u(i, j, k) = value(i, j, k);
        const Box box{{1, 2, 0}, {6, 5, dims == 3 ? 3 : 1}};
        std::vector<double> out(static_cast<std::size_t>(box.count()) + 1, -1.0);
        auto landing = std::make_shared<Landing>();
        be->download_box(u, box, out.data(), landing);
        ASSERT_TRUE(landing->wait());
        std::size_t at = 0;
        for (int k = box.lo[2]; k < box.hi[2]; ++k)
            for (int j = box.lo[1]; j < box.hi[1]; ++j)
                for (int i = box.lo[0]; i < box.hi[0]; ++i)
                    ASSERT_EQ(out[at++], value(i, j, k)) << i << "," << j << "," << k;
        EXPECT_EQ(out.back(), -1.0);  // nothing beyond the box's points
    }
}

// The landing of a download: a waiter is released by the landing (from another thread, as the
// CUDA driver's is) and told it may read; an abandoned copy releases it with false; the first
// word stands.
TEST(Landing, ReleasesItsWaiterOnceWithTheFirstWord) {
    Landing landed;
    EXPECT_TRUE(landed.pending());
    std::thread driver([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        landed.land();
    });
    EXPECT_TRUE(landed.wait());
    driver.join();
    landed.abandon();
    EXPECT_TRUE(landed.wait());
    EXPECT_FALSE(landed.pending());

    Landing lost;
    std::thread unwinding([&] { lost.abandon(); });
    EXPECT_FALSE(lost.wait());
    unwinding.join();
    lost.land();
    EXPECT_FALSE(lost.wait());
}

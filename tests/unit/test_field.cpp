// Field layout: every owned and halo point has its own element inside the allocation, and with
// row alignment every owned row starts on an aligned element.
#include <gtest/gtest.h>

#include <set>

#include "field/field.hpp"

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

TEST(FieldExtents, AlignedRowsForEveryShape) {
    for (int align : {1, 8, 16, 32}) {
        for (int nx : {1, 7, 31, 32, 33, 100}) {
            check_layout(3, {nx, 3, 2}, 1, align);
            check_layout(2, {nx, 5, 1}, 1, align);
            check_layout(2, {nx, 4, 1}, 2, align);
        }
    }
}

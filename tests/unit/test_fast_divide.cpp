// FastDivide against the machine's division: every quotient of small dividends by small
// divisors, the ends of the range (2^31 - 1), powers of two and their neighbours, and random
// pairs over the whole range.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "kernels/fast_divide.hpp"

using gridsim::FastDivide;
using gridsim::pow2_ceil;

namespace {

constexpr unsigned kMost = (1u << 31) - 1;  // the largest dividend and divisor allowed

std::vector<unsigned> edge_values() {
    std::vector<unsigned> v{1, 2, 3, 5, 7, 518, 1030, 16400, kMost - 1, kMost};
    for (int b = 1; b < 31; ++b) {
        const unsigned p = 1u << b;
        v.insert(v.end(), {p - 1, p, p + 1});
    }
    return v;
}

}  // namespace

TEST(FastDivide, EveryDividendBelow5000ByEveryDivisorBelow300) {
    for (unsigned d = 1; d < 300; ++d) {
        const FastDivide div(d);
        for (unsigned n = 0; n < 5000; ++n) ASSERT_EQ(div.quotient(n), n / d) << n << " / " << d;
    }
}

TEST(FastDivide, EdgesOfTheRange) {
    const std::vector<unsigned> values = edge_values();
    for (unsigned d : values) {
        const FastDivide div(d);
        EXPECT_EQ(div.divisor(), d);
        for (unsigned n : values) EXPECT_EQ(div.quotient(n), n / d) << n << " / " << d;
        for (unsigned q : {0u, 1u, 2u, 1000u}) {  // around the multiples of d
            const std::uint64_t m = std::uint64_t{q} * d;
            for (std::uint64_t n : {m, m + d - 1, m + d})
                if (n <= kMost)
                    EXPECT_EQ(div.quotient(unsigned(n)), unsigned(n) / d) << n << " / " << d;
        }
    }
}

TEST(FastDivide, RandomPairsOverTheWholeRange) {
    std::mt19937 gen(20261125);
    std::uniform_int_distribution<unsigned> divisor(1, kMost), dividend(0, kMost);
    std::uniform_int_distribution<int> bits(1, 31);
    for (int i = 0; i < 200000; ++i) {
        // Half the divisors drawn by bit length, so that small ones (a face's width) are common.
        const unsigned d =
            i % 2 == 0 ? divisor(gen) : std::max(1u, divisor(gen) >> (31 - bits(gen)));
        const unsigned n = dividend(gen);
        ASSERT_EQ(FastDivide(d).quotient(n), n / d) << n << " / " << d;
    }
}

// pow2_ceil against its definition: a power of two, at least n, and half of it below n.
TEST(Pow2Ceil, TheLeastPowerOfTwoAtLeastN) {
    static_assert(pow2_ceil(7) == 8 && pow2_ceil(8) == 8);  // usable in a constant expression
    for (int n = 1; n <= 5000; ++n) {
        const unsigned p = pow2_ceil(n);
        ASSERT_EQ(p & (p - 1), 0u) << n;
        ASSERT_GE(p, static_cast<unsigned>(n)) << n;
        ASSERT_TRUE(p == 1 || p / 2 < static_cast<unsigned>(n)) << n;
    }
    EXPECT_EQ(pow2_ceil(0), 1u);
}

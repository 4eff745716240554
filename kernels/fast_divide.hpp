// Division by a divisor fixed before a launch, as a multiply and a shift (Granlund and
// Montgomery's method for unsigned division by invariant integers). A plain 32-bit division
// computes the divisor's reciprocal through the conversion and reciprocal units at every call;
// the halo moves, which divide every point's position by their face's extents, were throttled
// on them (ncu).
#pragma once

#include <cstdint>

#include "mesh/host_device.hpp"

namespace gridsim {

// The least power of two of at least n: a ring or a block of that many slots finds a slot by a
// mask, not a division.
constexpr unsigned pow2_ceil(int n) {
    unsigned p = 1;
    while (p < static_cast<unsigned>(n)) p *= 2;
    return p;
}

// n / d for 0 <= n < 2^31 and 1 <= d < 2^31 (the caller keeps to them).
class FastDivide {
public:
    FastDivide() = default;
    explicit FastDivide(unsigned d) : d_(d) {
        while ((std::uint64_t{1} << shift_) < d) ++shift_;  // ceil(log2 d)
        // 2^32 (2^shift - d) / d + 1 < 2^32, since 2^shift - d < d.
        magic_ = static_cast<unsigned>(
            ((std::uint64_t{1} << 32) * ((std::uint64_t{1} << shift_) - d)) / d + 1);
    }
    [[nodiscard]] GRIDSIM_HD unsigned divisor() const { return d_; }
    // The high word of n * magic is below n, so the sum stays below 2^32 for n < 2^31.
    [[nodiscard]] GRIDSIM_HD unsigned quotient(unsigned n) const {
#if defined(__CUDA_ARCH__)
        const unsigned high = __umulhi(n, magic_);
#else
        const auto high = static_cast<unsigned>((std::uint64_t{n} * magic_) >> 32);
#endif
        return (high + n) >> shift_;
    }

private:
    unsigned d_ = 1;
    unsigned magic_ = 1;
    unsigned shift_ = 0;
};

}  // namespace gridsim

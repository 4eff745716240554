// `n` values drawn uniformly from [-1, 1) by a seeded Mersenne twister: the same field on every
// run, for tests that hold one computation against another.
#pragma once

#include <cstddef>
#include <random>
#include <vector>

namespace gridsim::test {

template <class T>
std::vector<T> random_values(std::size_t n, unsigned seed) {
    std::mt19937 gen(seed);
    std::uniform_real_distribution<double> dist(-1.0, 1.0);
    std::vector<T> v(n);
    for (T& x : v) x = static_cast<T>(dist(gen));
    return v;
}

}  // namespace gridsim::test

// The deck's sine initial condition as the README defines it ("Deck keys", initial.kind), written
// here independently of the solver: its values at every point of the full grid (x fastest), and
// its eigenvalue of -alpha dt Lap_h, sum_d 4 r_d sin^2(kappa_d h_d / 2), r_d = alpha dt / h_d^2,
// from which the heat tests build their exact discrete solutions (sine_mode_after_steps).
#pragma once

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <string>
#include <vector>

#include "config/config.hpp"

namespace gridsim::test {

struct SineModeReference {
    std::vector<double> values;  // amplitude 1
    double drop = 0.0;
};

inline SineModeReference sine_mode_reference(const Config& c) {
    constexpr double kPi = 3.14159265358979323846;
    std::array<double, 3> kappa{}, h{};
    SineModeReference ref;
    for (int d = 0; d < c.dims; ++d) {
        h[d] = c.length[d] / (c.cells[d] - 1);
        kappa[d] = c.is_periodic(d) ? 2 * kPi * c.modes[d] / (c.cells[d] * h[d])
                                    : kPi * c.modes[d] / c.length[d];
        const double s = std::sin(kappa[d] * h[d] / 2);
        ref.drop += 4 * c.number("problem.alpha") * c.dt / (h[d] * h[d]) * s * s;
    }
    for (int k = 0; k < c.cells[2]; ++k)
        for (int j = 0; j < c.cells[1]; ++j)
            for (int i = 0; i < c.cells[0]; ++i) {
                const int idx[3] = {i, j, k};
                double v = 1.0;
                for (int d = 0; d < c.dims; ++d) {
                    const double x = idx[d] * h[d];
                    v *= c.is_periodic(d) ? std::cos(kappa[d] * x) : std::sin(kappa[d] * x);
                }
                ref.values.push_back(v);
            }
    return ref;
}

// The mode after the deck's time.steps steps, each multiplying it by `factor(drop)` (explicit:
// 1 - drop; backward Euler: 1 / (1 + drop)).
template <class Factor>
std::vector<double> sine_mode_after_steps(const Config& c, Factor factor) {
    SineModeReference ref = sine_mode_reference(c);
    const double scale = std::pow(factor(ref.drop), static_cast<double>(c.steps));
    for (double& v : ref.values) v *= scale;
    return ref.values;
}

// The heat mode tests' deck: alpha 0.7, the mode (1, 2, 1) in 3D or (2, 1) in 2D on a grid of
// unequal sides, each axis periodic or Dirichlet; `problem` and `time` are more lines of those
// sections.
inline std::string sine_mode_deck(int dims, const char* precision,
                                  const std::array<bool, 3>& periodic, const std::string& problem,
                                  const std::string& time) {
    std::string deck =
        fmt::format("[problem]\nprecision = \"{}\"\nalpha = 0.7\n{}[grid]\n", precision, problem);
    deck += dims == 3 ? "cells = [15, 12, 10]\nlength = [1.0, 0.8, 1.3]\n"
                      : "cells = [19, 14]\nlength = [1.0, 0.6]\n";
    deck += dims == 3 ? "[initial]\nmodes = [1, 2, 1]\n" : "[initial]\nmodes = [2, 1]\n";
    deck += "[boundary]\n";
    for (int d = 0; d < dims; ++d)
        deck += fmt::format("{} = \"{}\"\n", "xyz"[d], periodic[d] ? "periodic" : "dirichlet");
    return deck + "[time]\n" + time;
}

}  // namespace gridsim::test

// Initial and boundary values, and the Fourier mode behind the sine initial condition.
#pragma once

#include <array>
#include <optional>
#include <vector>

#include "config/config.hpp"
#include "kernels/initial.hpp"
#include "mesh/domain.hpp"

namespace gridsim {

// A separable Fourier mode A * prod_d phi_d(x_d): phi_d = sin(kappa_d x) on a Dirichlet axis
// (kappa = k pi / L, zero at both ends), cos(kappa_d x) on a periodic axis (kappa = 2 pi k / P,
// P = N h the period). It is an eigenvector of the discrete Laplacian: Lap_h phi = -sum_d
// (4 / h_d^2) sin^2(kappa_d h_d / 2) phi, so a heat step (explicit or implicit) multiplies it by
// a known factor, and the heat equation decays it as exp(-alpha sum_d kappa_d^2 t).
struct SineMode {
    int dims = 3;
    double amplitude = 1.0;
    std::array<double, 3> kappa{0, 0, 0};
    std::array<bool, 3> cosine{false, false, false};
    std::array<double, 3> sin2_half{0, 0, 0};  // sin^2(kappa_d h_d / 2)
    // phi_d at every full-array index of axis d, tabulated once: the initial condition and
    // the error checks evaluate the mode at every point, three sines each otherwise.
    std::array<std::vector<double>, 3> phi;

    // amplitude * prod_d phi_d at full-array index g.
    [[nodiscard]] double shape(const std::array<int, 3>& g) const {
        double v = amplitude;
        for (int d = 0; d < dims; ++d) v *= phi[d][g[d]];
        return v;
    }
};

// The deck's sine initial condition (initial.modes, initial.amplitude).
SineMode make_sine_mode(const Config& cfg);

// The initial condition of `cfg` in the form every backend evaluates (kernels/initial.hpp).
InitialParams make_initial_params(const Config& cfg, const Domain& dom);

// The global full-array index of the owned point (0, 0, 0) of `sub`.
std::array<int, 3> global_origin(const Domain& dom, const Subdomain& sub);

// The density field of `cfg` (initial.density, [[initial.regions]]) in the same form: at every
// point, Dirichlet faces included.
InitialParams make_density_params(const Config& cfg, const Domain& dom);

}  // namespace gridsim

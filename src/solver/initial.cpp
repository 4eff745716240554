#include "solver/initial.hpp"

#include <algorithm>
#include <cmath>

namespace gridsim {

namespace {

constexpr double kPi = 3.14159265358979323846;

// The value a global Dirichlet point holds, or nullopt for a point that is updated.
std::optional<double> dirichlet_value(const Config& cfg, const Domain& dom,
                                      const std::array<int, 3>& g) {
    if (cfg.benchmark) {  // columns 0 and nx-1: sin(2 pi iy / (ny-1))
        if (g[0] == 0 || g[0] == dom.cells[0] - 1)
            return std::sin(2.0 * kPi * g[1] / (dom.cells[1] - 1));
        return std::nullopt;
    }
    for (int d = 0; d < dom.dims; ++d) {
        if (dom.periodic[d]) continue;
        if (g[d] == 0) return cfg.face_value[2 * d];
        if (g[d] == dom.cells[d] - 1) return cfg.face_value[2 * d + 1];
    }
    return std::nullopt;
}

}  // namespace

double HeatMode::shape(const std::array<double, 3>& x) const {
    double v = amplitude;
    for (int d = 0; d < dims; ++d)
        v *= cosine[d] ? std::cos(kappa[d] * x[d]) : std::sin(kappa[d] * x[d]);
    return v;
}

HeatMode make_heat_mode(const Config& cfg) {
    HeatMode m;
    m.dims = cfg.dims;
    m.amplitude = cfg.amplitude;
    double lambda_drop = 0.0;
    for (int d = 0; d < cfg.dims; ++d) {
        const double h = cfg.spacing(d);
        m.cosine[d] = cfg.is_periodic(d);
        m.kappa[d] = m.cosine[d] ? 2.0 * kPi * cfg.modes[d] / (cfg.cells[d] * h)
                                 : kPi * cfg.modes[d] / cfg.length[d];
        const double r = cfg.alpha * cfg.dt / (h * h);
        const double s = std::sin(m.kappa[d] * h / 2.0);
        lambda_drop += 4.0 * r * s * s;
        m.rate += cfg.alpha * m.kappa[d] * m.kappa[d];
    }
    m.lambda = 1.0 - lambda_drop;
    return m;
}

bool heat_has_analytic_solution(const Config& cfg) {
    if (cfg.problem != ProblemKind::heat || cfg.initial != InitialKind::sine) return false;
    for (int f = 0; f < 2 * cfg.dims; ++f) {
        if (!cfg.is_periodic(f / 2) && cfg.face_value[f] != 0.0) return false;
    }
    return true;
}

double initial_value(const Config& cfg, const Domain& dom, const std::array<int, 3>& g) {
    if (auto v = dirichlet_value(cfg, dom, g)) return *v;
    const std::array<double, 3> x{g[0] * dom.spacing[0], g[1] * dom.spacing[1],
                                  g[2] * dom.spacing[2]};
    switch (cfg.initial) {
        case InitialKind::sine:
            return make_heat_mode(cfg).shape(x);
        case InitialKind::constant:
            return cfg.initial_value;
        case InitialKind::hotspot: {
            const double shortest =
                *std::min_element(cfg.length.begin(), cfg.length.begin() + cfg.dims);
            const double r = cfg.radius * shortest;
            double dist2 = 0.0;
            for (int d = 0; d < cfg.dims; ++d) {
                const double dx = x[d] - cfg.center[d] * cfg.length[d];
                dist2 += dx * dx;
            }
            return dist2 <= r * r ? cfg.amplitude : cfg.initial_value;
        }
    }
    return 0.0;
}

}  // namespace gridsim

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
        for (int i = 0; i < cfg.cells[d]; ++i) {
            const double x = i * h;
            m.phi[d].push_back(m.cosine[d] ? std::cos(m.kappa[d] * x) : std::sin(m.kappa[d] * x));
        }
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

InitialCondition::InitialCondition(const Config& cfg, const Domain& dom)
    : cfg_(cfg),
      dom_(dom),
      mode_(cfg.initial == InitialKind::sine ? make_heat_mode(cfg) : HeatMode{}) {}

double InitialCondition::operator()(const std::array<int, 3>& g) const {
    if (auto v = dirichlet_value(cfg_, dom_, g)) return *v;
    switch (cfg_.initial) {
        case InitialKind::sine:
            return mode_.shape(g);
        case InitialKind::constant:
            return cfg_.initial_value;
        case InitialKind::hotspot: {
            const double shortest =
                *std::min_element(cfg_.length.begin(), cfg_.length.begin() + cfg_.dims);
            const double r = cfg_.radius * shortest;
            double dist2 = 0.0;
            for (int d = 0; d < cfg_.dims; ++d) {
                const double dx = g[d] * dom_.spacing[d] - cfg_.center[d] * cfg_.length[d];
                dist2 += dx * dx;
            }
            return dist2 <= r * r ? cfg_.amplitude : cfg_.initial_value;
        }
    }
    return 0.0;
}

}  // namespace gridsim

#include "engine/initial.hpp"

#include <algorithm>
#include <cmath>

namespace gridsim {

namespace {

constexpr double kPi = 3.14159265358979323846;

// The grid's part of `p`; `faces`: Dirichlet points hold their face's value.
void set_grid(InitialParams& p, const Domain& dom, bool faces) {
    p.dims = dom.dims;
    for (int d = 0; d < 3; ++d) {
        p.cells[d] = dom.cells[d];
        p.spacing[d] = dom.spacing[d];
        p.dirichlet[d] = faces && !dom.periodic[d];
    }
}

}  // namespace

SineMode make_sine_mode(const Config& cfg) {
    SineMode m;
    m.dims = cfg.dims;
    m.amplitude = cfg.amplitude;
    for (int d = 0; d < cfg.dims; ++d) {
        const double h = cfg.spacing(d);
        m.cosine[d] = cfg.is_periodic(d);
        m.kappa[d] = m.cosine[d] ? 2.0 * kPi * cfg.modes[d] / (cfg.cells[d] * h)
                                 : kPi * cfg.modes[d] / cfg.length[d];
        const double s = std::sin(m.kappa[d] * h / 2.0);
        m.sin2_half[d] = s * s;
        for (int i = 0; i < cfg.cells[d]; ++i) {
            const double x = i * h;
            m.phi[d].push_back(m.cosine[d] ? std::cos(m.kappa[d] * x) : std::sin(m.kappa[d] * x));
        }
    }
    return m;
}

InitialParams make_initial_params(const Config& cfg, const Domain& dom) {
    InitialParams p;
    p.shape = cfg.initial == InitialKind::sine      ? InitialShape::sine
              : cfg.initial == InitialKind::hotspot ? InitialShape::hotspot
                                                    : InitialShape::constant;
    set_grid(p, dom, true);
    p.benchmark = cfg.benchmark;
    p.amplitude = cfg.amplitude;
    p.value = cfg.initial_value;
    for (int d = 0; d < 3; ++d) p.centre[d] = cfg.center[d] * cfg.length[d];
    for (int f = 0; f < 6; ++f) p.face_value[f] = cfg.face_value[f];
    if (cfg.initial == InitialKind::sine) {
        const SineMode mode = make_sine_mode(cfg);
        for (int d = 0; d < 3; ++d) {
            p.kappa[d] = mode.kappa[d];
            p.cosine[d] = mode.cosine[d];
        }
    }
    const double shortest = *std::min_element(cfg.length.begin(), cfg.length.begin() + cfg.dims);
    const double r = cfg.radius * shortest;
    p.radius2 = r * r;
    return p;
}

std::array<int, 3> global_origin(const Domain& dom, const Subdomain& sub) {
    return {sub.offset[0] + dom.solved_origin[0], sub.offset[1] + dom.solved_origin[1],
            sub.offset[2] + dom.solved_origin[2]};
}

InitialParams make_density_params(const Config& cfg, const Domain& dom) {
    static_assert(kMaxRegions <= kMaxInitialRegions, "every deck region fits InitialParams");
    InitialParams p;
    p.shape = InitialShape::regions;
    set_grid(p, dom, false);  // a density has no face values
    p.value = cfg.density;
    const double shortest = *std::min_element(cfg.length.begin(), cfg.length.begin() + cfg.dims);
    p.region_count = static_cast<int>(cfg.regions.size());
    for (int n = 0; n < p.region_count; ++n) {
        const DensityRegion& g = cfg.regions[n];
        InitialRegion& r = p.regions[n];
        r.sphere = g.sphere;
        r.value = g.density;
        const double radius = g.radius * shortest;
        r.radius2 = radius * radius;
        for (int d = 0; d < 3; ++d) {
            r.lo[d] = g.lo[d] * cfg.length[d];
            r.hi[d] = g.hi[d] * cfg.length[d];
            r.centre[d] = g.center[d] * cfg.length[d];
        }
    }
    return p;
}

}  // namespace gridsim

// The initial condition at one point, written once for every backend: the CPU backend loops over
// it and the CUDA backend evaluates it on the device (Thrust over counting iterators), so a
// field is set up where it lives. Values at Dirichlet points are the boundary values.
#pragma once

#include <cmath>

#include "mesh/host_device.hpp"

namespace gridsim {

enum class InitialShape { sine, hotspot, constant, regions };

constexpr int kMaxInitialRegions = 16;

// A box (lo <= x <= hi on every axis) or a sphere (|x - centre|^2 <= radius2) in physical
// coordinates, and the value of the points it holds.
struct InitialRegion {
    bool sphere = false;
    double lo[3] = {0, 0, 0};
    double hi[3] = {0, 0, 0};
    double centre[3] = {0, 0, 0};
    double radius2 = 0.0;
    double value = 0.0;
};

// Everything initial_value() needs, resolved from the configuration on the host (plain data,
// copied to the device by value).
struct InitialParams {
    InitialShape shape = InitialShape::constant;
    int dims = 3;
    int cells[3] = {1, 1, 1};  // global points per axis
    double spacing[3] = {1.0, 1.0, 1.0};
    bool dirichlet[3] = {true, true, true};  // a non-periodic axis: its end points are fixed
    double face_value[6] = {0, 0, 0, 0, 0, 0};
    bool benchmark = false;  // jacobi benchmark boundary: columns 0, nx-1 hold sin(2 pi y/(ny-1))
    double amplitude = 1.0;
    // sine: amplitude * prod_d phi_d(x_d), phi_d = cos(kappa_d x) on periodic axes, else sin.
    double kappa[3] = {0, 0, 0};
    bool cosine[3] = {false, false, false};
    // hotspot: `amplitude` where |x - centre|^2 <= radius2, else `value`.
    double centre[3] = {0, 0, 0};
    double radius2 = 0.0;
    double value = 0.0;  // constant, and the background of hotspot and regions
    // regions: `value`, then each region in order over the points it holds.
    InitialRegion regions[kMaxInitialRegions];
    int region_count = 0;
};

// |x - centre|^2 of the point at global index g, each product and sum rounded on its own (the
// same bits on every backend).
GRIDSIM_HD inline double distance2(int dims, const int g[3], const double spacing[3],
                                   const double centre[3]) {
    double dist2 = 0.0;
    for (int d = 0; d < dims; ++d) {
        const double dx = mul_sub_rn(g[d], spacing[d], centre[d]);
        dist2 = mul_add_rn(dx, dx, dist2);
    }
    return dist2;
}

// Whether the point at global index g (x = g * h) lies in region `r`, ends included.
GRIDSIM_HD inline bool region_holds(const InitialRegion& r, int dims, const int g[3],
                                    const double spacing[3]) {
    if (r.sphere) return distance2(dims, g, spacing, r.centre) <= r.radius2;
    for (int d = 0; d < dims; ++d) {
        const double x = g[d] * spacing[d];
        if (x < r.lo[d] || x > r.hi[d]) return false;
    }
    return true;
}

// The value at global full-array index g (the point x = g * h) at t = 0. Where faces meet, the
// x face's value wins, then y's.
GRIDSIM_HD inline double initial_value(const InitialParams& p, const int g[3]) {
    constexpr double kPi = 3.14159265358979323846;
    if (p.benchmark) {
        if (g[0] == 0 || g[0] == p.cells[0] - 1) return sin(2.0 * kPi * g[1] / (p.cells[1] - 1));
    } else {
        for (int d = 0; d < p.dims; ++d) {
            if (!p.dirichlet[d]) continue;
            if (g[d] == 0) return p.face_value[2 * d];
            if (g[d] == p.cells[d] - 1) return p.face_value[2 * d + 1];
        }
    }
    switch (p.shape) {
        case InitialShape::sine: {
            double v = p.amplitude;
            for (int d = 0; d < p.dims; ++d) {
                const double kx = p.kappa[d] * (g[d] * p.spacing[d]);
                v *= p.cosine[d] ? cos(kx) : sin(kx);
            }
            return v;
        }
        case InitialShape::hotspot:
            return distance2(p.dims, g, p.spacing, p.centre) <= p.radius2 ? p.amplitude : p.value;
        case InitialShape::regions: {
            double v = p.value;
            for (int n = 0; n < p.region_count; ++n) {
                if (region_holds(p.regions[n], p.dims, g, p.spacing)) v = p.regions[n].value;
            }
            return v;
        }
        case InitialShape::constant:
            break;
    }
    return p.value;
}

}  // namespace gridsim

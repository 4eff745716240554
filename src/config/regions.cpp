#include "config/regions.hpp"

#include <fmt/format.h>

#include <array>
#include <string_view>

#include "config/config.hpp"
#include "config/deck_reader.hpp"

namespace gridsim {

namespace {

// A density: a positive number (the face conductivities are means of two of them).
double positive_density(const DeckReader& r, std::string_view key) {
    const double v = *r.number(key);
    if (!(v > 0.0)) r.fail(key, "must be > 0");
    return v;
}

// `dims` fractions in [0, 1], one per axis, into `out`.
void read_fractions(const DeckReader& r, std::string_view key, int dims,
                    std::array<double, 3>& out) {
    const auto v = r.numbers(key);
    if (!v) r.fail(key, "is required");
    if (static_cast<int>(v->size()) != dims)
        r.fail(key, fmt::format("expected {} values (one per axis), got {}", dims, v->size()));
    for (int d = 0; d < dims; ++d) {
        if ((*v)[d] < 0.0 || (*v)[d] > 1.0) r.fail(key, "fractions must be in [0, 1]");
        out[d] = (*v)[d];
    }
}

DensityRegion read_region(const DeckReader& r, int dims) {
    r.reject_unknown_keys({"shape", "lo", "hi", "center", "radius", "density"});
    DensityRegion g;
    const auto shape = r.choice("shape", {"box", "sphere"});
    if (!shape) r.fail("shape", "is required: \"box\" or \"sphere\"");
    g.sphere = *shape == 1;
    if (!r.has("density")) r.fail("density", "is required");
    g.density = positive_density(r, "density");
    const std::array<std::string_view, 2> others =
        g.sphere ? std::array<std::string_view, 2>{"lo", "hi"}
                 : std::array<std::string_view, 2>{"center", "radius"};
    for (std::string_view key : others) {
        if (r.has(key))
            r.fail(key, fmt::format("is not a key of a {}", g.sphere ? "sphere" : "box"));
    }
    if (g.sphere) {
        read_fractions(r, "center", dims, g.center);
        if (!r.has("radius")) r.fail("radius", "is required");
        g.radius = *r.number("radius");
        if (!(g.radius > 0.0)) r.fail("radius", "must be > 0 (a fraction of the shortest length)");
        return g;
    }
    read_fractions(r, "lo", dims, g.lo);
    read_fractions(r, "hi", dims, g.hi);
    for (int d = 0; d < dims; ++d) {
        if (g.lo[d] > g.hi[d]) r.fail("hi", "every hi must be >= its lo");
    }
    return g;
}

}  // namespace

void read_density(const DeckReader& r, Config& c) {
    if (r.has("initial.density")) c.density = positive_density(r, "initial.density");
    const std::vector<DeckReader> entries = r.table_array("initial.regions");
    if (entries.size() > static_cast<std::size_t>(kMaxRegions))
        r.fail("initial.regions", fmt::format("at most {} regions", kMaxRegions));
    for (const DeckReader& e : entries) c.regions.push_back(read_region(e, c.dims));
}

}  // namespace gridsim

#include "config/config.hpp"

#include <fmt/format.h>
#include <toml++/toml.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>

#include "config/common_keys.hpp"
#include "config/deck_reader.hpp"
#include "config/mpi_hints.hpp"
#include "config/regions.hpp"

namespace gridsim {

namespace {

// Points per axis: an int with room for the halo layers and row padding around it.
constexpr std::int64_t kMaxCells = std::numeric_limits<int>::max() - 1024;
constexpr std::int64_t kIntMax = std::numeric_limits<int>::max();

// parallel.transport's words, in TransportKind's order: "auto", then the transport table's.
std::vector<std::string> transport_words() {
    std::vector<std::string> words{"auto"};
    for (const TransportRow& row : kTransportRows) words.emplace_back(row.name);
    return words;
}

// The keys every deck may hold, whatever its problem (config/common_keys.cpp, which documents
// each). A problem adds its own (ProblemDeck::keys).
std::vector<std::string_view> common_schema() {
    std::vector<std::string_view> keys;
    for (const CommonKey& k : common_keys()) keys.push_back(k.key);
    return keys;
}

// Every value the field starts from must be finite and, in float, within float's range: an
// amplitude of 1e39 would otherwise start the run from infinities.
void check_representable(const DeckReader& r, const Config& c) {
    const double limit = c.precision == Precision::float32
                             ? static_cast<double>(std::numeric_limits<float>::max())
                             : std::numeric_limits<double>::max();
    auto check = [&](const char* key, double v) {
        if (!(std::abs(v) <= limit))
            r.fail(key, fmt::format("{} cannot be held by a {} field", v, to_string(c.precision)));
    };
    check("initial.amplitude", c.amplitude);
    check("initial.value", c.initial_value);
    for (int f = 0; f < 2 * c.dims; ++f)
        check(r.has("boundary.face_values") ? "boundary.face_values" : "boundary.value",
              c.face_value[f]);
    check("initial.density", c.density);
    for (const DensityRegion& g : c.regions) check("initial.regions", g.density);
}

// "HH:MM:SS" or "D-HH:MM:SS" (Slurm's spelling) in seconds; -1 when it is neither.
double parse_walltime(const std::string& text) {
    int d = 0, h = 0, m = 0, s = 0;
    char tail = 0;
    const bool with_days = std::sscanf(text.c_str(), "%d-%d:%d:%d%c", &d, &h, &m, &s, &tail) == 4;
    if (!with_days) {
        d = 0;
        if (std::sscanf(text.c_str(), "%d:%d:%d%c", &h, &m, &s, &tail) != 3) return -1.0;
    }
    if (d < 0 || h < 0 || m < 0 || m > 59 || s < 0 || s > 59) return -1.0;
    return ((d * 24.0 + h) * 60.0 + m) * 60.0 + s;
}

// An array key whose length must equal the number of grid dimensions.
template <class T>
void read_per_axis(const DeckReader& r, std::string_view key, int dims,
                   const std::optional<std::vector<T>>& values, std::array<T, 3>& out) {
    if (!values) return;
    if (static_cast<int>(values->size()) != dims) {
        r.fail(key, fmt::format("expected {} values (one per axis, grid.cells has {}), got {}",
                                dims, dims, values->size()));
    }
    for (int d = 0; d < dims; ++d) out[d] = (*values)[d];
}

void read_problem_and_grid(const DeckReader& r, Config& c, const ProblemDeck& problem) {
    c.problem = problem.name;
    c.has_time = problem.has_time;
    c.fields = problem.fields;
    c.precision = problem.precision;
    if (auto v = r.choice("problem.precision", {"float", "double"})) c.precision = Precision(*v);

    const auto cells = r.integers("grid.cells");
    if (!cells) r.fail("grid.cells", "is required, e.g. cells = [64, 64, 64]");
    if (cells->size() != 2 && cells->size() != 3) {
        r.fail("grid.cells",
               fmt::format("expected 2 or 3 values (2D or 3D), got {}", cells->size()));
    }
    c.dims = static_cast<int>(cells->size());
    for (int d = 0; d < c.dims; ++d) {
        const std::int64_t n = (*cells)[d];
        if (n < 3 || n > kMaxCells) {
            r.fail("grid.cells",
                   fmt::format("{} points on axis {} is out of range [3, {}]", n, d, kMaxCells));
        }
        c.cells[d] = static_cast<int>(n);
    }
    long double points = 1;
    for (int d = 0; d < c.dims; ++d) points *= c.cells[d];
    if (points > static_cast<long double>(std::int64_t{1} << 62)) {
        r.fail("grid.cells", fmt::format("{:.3g} points in all: more than 2^62, the most gridsim "
                                         "counts",
                                         static_cast<double>(points)));
    }
    read_per_axis(r, "grid.length", c.dims, r.numbers("grid.length"), c.length);
    for (int d = 0; d < c.dims; ++d) {
        if (c.length[d] <= 0) r.fail("grid.length", "every length must be > 0");
    }
}

void read_boundary(const DeckReader& r, Config& c, const ProblemDeck& problem,
                   const std::vector<const ProblemDeck*>& problems) {
    int kind = 0;  // dirichlet
    if (auto v = r.choice("boundary.kind", {"dirichlet", "periodic", "benchmark"})) kind = *v;
    c.benchmark = kind == 2;
    c.axis_bc.fill(kind == 1 ? AxisBc::periodic : AxisBc::dirichlet);
    const char* axis_keys[] = {"boundary.x", "boundary.y", "boundary.z"};
    for (int d = 0; d < 3; ++d) {
        if (auto v = r.choice(axis_keys[d], {"dirichlet", "periodic"})) {
            if (c.benchmark)
                r.fail(axis_keys[d], "cannot be set with boundary.kind = \"benchmark\"");
            if (d >= c.dims) r.fail(axis_keys[d], "the grid is 2D (grid.cells has 2 values)");
            c.axis_bc[d] = AxisBc(*v);
        }
    }
    if (auto v = r.number("boundary.value")) c.face_value.fill(*v);
    if (auto v = r.numbers("boundary.face_values")) {
        if (static_cast<int>(v->size()) != 2 * c.dims) {
            r.fail("boundary.face_values",
                   fmt::format("expected {} values (x_lo, x_hi, y_lo, y_hi{}), got {}", 2 * c.dims,
                               c.dims == 3 ? ", z_lo, z_hi" : "", v->size()));
        }
        for (int f = 0; f < 2 * c.dims; ++f) c.face_value[f] = (*v)[f];
    }
    if (c.benchmark) {
        if (!problem.benchmark_boundary || c.dims != 2) {
            const auto owner =
                std::find_if(problems.begin(), problems.end(),
                             [](const ProblemDeck* p) { return p->benchmark_boundary; });
            const std::string name = owner != problems.end() ? (*owner)->name : problem.name;
            r.fail("boundary.kind",
                   fmt::format("\"benchmark\" is the 2D {} benchmark: needs problem.name = "
                               "\"{}\" and 2 grid.cells",
                               name, name));
        }
        // x: columns 0 and nx-1 hold sin(2*pi*iy/(ny-1)); y: periodic over rows 1..ny-2.
        c.axis_bc[0] = AxisBc::dirichlet;
        c.axis_bc[1] = AxisBc::periodic;
    }
}

void read_initial(const DeckReader& r, Config& c, const ProblemDeck& problem) {
    c.initial = problem.initial;
    if (auto v = r.choice("initial.kind", {"sine", "hotspot", "constant"}))
        c.initial = InitialKind(*v);
    if (auto v = r.integers("initial.modes")) {
        std::vector<int> modes;
        for (auto m : *v) {
            if (m < 0 || m > kIntMax)
                r.fail("initial.modes", fmt::format("mode {} must be >= 0", m));
            modes.push_back(static_cast<int>(m));
        }
        read_per_axis(r, "initial.modes", c.dims, std::optional(modes), c.modes);
    }
    if (auto v = r.number("initial.amplitude")) c.amplitude = *v;
    read_per_axis(r, "initial.center", c.dims, r.numbers("initial.center"), c.center);
    for (int d = 0; d < c.dims; ++d) {
        if (c.center[d] < 0 || c.center[d] > 1)
            r.fail("initial.center", "fractions must be in [0, 1]");
    }
    if (auto v = r.number("initial.radius")) {
        if (*v <= 0 || *v > 1)
            r.fail("initial.radius", "must be in (0, 1] (a fraction of the shortest length)");
        c.radius = *v;
    }
    if (auto v = r.number("initial.value")) c.initial_value = *v;
    read_density(r, c);
    // A sine product is neither periodic over the benchmark's rows 1..ny-2 nor an eigenmode of
    // its boundary, so it would define nothing anyone could check.
    if (c.benchmark && c.initial == InitialKind::sine)
        r.fail("initial.kind",
               "\"sine\" is not defined with boundary.kind = \"benchmark\" "
               "(use \"constant\" or \"hotspot\")");
}

void read_time(const DeckReader& r, Config& c) {
    if (auto v = r.integer("time.steps", 1, std::numeric_limits<std::int64_t>::max())) c.steps = *v;
}

// The keys the problem owns, each checked against its KeySpec (type, range, choices).
void read_params(const DeckReader& r, const std::vector<KeySpec>& keys, Config& c) {
    for (const KeySpec& k : keys) {
        ParamValue value = k.fallback;
        if (std::holds_alternative<bool>(k.fallback)) {
            if (auto v = r.boolean(k.key)) value = *v;
        } else if (std::holds_alternative<std::int64_t>(k.fallback)) {
            const auto lo = static_cast<std::int64_t>(std::max(k.min, -9.2e18));
            const auto hi = static_cast<std::int64_t>(std::min(k.max, 9.2e18));
            if (auto v = r.integer(k.key, lo, hi)) value = *v;
        } else if (std::holds_alternative<double>(k.fallback)) {
            if (auto v = r.number(k.key)) {
                const bool low = k.min_open ? !(*v > k.min) : !(*v >= k.min);
                if (low || !(*v <= k.max)) r.fail(k.key, k.must);
                value = *v;
            }
        } else if (!k.choices.empty()) {
            if (auto v = r.choice(k.key, k.choices)) value = k.choices[*v];
        } else if (auto v = r.string(k.key)) {
            value = *v;
        }
        c.params[k.key] = value;
    }
}

void read_block(const DeckReader& r, const std::vector<std::int64_t>& v,
                std::array<int, 2>& block) {
    if (v.size() != 2)
        r.fail("parallel.block", fmt::format("expected 2 values [x, y], got {}", v.size()));
    for (int d = 0; d < 2; ++d) {
        if (v[d] < 0 || v[d] > 1024)
            r.fail("parallel.block", "values must be in [0, 1024] (0 = default)");
        block[d] = static_cast<int>(v[d]);
    }
    if ((block[0] == 0) != (block[1] == 0)) r.fail("parallel.block", "give both values or neither");
    if (block[0] * block[1] > 1024) r.fail("parallel.block", "at most 1024 threads per block");
}

void read_output_files(const DeckReader& r, Config& c) {
    constexpr auto kMax = std::numeric_limits<std::int64_t>::max();
    if (auto v = r.string("output.dir")) {
        if (v->empty())
            r.fail("output.dir", "must not be empty (use \".\" for the working directory)");
        if (v->find('\0') != std::string::npos)
            r.fail("output.dir", "must not contain a NUL character");
        c.output_dir = *v;
    }
    if (auto v = r.string("output.prefix")) {
        const bool control = std::any_of(v->begin(), v->end(), [](char ch) {
            return static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f;
        });
        if (v->empty() || *v == "." || *v == ".." || v->find('/') != std::string::npos || control)
            r.fail("output.prefix",
                   "must be a file name: not empty, no '/', no NUL or other control characters");
        c.output_prefix = *v;
    }
    if (auto v = r.integer("output.snapshot_every", 0, kMax)) c.snapshot_every = *v;
    if (auto v = r.boolean("output.write_final")) c.write_final = *v;
    if (auto v = r.choice("output.precision", {"native", "float", "double"})) {
        c.output_precision = std::array<const char*, 3>{"native", "float", "double"}[*v];
    }
    if (r.has("output.fields")) {
        // The fields the problem writes (ProblemDeck::fields).
        const auto fields = r.strings("output.fields");
        for (const auto& f : fields) {
            if (std::find(c.fields.begin(), c.fields.end(), f) == c.fields.end())
                r.fail("output.fields", fmt::format("unknown field '{}' (available: {})", f,
                                                    fmt::join(c.fields, ", ")));
        }
    }
    if (auto v = r.integer("output.checkpoint_every", 0, kMax)) c.checkpoint_every = *v;
    if (auto v = r.string("output.checkpoint")) {
        if (v->find('\0') != std::string::npos)
            r.fail("output.checkpoint", "must not contain a NUL character");
        if (std::filesystem::is_directory(*v))
            r.fail("output.checkpoint", fmt::format("'{}' is a directory, not a file", *v));
        c.checkpoint = *v;
    }
    if (auto v = r.integer("output.check_every", 0, kMax)) c.check_every = *v;
    if (auto v = r.boolean("output.overwrite")) c.overwrite = *v;
    if (auto v = r.boolean("output.dump_on_failure")) c.dump_on_failure = *v;
    if (auto v = r.choice("output.async", {"auto", "on", "off"}))
        c.output_async = std::array<const char*, 3>{"auto", "on", "off"}[*v];
    if (auto v = r.integer("output.async_buffers", 1, 16)) c.async_buffers = static_cast<int>(*v);
    c.mpi_hints = read_mpi_hints(r);
    if (auto v = r.number("output.max_abs")) {
        if (!(*v >= 0) || std::isinf(*v)) r.fail("output.max_abs", "must be finite and >= 0");
        c.max_abs = *v;
    }
    if (auto v = r.string("run.stall_timeout")) {
        c.stall_timeout = parse_walltime(*v);
        if (c.stall_timeout < 0)
            r.fail("run.stall_timeout",
                   fmt::format("'{}' is not a duration: give \"HH:MM:SS\" (\"00:00:00\" = no "
                               "watchdog)",
                               *v));
    }
    if (auto v = r.string("run.max_walltime")) {
        c.max_walltime = parse_walltime(*v);
        if (c.max_walltime <= 0)
            r.fail("run.max_walltime",
                   fmt::format("'{}' is not a wall time: give \"HH:MM:SS\" or \"D-HH:MM:SS\"", *v));
    }
}

void read_parallel_and_output(const DeckReader& r, Config& c) {
    if (auto v = r.integers("parallel.process_grid")) {
        if (static_cast<int>(v->size()) != c.dims) {
            r.fail("parallel.process_grid",
                   fmt::format("expected {} values (one per axis), got {}", c.dims, v->size()));
        }
        for (int d = 0; d < c.dims; ++d) {
            if ((*v)[d] < 0 || (*v)[d] > kIntMax)
                r.fail("parallel.process_grid", "values must be >= 0 (0 = automatic)");
            c.process_grid[d] = static_cast<int>((*v)[d]);
        }
    }
    if (auto v = r.choice("parallel.backend", {"auto", "cpu", "cuda"})) c.backend = BackendKind(*v);
    if (auto v = r.choice("parallel.transport", transport_words())) c.transport = TransportKind(*v);
    if (c.backend == BackendKind::cpu && moves_device_memory(c.transport)) {
        r.fail("parallel.transport",
               fmt::format("\"{}\" moves device memory and needs the CUDA backend; "
                           "parallel.backend = \"cpu\" uses \"staged\"",
                           to_string(c.transport)));
    }
    if (auto v = r.auto_or_boolean("parallel.overlap", {"fused", "faces_first", "pipelined"}))
        c.overlap = OverlapMode(*v);
    if ((c.overlap == OverlapMode::faces_first || c.overlap == OverlapMode::pipelined) &&
        (c.backend == BackendKind::cpu || c.dims != 3)) {
        const char* mode = to_string(c.overlap);
        r.fail("parallel.overlap",
               c.dims != 3 ? fmt::format("\"{}\" needs a 3D grid (its passes walk along z)", mode)
                           : fmt::format("\"{}\" needs the CUDA backend (parallel.backend = "
                                         "\"cpu\")",
                                         mode));
    }
    if (auto v = r.boolean("parallel.share_gpus")) c.share_gpus = *v;
    for (auto [key, field] :
         {std::pair{"parallel.network_latency_us", &c.network_latency_us},
          std::pair{"parallel.network_bandwidth_GBps", &c.network_bandwidth_gbps}}) {
        if (auto v = r.number(key)) {
            if (!(*v > 0) || std::isinf(*v)) r.fail(key, "must be finite and > 0");
            *field = *v;
        }
    }
    if (auto v = r.auto_or_integer("parallel.ranks_used", 1, kIntMax))
        c.ranks_used = static_cast<int>(*v);
    if (auto v = r.choice("parallel.kernel", {"stream", "tiled", "naive"}))
        c.kernel = KernelKind(*v);
    if (auto v = r.choice("parallel.bind", {"auto", "none", "numa", "strict"}))
        c.bind = BindMode(*v);
    if (auto v = r.integers("parallel.block")) read_block(r, *v, c.block);
    if (auto v = r.integer("parallel.phase_every", 0, 1 << 20))
        c.phase_every = static_cast<int>(*v);
    if (auto v = r.choice("parallel.graphs", {"auto", "on", "off"})) c.graphs = GraphMode(*v);
    if (c.graphs == GraphMode::on && c.backend == BackendKind::cpu)
        r.fail("parallel.graphs", "\"on\" needs the CUDA backend (parallel.backend = \"cpu\")");
    if (auto v = r.auto_or_integer("parallel.time_block", 1, kMaxTimeBlock))
        c.time_block = static_cast<int>(*v);
    if (auto v = r.integer("parallel.rows_per_thread", 0, 4096)) {
        const bool pow2 = *v != 0 && (*v & (*v - 1)) == 0;
        if (c.kernel == KernelKind::naive && *v != 0 && (!pow2 || *v > 8)) {
            r.fail("parallel.rows_per_thread", "the naive kernel takes 1, 2, 4 or 8 (0 = default)");
        }
        c.rows = static_cast<int>(*v);
    }
    if (auto v = r.integer("output.progress_every", 0, std::numeric_limits<std::int64_t>::max())) {
        c.progress_every = *v;
    }
    if (auto v = r.string("output.report")) c.report = *v;
    read_output_files(r, c);
}

}  // namespace

std::string Config::where(const std::string& key) const {
    auto it = origin.find(key);
    return fmt::format("{}: {}: ", it != origin.end() ? it->second : deck_path, key);
}

std::int64_t Config::global_points() const { return std::int64_t{cells[0]} * cells[1] * cells[2]; }

namespace {

template <class V>
const V& param(const Config& c, const std::string& key) {
    const auto it = c.params.find(key);
    if (it == c.params.end() || !std::holds_alternative<V>(it->second))
        throw std::logic_error("problem " + c.problem + " has no key " + key + " of that type");
    return std::get<V>(it->second);
}

// Keys other problems own that the deck gives: checked as their owner would check them (a bad
// value is an error whatever the problem), then listed in Config::ignored, not kept.
void read_other_problems_keys(const DeckReader& r, const ProblemDeck& mine,
                              const std::vector<const ProblemDeck*>& problems, Config& c) {
    for (const ProblemDeck* p : problems) {
        if (p == &mine) continue;
        for (const KeySpec& k : p->keys) {
            const bool own = std::any_of(mine.keys.begin(), mine.keys.end(),
                                         [&](const KeySpec& m) { return m.key == k.key; });
            if (own || !r.has(k.key)) continue;
            Config scratch;
            read_params(r, {k}, scratch);
            c.ignored.push_back(fmt::format("{} (a key of problem {})", k.key, p->name));
        }
    }
}

}  // namespace

double Config::number(const std::string& key) const { return param<double>(*this, key); }
std::int64_t Config::integer(const std::string& key) const {
    return param<std::int64_t>(*this, key);
}
bool Config::flag(const std::string& key) const { return param<bool>(*this, key); }
const std::string& Config::word(const std::string& key) const {
    return param<std::string>(*this, key);
}

Config load_config(const std::string& deck_text, const std::string& path,
                   const std::vector<std::string>& overrides,
                   const std::vector<const ProblemDeck*>& problems) {
    toml::table root;
    try {
        root = toml::parse(std::string_view(deck_text), std::string_view(path));
    } catch (const toml::parse_error& e) {
        throw ConfigError(fmt::format("{}:{}:{}: TOML syntax error: {}", path,
                                      e.source().begin.line, e.source().begin.column,
                                      e.description()));
    }
    const DeckReader reader(root, path, apply_overrides(root, overrides));
    // The problem first: the keys it owns join the schema. The first in the table is the default.
    std::vector<std::string> names;
    for (const ProblemDeck* p : problems) names.push_back(p->name);
    const ProblemDeck& problem = *problems.at(reader.choice("problem.name", names).value_or(0));
    std::vector<std::string_view> schema = common_schema();
    for (const ProblemDeck* p : problems)
        for (const KeySpec& k : p->keys) schema.push_back(k.key);
    reader.reject_unknown_keys(schema, {"output.mpi_hints"});

    Config c;
    c.deck_path = path;
    c.origin = reader.origins();
    read_problem_and_grid(reader, c, problem);
    read_boundary(reader, c, problem, problems);
    read_initial(reader, c, problem);
    read_time(reader, c);
    read_params(reader, problem.keys, c);
    read_other_problems_keys(reader, problem, problems, c);
    read_parallel_and_output(reader, c);
    if (problem.finish) problem.finish(reader, c);
    check_representable(reader, c);
    return c;
}

}  // namespace gridsim

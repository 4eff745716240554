// A resolved configuration written back: the enums' names, and the deck as TOML or JSON
// (gridsim check, the run report, the files' provenance).
#include "config/config.hpp"

#include <fmt/format.h>
#include <toml++/toml.h>

#include <sstream>
#include <string>
#include <vector>

namespace gridsim {

namespace {

constexpr const char* kPrecisionNames[] = {"float", "double"};
constexpr const char* kAxisBcNames[] = {"dirichlet", "periodic"};
constexpr const char* kInitialNames[] = {"sine", "hotspot", "constant"};
constexpr const char* kBackendNames[] = {"auto", "cpu", "cuda"};
constexpr const char* kKernelNames[] = {"stream", "tiled", "naive"};
constexpr const char* kBindNames[] = {"auto", "none", "numa", "strict"};
constexpr const char* kGraphNames[] = {"auto", "on", "off"};
constexpr const char* kOverlapNames[] = {"auto", "on", "off", "fused", "faces_first", "pipelined"};

std::string hms(double seconds) {
    const auto s = static_cast<long long>(seconds);
    return fmt::format("{:02}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60);
}

}  // namespace

std::string toml_text(const ParamValue& v) {
    if (const auto* word = std::get_if<std::string>(&v)) {
        std::string out = "\"";
        for (char ch : *word)
            out += ch == '"' || ch == '\\' ? std::string{'\\', ch} : std::string{ch};
        return out + "\"";
    }
    std::ostringstream os;
    std::visit(
        [&](const auto& x) {
            using V = std::decay_t<decltype(x)>;
            if constexpr (!std::is_same_v<V, std::string>) os << toml::value<V>(x);
        },
        v);
    return os.str();
}

const char* to_string(Precision v) { return kPrecisionNames[static_cast<int>(v)]; }
const char* to_string(AxisBc v) { return kAxisBcNames[static_cast<int>(v)]; }
const char* to_string(InitialKind v) { return kInitialNames[static_cast<int>(v)]; }
const char* to_string(BackendKind v) { return kBackendNames[static_cast<int>(v)]; }
const char* to_string(TransportKind v) {
    return v == TransportKind::automatic ? "auto" : transport_row(v).name;
}
const char* to_string(OverlapMode v) { return kOverlapNames[static_cast<int>(v)]; }
const char* to_string(KernelKind v) { return kKernelNames[static_cast<int>(v)]; }
const char* to_string(BindMode v) { return kBindNames[static_cast<int>(v)]; }
const char* to_string(GraphMode v) { return kGraphNames[static_cast<int>(v)]; }

namespace {

template <class T, std::size_t N>
toml::array first_n(const std::array<T, N>& a, int n) {
    toml::array out;
    for (int i = 0; i < n; ++i) out.push_back(a[i]);
    return out;
}

toml::array strings_array(const std::vector<std::string>& words) {
    toml::array out;
    for (const std::string& w : words) out.push_back(w);
    return out;
}

// [[initial.regions]] as the deck gives them.
toml::array regions_array(const Config& c) {
    toml::array out;
    for (const DensityRegion& g : c.regions) {
        toml::table entry{{"shape", g.sphere ? "sphere" : "box"}};
        if (g.sphere) {
            entry.insert("center", first_n(g.center, c.dims));
            entry.insert("radius", g.radius);
        } else {
            entry.insert("lo", first_n(g.lo, c.dims));
            entry.insert("hi", first_n(g.hi, c.dims));
        }
        entry.insert("density", g.density);
        out.push_back(std::move(entry));
    }
    return out;
}

toml::table to_table(const Config& c) {
    toml::table boundary{{"kind", c.benchmark ? "benchmark" : "dirichlet"},
                         {"face_values", first_n(c.face_value, 2 * c.dims)}};
    if (!c.benchmark) {
        boundary.insert_or_assign("kind", to_string(c.axis_bc[0]));
        const char* axes[] = {"x", "y", "z"};
        for (int d = 0; d < c.dims; ++d) boundary.insert(axes[d], to_string(c.axis_bc[d]));
    }
    toml::table t{
        {"problem", toml::table{{"name", c.problem}, {"precision", to_string(c.precision)}}},
        {"grid",
         toml::table{{"cells", first_n(c.cells, c.dims)}, {"length", first_n(c.length, c.dims)}}},
        {"boundary", boundary},
        {"initial", toml::table{{"kind", to_string(c.initial)},
                                {"modes", first_n(c.modes, c.dims)},
                                {"amplitude", c.amplitude},
                                {"center", first_n(c.center, c.dims)},
                                {"radius", c.radius},
                                {"value", c.initial_value}}},
        {"time", toml::table{{"steps", c.steps}}},
        {"parallel", toml::table{{"process_grid", first_n(c.process_grid, c.dims)},
                                 {"backend", to_string(c.backend)},
                                 {"transport", to_string(c.transport)},
                                 {"share_gpus", c.share_gpus},
                                 {"network_latency_us", c.network_latency_us},
                                 {"network_bandwidth_GBps", c.network_bandwidth_gbps},
                                 {"kernel", to_string(c.kernel)},
                                 {"block", toml::array{c.block[0], c.block[1]}},
                                 {"rows_per_thread", c.rows},
                                 {"phase_every", c.phase_every},
                                 {"graphs", to_string(c.graphs)},
                                 {"bind", to_string(c.bind)}}},
        {"output", toml::table{{"progress_every", c.progress_every},
                               {"report", c.report},
                               {"dir", c.output_dir},
                               {"prefix", c.output_prefix},
                               {"snapshot_every", c.snapshot_every},
                               {"write_final", c.write_final},
                               {"fields", strings_array(c.fields)},
                               {"precision", c.output_precision},
                               {"checkpoint_every", c.checkpoint_every},
                               {"checkpoint", c.checkpoint},
                               {"check_every", c.check_interval()},
                               {"max_abs", c.max_abs},
                               {"overwrite", c.overwrite},
                               {"dump_on_failure", c.dump_on_failure},
                               {"async", c.output_async},
                               {"async_buffers", c.async_buffers}}},
    };
    toml::table* parallel = t.get_as<toml::table>("parallel");
    if (c.overlap != OverlapMode::on && c.overlap != OverlapMode::off) {
        parallel->insert("overlap", to_string(c.overlap));
    } else {
        parallel->insert("overlap", c.overlap == OverlapMode::on);
    }
    if (c.ranks_used == 0) {
        parallel->insert("ranks_used", "auto");
    } else {
        parallel->insert("ranks_used", c.ranks_used);
    }
    if (c.time_block == 0) {
        parallel->insert("time_block", "auto");
    } else {
        parallel->insert("time_block", c.time_block);
    }
    if (!c.mpi_hints.empty()) {
        toml::table hints;
        for (const auto& [name, value] : c.mpi_hints) {
            if (mpi_hint_is_count(value)) {
                hints.insert(name, std::stoll(value));
            } else {
                hints.insert(name, value);
            }
        }
        t.get_as<toml::table>("output")->insert("mpi_hints", hints);
    }
    // The density field only where a deck sets one (it is part of the problem's identity).
    if (c.density != 1.0 || !c.regions.empty())
        t.get_as<toml::table>("initial")->insert("density", c.density);
    if (!c.regions.empty()) t.get_as<toml::table>("initial")->insert("regions", regions_array(c));
    toml::table run{{"stall_timeout", hms(c.stall_timeout)}};
    if (c.max_walltime > 0) run.insert("max_walltime", hms(c.max_walltime));
    t.insert("run", run);
    // The problem's own keys, each in its table ("time.cg_tolerance" in [time]).
    for (const auto& [key, value] : c.params) {
        const auto dot = key.find('.');
        toml::table* table = t.get_as<toml::table>(key.substr(0, dot));
        if (table == nullptr)
            table = t.insert(key.substr(0, dot), toml::table{}).first->second.as_table();
        std::visit([&](const auto& x) { table->insert_or_assign(key.substr(dot + 1), x); }, value);
    }
    return t;
}

}  // namespace

std::string problem_identity(const Config& cfg) {
    const toml::table all = to_table(cfg);
    toml::table part;
    for (const char* name : {"problem", "grid", "boundary", "initial"})
        part.insert(name, *all.get_as<toml::table>(name));
    std::ostringstream os;
    os << part;
    return os.str();
}

std::string to_toml(const Config& cfg) {
    std::ostringstream os;
    os << to_table(cfg) << '\n';
    return os.str();
}

std::string to_json(const Config& cfg) {
    std::ostringstream os;
    os << toml::json_formatter{to_table(cfg)};
    return os.str();
}

}  // namespace gridsim

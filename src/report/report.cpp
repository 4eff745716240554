#include "report/report.hpp"
#include "parallel/collectives.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <stdexcept>

#include "parallel/binding.hpp"
#include "parallel/gather.hpp"
#include "parallel/grid_model.hpp"
#include "parallel/mpi_session.hpp"
#include "platform/backend_select.hpp"
#include "platform/batch_job.hpp"
#include "problems/problem.hpp"

#include "io/output.hpp"
#include "io/provenance.hpp"

namespace gridsim {

namespace {

nlohmann::json phase_stats(const PhaseTimes& mine, MPI_Comm comm) {
    const OverRanks o = over_ranks(comm, mine.data(), static_cast<int>(mine.size()));
    nlohmann::json out = nlohmann::json::object();
    for (std::size_t p = 0; p < mine.size(); ++p)
        out[kPhaseNames[p]] = {{"min", o.min[p]}, {"mean", o.mean[p]}, {"max", o.max[p]}};
    return out;
}

// Every rank's placement (platform/placement.hpp), gathered to rank 0.
nlohmann::json placements(MPI_Comm comm, const RunResult& result) {
    nlohmann::json out = nlohmann::json::array();
    const std::vector<RankPlacement> all = gather_placements(comm, result.placement);
    for (std::size_t rank = 0; rank < all.size(); ++rank) {
        const RankPlacement& p = all[rank];
        nlohmann::json entry = {{"rank", rank},
                                {"host", p.host},
                                {"cpus", p.cpus},
                                {"numa_node", p.numa_node},
                                {"mem_nodes", p.mem_nodes},
                                {"host_pages_numa", p.pages},
                                {"bind_note", p.note}};
        if (!p.gpu.empty()) entry["gpu"] = p.gpu;
        out.push_back(entry);
    }
    return out;
}

// parallel.overlap as a report holds it: "auto", "on" or "off" (reports written before "auto"
// existed hold true or false).
std::string overlap_word(const nlohmann::json& v) {
    if (v.is_boolean()) return v.get<bool>() ? "on" : "off";
    return v.get<std::string>();
}

// Phase time beyond the loop's wall time on a rank: work that ran concurrently, what the
// overlap hid. Mean over ranks (each rank's phases against its own loop time).
double overlap_hidden(const RunResult& r, MPI_Comm comm) {
    double sum = 0.0;
    for (Phase p :
         {Phase::interior, Phase::boundary, Phase::pack, Phase::transfer, Phase::unpack}) {
        sum += r.phases[static_cast<int>(p)];
    }
    const double mine = std::max(0.0, sum - r.loop_seconds_local);
    return reduce_to_root(comm, mine, Reduce::sum) / comm_size(comm);
}

// parallel.time_block = "auto"'s start-up trial: [{time_block, seconds_per_sweep}], [] if none.
nlohmann::json trial_json(const std::vector<TimeBlockTrial>& trial) {
    nlohmann::json a = nlohmann::json::array();
    for (const TimeBlockTrial& t : trial)
        a.push_back({{"time_block", t.k}, {"seconds_per_sweep", t.seconds_per_sweep}});
    return a;
}

// How the exchanging pass ran, by the names the report uses.
const char* pass_name(ExchangePass p) {
    switch (p) {
        case ExchangePass::fused:
            return "fused";
        case ExchangePass::faces_first:
            return "faces_first";
        case ExchangePass::pipelined:
            return "pipelined";
        default:
            return "split";
    }
}

// One depth's times, in seconds per sweep by pass name (faces first where it was timed).
nlohmann::json depth_json(const ExchangeTrial& t, const ExchangeTrial::Depth& d) {
    nlohmann::json j = {{"split_seconds_per_sweep", d.split_seconds_per_sweep},
                        {"fused_seconds_per_sweep", d.fused_seconds_per_sweep}};
    if (t.timed_faces_first) j["faces_first_seconds_per_sweep"] = d.faces_first_seconds_per_sweep;
    if (t.timed_pipelined) j["pipelined_seconds_per_sweep"] = d.pipelined_seconds_per_sweep;
    return j;
}

// null where no trial ran.
nlohmann::json exchange_trial_json(const ExchangeTrial& t) {
    if (!t.ran) return nullptr;
    nlohmann::json depths = nlohmann::json::array();
    for (const ExchangeTrial::Depth& d : t.depths) {
        nlohmann::json j = depth_json(t, d);
        j["time_block"] = d.time_block;
        depths.push_back(j);
    }
    nlohmann::json j = depth_json(t, t.taken_depth());
    j["taken"] = pass_name(t.pass);
    j["depths"] = depths;
    return j;
}

}  // namespace

std::string exchange_trial_text(const ExchangeTrial& t) {
    const char* taken = t.pass == ExchangePass::fused         ? "one launch"
                        : t.pass == ExchangePass::faces_first ? "faces first"
                        : t.pass == ExchangePass::pipelined   ? "pipelined"
                                                              : "split";
    auto times = [&](const ExchangeTrial::Depth& d) {
        std::string s =
            fmt::format("split pass {:.1f} us, one launch then the halos {:.1f} us",
                        d.split_seconds_per_sweep * 1e6, d.fused_seconds_per_sweep * 1e6);
        if (t.timed_faces_first)
            s += fmt::format(", faces first {:.1f} us", d.faces_first_seconds_per_sweep * 1e6);
        if (t.timed_pipelined)
            s += fmt::format(", pipelined {:.1f} us", d.pipelined_seconds_per_sweep * 1e6);
        return s;
    };
    if (t.depths.size() == 1) {
        return fmt::format("  exchange trial  {} per sweep at start-up (slowest rank): {} taken\n",
                           times(t.depths[0]), taken);
    }
    std::vector<std::string> parts;
    for (const ExchangeTrial::Depth& d : t.depths)
        parts.push_back(fmt::format("{} sweeps per exchange: {}", d.time_block, times(d)));
    return fmt::format("  exchange trial  {} per sweep at start-up (slowest rank): {}, {} taken\n",
                       fmt::join(parts, "; "), t.taken_depth().time_block, taken);
}

std::string trial_text(const std::vector<TimeBlockTrial>& trial) {
    std::vector<std::string> parts;
    for (const TimeBlockTrial& t : trial)
        parts.push_back(fmt::format("k = {}: {:.1f} us", t.k, t.seconds_per_sweep * 1e6));
    return fmt::format("{}", fmt::join(parts, ", "));
}

namespace {

// The report's `routes`: faces of all ranks per transport.
nlohmann::json routes_json(const std::vector<std::pair<std::string, int>>& routes) {
    nlohmann::json out = nlohmann::json::object();
    for (const auto& [name, n] : routes) out[name] = n;
    return out;
}

// The report's `nodes`: each node's name and ranks.
nlohmann::json nodes_json(const NodeMap& nodes) {
    nlohmann::json out = nlohmann::json::array();
    for (int n = 0; n < nodes.nodes(); ++n) {
        std::vector<int> world;
        for (int r : nodes.ranks_on(n)) world.push_back(nodes.world_rank.at(r));
        out.push_back(
            {{"name", nodes.names[n]}, {"ranks", nodes.ranks_on(n)}, {"world_ranks", world}});
    }
    return out;
}

// The report's throughput and traffic over the `ran` steps of this run, against the mean copy
// bandwidth of a rank's memory measured in this run.
nlohmann::json traffic_json(const RunResult& r, double ran, double copy_mean) {
    const double lups = static_cast<double>(r.updated_points) * ran;
    // Sweeps per pass over memory: above 1 where blocks of sweeps ran in one pass.
    const double per_pass = r.memory_passes > 0 ? ran / static_cast<double>(r.memory_passes) : 0.0;
    // Compulsory traffic of an explicit stencil: read u once and write u' once per point. The
    // floor adds one read of each coefficient field per point and sweep (a sweep per pass).
    const auto value = static_cast<double>(r.value_bytes);
    const double bytes = 2.0 * value * lups;
    const double floor_per_update = (2.0 + r.coefficient_fields) * value;
    auto per_second = [&](double x) { return r.loop_seconds > 0 ? x / r.loop_seconds : 0.0; };
    auto per_copy = [&](double b) {
        return copy_mean > 0 ? per_second(b) / r.ranks / copy_mean : 0.0;
    };
    return {
        {"glups", per_second(lups) / 1e9},
        {"effective_bandwidth_GBps", per_second(bytes) / 1e9},
        // Per-rank effective bandwidth over the copy bandwidth of one rank's memory: how close
        // the stencil gets to a plain copy. It counts one read and one write per point and
        // sweep, so with several sweeps per pass over memory (time blocking) it can exceed 1:
        // sweeps_per_pass and the modelled DRAM bytes per updated point say why.
        {"copy_bandwidth_GBps", copy_mean / 1e9},
        {"bandwidth_ratio", per_copy(bytes)},
        // The same over the floor's bytes: with a coefficient field, what the field's own traffic
        // leaves out; for a plain star equal to bandwidth_ratio.
        {"coefficient_fields", r.coefficient_fields},
        {"floor_ratio", per_copy(floor_per_update * lups)},
        {"sweeps_per_pass", per_pass},
        {"modelled_dram_bytes_per_update", per_pass > 0 ? floor_per_update / per_pass : 0.0},
    };
}

}  // namespace

nlohmann::json versions() {
    nlohmann::json v = nlohmann::json::object();
    for (const auto& [name, value] : build_versions()) v[name] = value;
    return v;
}

nlohmann::json build_report(const Config& cfg, const RunResult& r, MPI_Comm comm) {
    nlohmann::json phases = phase_stats(r.phases, comm);
    nlohmann::json where = placements(comm, r);
    const double hidden = overlap_hidden(r, comm);
    const double copy_sum = reduce_to_root(comm, r.copy_bandwidth, Reduce::sum);
    if (comm_rank(comm) != 0) return {};
    const double copy_mean = copy_sum / r.ranks;

    // Only the steps this run made count (a restart begins at start_step).
    const auto ran = static_cast<double>(r.steps - r.start_step);
    const double per_step = ran > 0 ? r.loop_seconds / ran : 0.0;
    const BatchJob job = batch_job();
    nlohmann::json doc = {
        {"schema_version", kReportSchemaVersion},
        {"job", {{"scheduler", job.scheduler}, {"id", job.id}, {"step", job.step}}},
        {"config", nlohmann::json::parse(to_json(cfg))},
        {"problem", cfg.problem},
        {"dims", cfg.dims},
        {"ranks", r.ranks},
        {"process_grid",
         std::vector<int>(r.process_grid.begin(), r.process_grid.begin() + cfg.dims)},
        {"backend", r.backend},
        {"backend_note", r.backend_note},
        {"launch", r.launch},
        {"transport", r.transport},
        {"overlap", to_string(cfg.overlap)},
        {"graphs", r.graphs},
        {"time_block", r.time_block},
        {"time_block_trial", trial_json(r.time_block_trial)},
        {"exchange_trial", exchange_trial_json(r.exchange_trial)},
        {"sums_in_passes", r.sums_in_passes},
        {"pipelined_passes", r.pipelined_passes},
        {"precision", to_string(cfg.precision)},
        {"steps", r.steps},
        {"start_step", r.start_step},
        {"dt", r.dt},
        {"sim_time", r.sim_time},
        {"loop_seconds", r.loop_seconds},
        {"startup_s", r.startup_seconds},
        {"time_per_step_s", per_step},
        {"updated_points_per_step", r.updated_points},
        {"field_stats",
         {{"min", r.final_stats.min},
          {"max", r.final_stats.max},
          {"sum", r.final_stats.sum},
          {"nonfinite", r.final_stats.nonfinite}}},
        {"phases", phases},
        {"overlap_hidden_s", hidden},
        {"phase_timing",
         {{"every", r.phase_every}, {"passes", r.passes}, {"timed_passes", r.timed_passes}}},
        {"final_norm", r.final_norm},
        {"placement", where},
        {"nodes", nodes_json(r.nodes)},
        {"ranks_per_node", r.nodes.most_ranks_on_a_node()},
        {"node_tile", r.node_tile},
        {"routes", routes_json(r.routes)},
        {"versions", versions()},
    };
    doc.update(traffic_json(r, ran, copy_mean));
    doc.update(r.problem_report);  // the problem's own figures (its Problem entry)
    return doc;
}

void write_report(const std::string& path, const nlohmann::json& doc) {
    const std::string tmp = path + ".tmp";
    auto fail = [&](const std::string& what) {
        const int err = errno;
        std::remove(tmp.c_str());
        throw std::runtime_error(fmt::format("{}: {}", what, std::strerror(err)));
    };
    {
        std::ofstream out(tmp, std::ios::trunc);
        out << doc.dump(2) << '\n';
        out.close();  // a full disk shows at the flush: check after it
        if (!out) fail("cannot write run report " + tmp);
    }
    if (std::rename(tmp.c_str(), path.c_str()) != 0) fail("cannot rename " + tmp + " to " + path);
}

std::string progress_line(const ProgressSample& s) {
    const auto done = static_cast<double>(s.step - s.start);  // by this run
    const double eta = done > 0 ? s.elapsed_s * static_cast<double>(s.total - s.step) / done : 0.0;
    std::string line = fmt::format("step {}/{}", s.step, s.total);
    if (s.sim_time > 0) line += fmt::format("  t={:.4e}", s.sim_time);
    return line + fmt::format("  {}={:.6e}  {:.3f} GLUP/s  ETA {:.1f} s", s.norm_name, s.norm,
                              s.glups, eta);
}

std::string summary_text(const nlohmann::json& d) {
    auto num = [&](const char* key) { return d[key].get<double>(); };
    auto str = [&](const char* key) { return d[key].get<std::string>(); };
    std::string out = fmt::format(
        "gridsim {} {}D {} {}, {} rank(s){} on process grid {}, backend {}, transport {}, "
        "overlap {}\n",
        str("problem"), d["dims"].get<int>(),
        fmt::join(d["config"]["grid"]["cells"].get<std::vector<int>>(), "x"), str("precision"),
        d["ranks"].get<int>(),
        d.value("ranks_launched", 0) > d["ranks"].get<int>()
            ? fmt::format(" of {} launched", d["ranks_launched"].get<int>())
            : std::string(),
        fmt::join(d["process_grid"].get<std::vector<int>>(), "x"), str("backend"), str("transport"),
        overlap_word(d["overlap"]));
    if (d.value("graphs", false)) out += "  graphs          sweeps replayed as CUDA graphs\n";
    if (d.value("time_block", 1) > 1)
        out += fmt::format(
            "  time blocking   {} sweeps per halo exchange, {:.2f} per pass over memory\n",
            d["time_block"].get<int>(), d["sweeps_per_pass"].get<double>());
    if (!str("backend_note").empty()) out += "  (" + str("backend_note") + ")\n";
    out += fmt::format("  launch          {}\n", str("launch"));
    out += fmt::format("  steps           {}", d["steps"].get<std::int64_t>());
    if (num("dt") > 0)
        out += fmt::format("  (dt = {:.4e}, t = {:.4e})", num("dt"), num("sim_time"));
    out += fmt::format("\n  time per step   {:.4e} s  (loop {:.3f} s, start-up {:.3f} s)\n",
                       num("time_per_step_s"), num("loop_seconds"), num("startup_s"));
    out += fmt::format("  throughput      {:.4f} GLUP/s, effective bandwidth {:.2f} GB/s\n",
                       num("glups"), num("effective_bandwidth_GBps"));
    out += fmt::format(
        "  per rank        {:.1f}% of the {:.1f} GB/s copy bandwidth measured in this run\n",
        100.0 * num("bandwidth_ratio"), num("copy_bandwidth_GBps"));
    if (d.value("coefficient_fields", 0) > 0)
        out += fmt::format(
            "  floor           {:.1f}% of the copy bandwidth, counting {} coefficient field "
            "read(s) per point and sweep too\n",
            100.0 * num("floor_ratio"), d["coefficient_fields"].get<int>());
    out += fmt::format("  overlap         hid {:.4f} s of phase time behind other work ({})\n",
                       num("overlap_hidden_s"), "overlap " + overlap_word(d["overlap"]));
    const auto& timing = d["phase_timing"];
    out += "  phases [s]      min / mean / max over ranks";
    if (timing["every"].get<int>() > 1)
        out += fmt::format(" (stream phases timed on {} of {} passes, every {}th, scaled)",
                           timing["timed_passes"].get<std::int64_t>(),
                           timing["passes"].get<std::int64_t>(), timing["every"].get<int>());
    out += "\n";
    for (const char* name : kPhaseNames) {
        const auto& st = d["phases"][name];
        out += fmt::format("    {:<12}  {:.4f} / {:.4f} / {:.4f}\n", name, st["min"].get<double>(),
                           st["mean"].get<double>(), st["max"].get<double>());
    }
    if (d.contains("output") && d["output"]["files"].get<int>() > 0) {
        const auto& o = d["output"];
        out += fmt::format(
            "  files           {} ({:.4g} MB of fields), {}: writing {:.4f} s ({:.0f} MB/s), "
            "staging {:.4f} s (copies awaited {:.4f} s), waited for {:.4f} s, hidden {:.4f} s\n",
            o["files"].get<int>(), o["field_bytes"].get<double>() / 1e6,
            o["async"].get<bool>() ? "in the background" : "synchronous",
            o["writing_s"].get<double>(), o["write_rate_MBps"].get<double>(),
            o["staging_s"].get<double>(), o["download_wait_s"].get<double>(),
            o["waited_s"].get<double>(), o["hidden_s"].get<double>());
    }
    const auto& fs = d["field_stats"];
    out += fmt::format("  final field     min {:.6e}, max {:.6e}, non-finite points {}\n",
                       fs["min"].get<double>(), fs["max"].get<double>(),
                       fs["nonfinite"].get<std::int64_t>());
    out += find_problem(str("problem")).summary(d);
    return out;
}

}  // namespace gridsim

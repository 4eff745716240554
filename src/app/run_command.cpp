// `gridsim run`.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <iostream>

#include "app/commands.hpp"
#include "io/output.hpp"
#include "mesh/domain.hpp"
#include "parallel/grid_model.hpp"
#include "parallel/rank_share.hpp"
#include "parallel/together.hpp"
#include "platform/backend_select.hpp"
#include "report/report.hpp"
#include "run/run.hpp"
#include "run/stop_request.hpp"

namespace gridsim::app {

namespace {

// A shell word: quoted unless it is plain.
std::string shell_word(const std::string& w) {
    if (!w.empty() && w.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                          "0123456789_-./=:,[]+") == std::string::npos)
        return w;
    std::string out = "'";
    for (char c : w) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

// Why the run stopped before time.steps, where it left its checkpoint and how to continue.
nlohmann::json stop_record(const Config& cfg, const Options& opt, const RunResult& r) {
    std::string again = "gridsim run " + shell_word(opt.deck);
    for (const auto& s : opt.sets) again += " --set " + shell_word(s);
    if (!opt.report.empty()) again += " --report " + shell_word(opt.report);
    again += " --restart " + shell_word(cfg.checkpoint_path());
    const std::string message = fmt::format(
        "stopped at step {} of {} by {}: checkpoint {} written; continue with (under your "
        "launcher):\n  {}",
        r.steps, cfg.steps, r.stopped, cfg.checkpoint_path(), again);
    return {{"reason", r.stopped},
            {"step", r.steps},
            {"checkpoint", cfg.checkpoint_path()},
            {"restart_command", again},
            {"message", message}};
}

// How many of the launched ranks run `cfg` (ranks_to_use). Collective over `world`.
int ranks_for_run(const Config& cfg, MPI_Comm world) {
    const int launched = comm_size(world);
    const bool on_gpus = cfg.ranks_used == 0 && launched > 1 && runs_on_gpus(cfg, world);
    return ranks_to_use(cfg, make_domain(cfg), launched, on_gpus);
}

// The run on the ranks of `share` that run it; returns the exit code.
int run_here(const Config& cfg, const Options& opt, const RankShare& share,
             std::chrono::steady_clock::time_point process_start) {
    const MPI_Comm comm = share.comm();
    const int rank = comm_rank(comm);
    RunOptions run_opt;
    run_opt.measure_copy_bandwidth = true;
    run_opt.process_start = process_start;
    run_opt.on_progress = [rank](const ProgressSample& s) {
        if (rank == 0) std::cout << progress_line(s) << std::endl;
    };
    if (!opt.quiet) {
        run_opt.on_start = [&](const RunStart& s) {
            if (rank != 0) return;
            std::cout << start_header(cfg, s, opt.restart, share.launched())
                      << (opt.verbose ? placement_map(s.placements) : std::string()) << std::flush;
        };
    }
    OutputWriter output(cfg, comm, !opt.restart.empty());
    output.attach(run_opt);
    if (!opt.restart.empty()) attach_restart(opt.restart, cfg, comm, run_opt);
    run_opt.allow_nonfinite_restart = opt.allow_nonfinite;
    const RunResult result = run_problem(cfg, comm, run_opt);
    output.finish();
    nlohmann::json doc = build_report(cfg, result, comm);
    doc["output"] = output.summary(comm);
    if (rank == 0) {
        doc["ranks_launched"] = share.launched();
        doc["outputs"] = output.written();
        if (!opt.restart.empty())
            doc["restarted_from"] = {{"file", opt.restart}, {"step", run_opt.start_step}};
    }
    if (rank == 0) {
        std::cout << summary_text(doc) << std::flush;
        for (const auto& f : output.written()) std::cout << "  wrote           " << f << '\n';
        if (!result.stopped.empty()) doc["stopped"] = stop_record(cfg, opt, result);
    }
    // Checked before the first step; a report that cannot be written now (the file system
    // changed under the run) ends every rank with rank 0's one line.
    if (!cfg.report.empty()) {
        on_rank0_together(comm, [&] {
            write_report(cfg.report, doc);
            std::cout << "  report          " << cfg.report << '\n' << std::flush;
        });
    }
    if (rank == 0 && !result.stopped.empty())
        std::cout << doc["stopped"]["message"].get<std::string>() << std::endl;
    return result.stopped.empty() ? 0 : kExitStopped;
}

}  // namespace

int run_deck(const Options& opt, int rank, std::chrono::steady_clock::time_point process_start) {
    const Config cfg = load_deck(opt, rank);
    install_stop_handlers();  // a waiting rank too: a signal is the running ranks' to act on
    RankShare share(MPI_COMM_WORLD, ranks_for_run(cfg, MPI_COMM_WORLD));
    if (!share.runs_here()) return share.wait();
    // The failures the running ranks end together, without MPI_Abort, end the waiting ranks
    // with the same code; any other ends every rank through MPI_Abort.
    try {
        const int code = run_here(cfg, opt, share, process_start);
        share.release(code);
        return code;
    } catch (const ConfigError&) {
        share.release(kExitBadInput);
        throw;
    } catch (const RunFailure&) {
        share.release(kExitRuntime);
        throw;
    }
}

}  // namespace gridsim::app

// `gridsim run`.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <iostream>

#include "app/commands.hpp"
#include "io/output.hpp"
#include "parallel/together.hpp"
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

}  // namespace

int run_deck(const Options& opt, int rank, std::chrono::steady_clock::time_point process_start) {
    const Config cfg = load_deck(opt, rank);
    RunOptions run_opt;
    run_opt.measure_copy_bandwidth = true;
    run_opt.process_start = process_start;
    run_opt.on_progress = [rank](const ProgressSample& s) {
        if (rank == 0) std::cout << progress_line(s) << std::endl;
    };
    if (!opt.quiet) {
        run_opt.on_start = [&](const RunStart& s) {
            if (rank != 0) return;
            std::cout << start_header(cfg, s, opt.restart)
                      << (opt.verbose ? placement_map(s.placements) : std::string()) << std::flush;
        };
    }
    OutputWriter output(cfg, MPI_COMM_WORLD, !opt.restart.empty());
    output.attach(run_opt);
    if (!opt.restart.empty()) attach_restart(opt.restart, cfg, MPI_COMM_WORLD, run_opt);
    run_opt.allow_nonfinite_restart = opt.allow_nonfinite;
    install_stop_handlers();
    const RunResult result = run_problem(cfg, MPI_COMM_WORLD, run_opt);
    output.finish();
    nlohmann::json doc = build_report(cfg, result, MPI_COMM_WORLD);
    doc["output"] = output.summary(MPI_COMM_WORLD);
    if (rank == 0) {
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
        on_rank0_together(MPI_COMM_WORLD, [&] {
            write_report(cfg.report, doc);
            std::cout << "  report          " << cfg.report << '\n' << std::flush;
        });
    }
    if (rank == 0 && !result.stopped.empty())
        std::cout << doc["stopped"]["message"].get<std::string>() << std::endl;
    return result.stopped.empty() ? 0 : kExitStopped;
}

}  // namespace gridsim::app

// The run report: the JSON document the scaling scripts read, the one-screen summary, and the
// progress line. Building the report is collective (it reduces over ranks).
#pragma once

#include <nlohmann/json.hpp>

#include <mpi.h>

#include <string>

#include "config/config.hpp"
#include "run/run.hpp"

namespace gridsim {

// The report's schema: raised whenever a key changes meaning or goes away (docs/output.md).
constexpr int kReportSchemaVersion = 1;

// Collective over `comm`; the returned document is complete on rank 0 only.
nlohmann::json build_report(const Config& cfg, const RunResult& result, MPI_Comm comm);

// Writes `doc` to `path` through a temporary file renamed into place, so a reader never sees
// a partial report. Throws std::runtime_error on failure.
void write_report(const std::string& path, const nlohmann::json& doc);

// The summary printed at the end of `gridsim run` (from the report document).
std::string summary_text(const nlohmann::json& doc);

// The header rank 0 prints once before the first step, so that a batch log explains itself:
// problem, grid, decomposition, backend and why, transport, kernel, memory, outputs.
// `launched`: the ranks mpirun started (RankShare), where some may wait idle.
std::string start_header(const Config& cfg, const RunStart& s, const std::string& restart,
                         int launched);

// The header's exchange trial: one depth "split pass A us, one launch then the halos B us[, faces
// first C us[, pipelined D us]] per sweep ...: one launch taken"; with a depth trial, each
// depth's times and the depth taken.
std::string exchange_trial_text(const ExchangeTrial& t);
// "k = 2: A us, k = 3: B us", each k's time per sweep.
std::string trial_text(const std::vector<TimeBlockTrial>& trial);

// The placement map: one line per rank (host, GPU, NUMA node, CPUs, memory policy, where a
// host buffer's pages are, and why).
std::string placement_map(const std::vector<RankPlacement>& ranks);

// One progress line ("step 100/1000 ..."), printed and flushed by rank 0.
std::string progress_line(const ProgressSample& s);

nlohmann::json versions();

}  // namespace gridsim

// The problem table: every problem gridsim runs is one entry, defined in one file (heat.cpp,
// jacobi.cpp) and registered with one line in problem_table.cpp. An entry says everything the
// rest of gridsim needs to know about a problem (docs/architecture.md, "Adding things"):
// its name and deck keys (read and checked by the config layer, listed by `gridsim problems`
// and README's key tables), its fields, whether it has a physical time, the start header's line
// about it, the run itself, and what it adds to the text summary of a report.
#pragma once

#include <nlohmann/json.hpp>

#include <functional>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "kernels/stencil.hpp"
#include "run/run.hpp"

namespace gridsim {

struct Problem {
    ProblemDeck deck;
    // How many fields shaped like the solution a run holds in backend memory (the memory check
    // and `gridsim check`): the current and next field, and a solver's work vectors.
    std::function<int(const Config&)> field_count = [](const Config&) { return 2; };
    // The stencil its sweeps apply: its radius is the halo depth per sweep.
    std::function<StencilKind(const Config&)> stencil;
    // The start header's line(s) about the problem's own settings, each ending in '\n'.
    std::function<std::string(const Config&)> describe;
    // Runs the deck (either precision) to completion; everything it reports beyond the common
    // figures goes in RunResult::problem_report.
    std::function<RunResult(const Config&, MPI_Comm, const RunOptions&)> run;
    // The text summary's lines about those additions, from the report document.
    std::function<std::string(const nlohmann::json& report)> summary;
};

// A Problem::run that calls `single` or `twice` by the deck's problem.precision.
using RunFunction = RunResult (*)(const Config&, MPI_Comm, const RunOptions&);
inline std::function<RunResult(const Config&, MPI_Comm, const RunOptions&)> by_precision(
    RunFunction single, RunFunction twice) {
    return [single, twice](const Config& cfg, MPI_Comm comm, const RunOptions& opt) {
        return cfg.precision == Precision::float32 ? single(cfg, comm, opt) : twice(cfg, comm, opt);
    };
}

// Every problem, the default (heat) first.
const std::vector<const Problem*>& problems();
// The entry named `name` (std::logic_error when there is none: configs only hold known names).
const Problem& find_problem(const std::string& name);

// config/config.hpp's load_config with the problem table.
Config load_config(const std::string& deck_text, const std::string& path,
                   const std::vector<std::string>& overrides);

// docs/deck-keys.md: every deck key, the common ones and each problem's, with its type, default
// and meaning (gridsim problems --markdown prints it; a test holds the file to it).
std::string deck_keys_markdown();
// Every problem: name, summary, physical time, fields and keys with their defaults (gridsim
// problems).
std::string problems_text();

}  // namespace gridsim

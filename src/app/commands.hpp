// The gridsim command line: what each command takes, and the commands that run decks.
//
// Exit codes: 0 success, 1 runtime failure (all ranks aborted), 2 bad input or usage, 3 stopped
// early with a checkpoint. Bad input is detected identically on every rank (rank 0 reads the
// deck and broadcasts its text), so every rank returns 2 together and rank 0 prints the message
// once.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "config/config.hpp"

namespace gridsim::app {

constexpr int kExitRuntime = 1;
constexpr int kExitBadInput = 2;
constexpr int kExitStopped = 3;  // stopped early with a checkpoint: continue with --restart

struct Options {
    std::string deck;
    std::vector<std::string> sets;
    std::string report;
    bool quiet = false;
    bool verbose = false;
    bool allow_nonfinite = false;
    bool json = false;
    std::string restart;
    int ranks = 0;           // check: also print the process grid this many ranks would use
    int ranks_per_node = 0;  // check: with --ranks, over nodes of this many ranks each
};

// The deck with --set and --report applied, read by rank 0 and the same on every rank; throws
// ConfigError (on every rank) for a deck that cannot be read or a report that cannot be written.
Config load_deck(const Options& opt, int rank);

// `gridsim check`: the resolved deck (TOML or JSON), the process grid for --ranks and the memory
// per rank. Returns the exit code.
int check_deck(const Options& opt, int rank);

// `gridsim run`: runs the deck, prints the header, progress and summary, writes the report.
// `process_start`: when main() began (the report's start-up time). Returns the exit code.
int run_deck(const Options& opt, int rank, std::chrono::steady_clock::time_point process_start);

}  // namespace gridsim::app

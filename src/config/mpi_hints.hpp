// output.mpi_hints: MPI-IO hints for the HDF5 files gridsim writes, as a table of name = value
// (MPI_Info keys and values are text). The hints MPI-IO implementations document for parallel
// file systems are checked for their kind of value; any other name passes through as given.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace gridsim {

class DeckReader;

// (name, value) in deck order.
using MpiHints = std::vector<std::pair<std::string, std::string>>;

// "" when `value` suits hint `name` (`is_integer`: the deck gave an integer), else why not.
std::string mpi_hint_problem(const std::string& name, const std::string& value, bool is_integer);

// output.mpi_hints of a deck, checked (ConfigError naming the key).
MpiHints read_mpi_hints(const DeckReader& r);

// Whether a hint's value is a plain count (written back to a deck as an integer).
bool mpi_hint_is_count(const std::string& value);

// "name=value, ..." ("" when empty): how reports and file provenance record them.
std::string mpi_hints_text(const MpiHints& hints);

}  // namespace gridsim

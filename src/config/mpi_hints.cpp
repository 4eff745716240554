#include "config/mpi_hints.hpp"

#include <algorithm>
#include <array>
#include <string_view>

#include "config/deck_reader.hpp"

namespace gridsim {

namespace {

// Hints whose value is a count of bytes or of things (Lustre striping, GPFS and ROMIO buffers,
// aggregators), and hints that switch a ROMIO optimisation.
constexpr std::array<std::string_view, 7> kCounts = {
    "striping_factor",      "striping_unit",      "cb_nodes",
    "cb_buffer_size",       "ind_rd_buffer_size", "ind_wr_buffer_size",
    "romio_lustre_co_ratio"};
constexpr std::array<std::string_view, 4> kSwitches = {"romio_cb_write", "romio_cb_read",
                                                       "romio_ds_write", "romio_ds_read"};

template <std::size_t N>
bool among(const std::array<std::string_view, N>& names, const std::string& name) {
    return std::find(names.begin(), names.end(), name) != names.end();
}

}  // namespace

std::string mpi_hint_problem(const std::string& name, const std::string& value, bool is_integer) {
    if (among(kCounts, name)) {
        const bool digits =
            !value.empty() && value.find_first_not_of("0123456789") == std::string::npos;
        if (!digits || value.find_first_not_of('0') == std::string::npos)
            return "expected a positive integer, got " + (is_integer ? value : "\"" + value + "\"");
        return {};
    }
    if (among(kSwitches, name)) {
        if (value != "enable" && value != "disable" && value != "automatic")
            return "expected \"enable\", \"disable\" or \"automatic\", got " +
                   (is_integer ? value : "\"" + value + "\"");
        return {};
    }
    if (value.empty()) return "an empty value";
    return {};
}

MpiHints read_mpi_hints(const DeckReader& r) {
    return r.scalar_table("output.mpi_hints", &mpi_hint_problem);
}

bool mpi_hint_is_count(const std::string& value) {
    return !value.empty() && value.size() < 19 &&
           value.find_first_not_of("0123456789") == std::string::npos;
}

std::string mpi_hints_text(const MpiHints& hints) {
    std::string out;
    for (const auto& [name, value] : hints) {
        if (!out.empty()) out += ", ";
        out += name + "=" + value;
    }
    return out;
}

}  // namespace gridsim

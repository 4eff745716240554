// A deck given as text, resolved, with its domain: what the process-grid and layout tests start
// from.
#pragma once

#include <string>
#include <vector>

#include "config/config.hpp"
#include "mesh/domain.hpp"
#include "problems/problem.hpp"

namespace gridsim::test {

struct DeckCase {
    Config cfg;
    Domain dom;
};

inline DeckCase make_case(const std::string& deck, const std::vector<std::string>& sets = {}) {
    DeckCase c{load_config(deck, "t.toml", sets), {}};
    c.dom = make_domain(c.cfg);
    return c;
}

}  // namespace gridsim::test

// The deck keys every problem shares: the schema the reader checks a deck against, and each
// key's type, default and meaning, from which docs/deck-keys.md is generated
// (`gridsim problems --markdown`). A problem adds its own keys (ProblemDeck::keys).
#pragma once

#include <string_view>
#include <vector>

namespace gridsim {

struct CommonKey {
    std::string_view key;           // "time.steps"
    std::string_view type;          // "integer", "string", "[integer, ...]", ...
    std::string_view default_text;  // as the docs show it
    std::string_view meaning;       // at most 30 words
};

const std::vector<CommonKey>& common_keys();

}  // namespace gridsim

#include <fmt/format.h>

#include <stdexcept>

#include "solver/problem.hpp"

namespace gridsim {

// Defined in each problem's file.
const Problem& heat_problem();
const Problem& jacobi_problem();

const std::vector<const Problem*>& problems() {
    // Registration: one line per problem. The first is the default problem.name.
    static const std::vector<const Problem*> table{&heat_problem(), &jacobi_problem()};
    return table;
}

const Problem& find_problem(const std::string& name) {
    for (const Problem* p : problems())
        if (p->deck.name == name) return *p;
    throw std::logic_error("no problem named " + name);
}

Config load_config(const std::string& deck_text, const std::string& path,
                   const std::vector<std::string>& overrides) {
    std::vector<const ProblemDeck*> decks;
    for (const Problem* p : problems()) decks.push_back(&p->deck);
    return load_config(deck_text, path, overrides, decks);
}

std::string problem_keys_markdown() {
    std::string out;
    for (const Problem* p : problems()) {
        const ProblemDeck& d = p->deck;
        out +=
            fmt::format("**{}** ({}): {}\n\n", d.name,
                        d.has_time ? "physical time t = step x dt" : "no physical time", d.summary);
        out += "| key | default | meaning |\n| --- | --- | --- |\n";
        for (const KeySpec& k : d.keys) {
            std::string meaning = k.meaning;
            if (!k.choices.empty())
                meaning += fmt::format(" (one of: `{}`)", fmt::join(k.choices, "`, `"));
            out += fmt::format(
                "| `{}` | {} | {} |\n", k.key,
                k.default_text.empty() ? "`" + toml_text(k.fallback) + "`" : k.default_text,
                meaning);
        }
        out += "\n";
    }
    return out;
}

std::string problems_text() {
    std::string out;
    for (const Problem* p : problems()) {
        const ProblemDeck& d = p->deck;
        out += fmt::format("{}{}: {}\n", d.name, p == problems().front() ? " (default)" : "",
                           d.summary);
        out += fmt::format("  time     {}\n", d.has_time ? "physical, t = step x dt" : "none");
        out += fmt::format("  fields   {}\n", fmt::join(d.fields, ", "));
        for (const KeySpec& k : d.keys) {
            std::string values = toml_text(k.fallback);
            if (!k.choices.empty())
                values = fmt::format("{} (of {})", values, fmt::join(k.choices, ", "));
            out += fmt::format("  {:<26} {}\n", k.key, values);
        }
    }
    return out;
}

}  // namespace gridsim

// Typed, checked access to a parsed TOML deck. Every getter names the file, line and key in
// its error; keys not in the schema are rejected before anything is read.
#pragma once

#include <toml++/toml.h>

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gridsim {

class DeckReader {
public:
    // `origin_override` maps dotted keys set by --set to the text that set them.
    DeckReader(const toml::table& root, std::string path,
               std::map<std::string, std::string> origin_override);

    // A reader of each table of the array of tables `key` ([[key]] in the deck), in deck order,
    // its errors naming "key[n].name" at the entry's line; [] when absent.
    [[nodiscard]] std::vector<DeckReader> table_array(std::string_view key) const;

    // Throws ConfigError for the first key (in document order) that `schema` does not list and
    // that is not inside one of `open_tables` (tables whose keys the deck names, such as
    // output.mpi_hints).
    void reject_unknown_keys(const std::vector<std::string_view>& schema,
                             const std::vector<std::string_view>& open_tables = {}) const;

    [[nodiscard]] bool has(std::string_view key) const;
    [[nodiscard]] std::optional<std::int64_t> integer(std::string_view key, std::int64_t min,
                                                      std::int64_t max) const;
    [[nodiscard]] std::optional<double> number(std::string_view key) const;
    // The word "auto" (returned as 0) or an integer in [min, max] (min >= 1).
    [[nodiscard]] std::optional<std::int64_t> auto_or_integer(std::string_view key,
                                                              std::int64_t min,
                                                              std::int64_t max) const;
    [[nodiscard]] std::optional<bool> boolean(std::string_view key) const;
    // The word "auto" (returned as 0), true (1), false (2), or one of `words` (3 + its index).
    [[nodiscard]] std::optional<int> auto_or_boolean(
        std::string_view key, std::initializer_list<std::string_view> words = {}) const;
    [[nodiscard]] std::optional<std::string> string(std::string_view key) const;
    // One of `choices` (exact, case-sensitive); returns its index.
    [[nodiscard]] std::optional<int> choice(std::string_view key,
                                            std::initializer_list<std::string_view> choices) const;
    [[nodiscard]] std::optional<int> choice(std::string_view key,
                                            const std::vector<std::string>& choices) const;
    [[nodiscard]] std::optional<std::vector<std::int64_t>> integers(std::string_view key) const;
    [[nodiscard]] std::optional<std::vector<double>> numbers(std::string_view key) const;
    [[nodiscard]] std::vector<std::string> strings(std::string_view key) const;  // [] when absent
    // The entries of table `key`, each value a string or an integer given as text, in document
    // order; [] when absent. `check(name, value, is_integer)` returns "" or why the entry is
    // wrong (reported against `key.name`).
    [[nodiscard]] std::vector<std::pair<std::string, std::string>> scalar_table(
        std::string_view key,
        const std::function<std::string(const std::string&, const std::string&, bool)>& check)
        const;

    // "file:line" of a key present in the deck, "--set key=value" for an override, else the file.
    [[nodiscard]] std::string where(std::string_view key) const;
    // Every key present, with where() of each (recorded in Config::origin).
    [[nodiscard]] std::map<std::string, std::string> origins() const;
    [[noreturn]] void fail(std::string_view key, const std::string& message) const;

private:
    [[nodiscard]] const toml::node* find(std::string_view key) const;
    [[nodiscard]] double to_number(std::string_view key, const toml::node& n) const;

    const toml::table* root_;
    std::string path_;
    std::map<std::string, std::string> origin_override_;
    std::string name_prefix_;   // "initial.regions[2]." for a table_array entry, else ""
    std::string entry_origin_;  // an entry's where() when --set gave its array, else ""
};

// Applies "a.b.c=value" overrides to `root`; returns key -> "--set a.b.c=value".
std::map<std::string, std::string> apply_overrides(toml::table& root,
                                                   const std::vector<std::string>& overrides);

}  // namespace gridsim

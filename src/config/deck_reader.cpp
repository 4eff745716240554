#include "config/deck_reader.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <functional>

#include "config/config.hpp"

namespace gridsim {

namespace {

const char* type_name(toml::node_type t) {
    switch (t) {
        case toml::node_type::table:
            return "a table";
        case toml::node_type::array:
            return "an array";
        case toml::node_type::string:
            return "a string";
        case toml::node_type::integer:
            return "an integer";
        case toml::node_type::floating_point:
            return "a number";
        case toml::node_type::boolean:
            return "a boolean";
        default:
            return "a date/time";
    }
}

// Visits every non-table node with its dotted key, in document order.
// Calls fn for every value (not table) under `t`, in source order; on_table, when given, for
// every table first.
void walk(const toml::table& t, const std::string& prefix,
          const std::function<void(const std::string&, const toml::node&)>& fn,
          const std::function<void(const std::string&, const toml::node&)>& on_table = {}) {
    std::vector<std::pair<std::string, const toml::node*>> entries;
    for (const auto& [k, v] : t) entries.emplace_back(std::string(k.str()), &v);
    std::stable_sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) {
        return a.second->source().begin.line < b.second->source().begin.line;
    });
    for (const auto& [k, v] : entries) {
        const std::string key = prefix.empty() ? k : prefix + "." + k;
        if (const auto* sub = v->as_table()) {
            if (on_table) on_table(key, *v);
            walk(*sub, key, fn, on_table);
        } else {
            fn(key, *v);
        }
    }
}

}  // namespace

DeckReader::DeckReader(const toml::table& root, std::string path,
                       std::map<std::string, std::string> origin_override)
    : root_(&root), path_(std::move(path)), origin_override_(std::move(origin_override)) {}

std::vector<DeckReader> DeckReader::table_array(std::string_view key) const {
    std::vector<DeckReader> out;
    const toml::node* n = find(key);
    if (n == nullptr) return out;
    const toml::array* entries = n->as_array();
    if (entries == nullptr || !entries->is_array_of_tables())
        fail(key, fmt::format("expected an array of tables ([[{}]]), got {}", key,
                              type_name(n->type())));
    for (std::size_t i = 0; i < entries->size(); ++i) {
        DeckReader entry(*entries->get(i)->as_table(), path_, {});
        entry.name_prefix_ = fmt::format("{}{}[{}].", name_prefix_, key, i + 1);
        if (auto it = origin_override_.find(std::string(key)); it != origin_override_.end())
            entry.entry_origin_ = it->second;
        out.push_back(std::move(entry));
    }
    return out;
}

std::string DeckReader::where(std::string_view key) const {
    if (!entry_origin_.empty()) return entry_origin_;
    if (auto it = origin_override_.find(std::string(key)); it != origin_override_.end()) {
        return it->second;
    }
    if (const toml::node* n = find(key); n != nullptr && n->source().begin.line > 0) {
        return fmt::format("{}:{}", path_, n->source().begin.line);
    }
    if (!name_prefix_.empty() && root_->source().begin.line > 0)  // a key an entry lacks
        return fmt::format("{}:{}", path_, root_->source().begin.line);
    return path_;
}

std::map<std::string, std::string> DeckReader::origins() const {
    std::map<std::string, std::string> out;
    walk(*root_, "", [&](const std::string& key, const toml::node&) { out[key] = where(key); });
    return out;
}

void DeckReader::fail(std::string_view key, const std::string& message) const {
    throw ConfigError(fmt::format("{}: {}{}: {}", where(key), name_prefix_, key, message));
}

void DeckReader::reject_unknown_keys(const std::vector<std::string_view>& schema,
                                     const std::vector<std::string_view>& open_tables) const {
    auto inside = [](std::string_view key, std::string_view table) {
        return key.size() > table.size() && key.substr(0, table.size()) == table &&
               key[table.size()] == '.';
    };
    auto in_open_table = [&](std::string_view key) {
        return std::any_of(open_tables.begin(), open_tables.end(),
                           [&](std::string_view t) { return inside(key, t); });
    };
    // A table is known when some key lives in it (an empty [extra] is a typo too).
    auto known_table = [&](const std::string& table) {
        return in_open_table(table) ||
               std::find(open_tables.begin(), open_tables.end(), table) != open_tables.end() ||
               std::any_of(schema.begin(), schema.end(),
                           [&](std::string_view key) { return inside(key, table); });
    };
    walk(
        *root_, "",
        [&](const std::string& key, const toml::node&) {
            if (std::find(schema.begin(), schema.end(), key) == schema.end() &&
                !in_open_table(key)) {
                fail(key, "unknown key (see docs/deck-keys.md for the valid ones)");
            }
        },
        [&](const std::string& table, const toml::node&) {
            if (!known_table(table))
                fail(table, "unknown table (see docs/deck-keys.md for the valid ones)");
        });
}

const toml::node* DeckReader::find(std::string_view key) const {
    return root_->at_path(key).node();
}

std::vector<std::pair<std::string, std::string>> DeckReader::scalar_table(
    std::string_view key,
    const std::function<std::string(const std::string&, const std::string&, bool)>& check) const {
    std::vector<std::pair<std::string, std::string>> out;
    const toml::node* n = find(key);
    if (n == nullptr) return out;
    if (!n->is_table()) fail(key, fmt::format("expected a table, got {}", type_name(n->type())));
    const std::string prefix = std::string(key) + ".";
    walk(
        *n->as_table(), "",
        [&](const std::string& name, const toml::node& v) {
            const std::string full = prefix + name;
            std::string text;
            if (const auto* i = v.as_integer()) {
                text = std::to_string(i->get());
            } else if (const auto* str = v.as_string()) {
                text = str->get();
            } else {
                fail(full,
                     fmt::format("expected a string or an integer, got {}", type_name(v.type())));
            }
            if (const std::string why = check(name, text, v.is_integer()); !why.empty())
                fail(full, why);
            out.emplace_back(name, text);
        },
        [&](const std::string& name, const toml::node&) {
            fail(prefix + name, "expected a string or an integer, got a table");
        });
    return out;
}

bool DeckReader::has(std::string_view key) const { return find(key) != nullptr; }

std::optional<std::int64_t> DeckReader::integer(std::string_view key, std::int64_t min,
                                                std::int64_t max) const {
    const toml::node* n = find(key);
    if (n == nullptr) return std::nullopt;
    if (!n->is_integer())
        fail(key, fmt::format("expected an integer, got {}", type_name(n->type())));
    const std::int64_t v = n->as_integer()->get();
    if (v < min || v > max) fail(key, fmt::format("{} is out of range [{}, {}]", v, min, max));
    return v;
}

std::optional<std::int64_t> DeckReader::auto_or_integer(std::string_view key, std::int64_t min,
                                                        std::int64_t max) const {
    const toml::node* n = find(key);
    if (n == nullptr) return std::nullopt;
    if (n->is_string()) {
        if (n->as_string()->get() == "auto") return 0;
        fail(key, fmt::format("'{}' is neither \"auto\" nor an integer in [{}, {}]",
                              n->as_string()->get(), min, max));
    }
    if (!n->is_integer())
        fail(key, fmt::format("expected \"auto\" or an integer, got {}", type_name(n->type())));
    return integer(key, min, max);
}

double DeckReader::to_number(std::string_view key, const toml::node& n) const {
    if (n.is_integer()) return static_cast<double>(n.as_integer()->get());
    if (!n.is_floating_point()) {
        fail(key, fmt::format("expected a number, got {}", type_name(n.type())));
    }
    const double v = n.as_floating_point()->get();
    if (!std::isfinite(v)) fail(key, "must be a finite number");
    return v;
}

std::optional<double> DeckReader::number(std::string_view key) const {
    const toml::node* n = find(key);
    if (n == nullptr) return std::nullopt;
    return to_number(key, *n);
}

std::optional<bool> DeckReader::boolean(std::string_view key) const {
    const toml::node* n = find(key);
    if (n == nullptr) return std::nullopt;
    if (!n->is_boolean())
        fail(key, fmt::format("expected true or false, got {}", type_name(n->type())));
    return n->as_boolean()->get();
}

std::optional<int> DeckReader::auto_or_boolean(
    std::string_view key, std::initializer_list<std::string_view> words) const {
    const toml::node* n = find(key);
    if (n == nullptr) return std::nullopt;
    if (n->is_boolean()) return n->as_boolean()->get() ? 1 : 2;
    if (n->is_string() && n->as_string()->get() == "auto") return 0;
    std::string expected = "\"auto\"";
    int index = 3;
    for (std::string_view w : words) {
        if (n->is_string() && n->as_string()->get() == w) return index;
        expected += fmt::format(", \"{}\"", w);
        ++index;
    }
    fail(key, fmt::format("expected {}, true or false, got {}", expected,
                          n->is_string() ? "\"" + n->as_string()->get() + "\""
                                         : std::string(type_name(n->type()))));
}

std::optional<std::string> DeckReader::string(std::string_view key) const {
    const toml::node* n = find(key);
    if (n == nullptr) return std::nullopt;
    if (!n->is_string()) fail(key, fmt::format("expected a string, got {}", type_name(n->type())));
    return n->as_string()->get();
}

std::optional<int> DeckReader::choice(std::string_view key,
                                      std::initializer_list<std::string_view> choices) const {
    return choice(key, std::vector<std::string>(choices.begin(), choices.end()));
}

std::optional<int> DeckReader::choice(std::string_view key,
                                      const std::vector<std::string>& choices) const {
    const auto s = string(key);
    if (!s) return std::nullopt;
    const auto it = std::find(choices.begin(), choices.end(), *s);
    if (it == choices.end())
        fail(key, fmt::format("'{}' is not one of: {}", *s, fmt::join(choices, ", ")));
    return static_cast<int>(it - choices.begin());
}

std::optional<std::vector<std::int64_t>> DeckReader::integers(std::string_view key) const {
    const toml::node* n = find(key);
    if (n == nullptr) return std::nullopt;
    const toml::array* a = n->as_array();
    if (a == nullptr)
        fail(key, fmt::format("expected an array of integers, got {}", type_name(n->type())));
    std::vector<std::int64_t> out;
    for (const toml::node& e : *a) {
        if (!e.is_integer())
            fail(key, fmt::format("array element is {}, expected an integer", type_name(e.type())));
        out.push_back(e.as_integer()->get());
    }
    return out;
}

std::optional<std::vector<double>> DeckReader::numbers(std::string_view key) const {
    const toml::node* n = find(key);
    if (n == nullptr) return std::nullopt;
    const toml::array* a = n->as_array();
    if (a == nullptr)
        fail(key, fmt::format("expected an array of numbers, got {}", type_name(n->type())));
    std::vector<double> out;
    for (const toml::node& e : *a) out.push_back(to_number(key, e));
    return out;
}

std::vector<std::string> DeckReader::strings(std::string_view key) const {
    std::vector<std::string> out;
    const toml::node* n = find(key);
    if (n == nullptr) return out;
    const toml::array* a = n->as_array();
    if (a == nullptr)
        fail(key, fmt::format("expected an array of strings, got {}", type_name(n->type())));
    for (const toml::node& e : *a) {
        if (!e.is_string())
            fail(key, fmt::format("array element is {}, expected a string", type_name(e.type())));
        out.push_back(e.as_string()->get());
    }
    return out;
}

namespace {

bool is_bare_word(const std::string& s) {
    return !s.empty() && std::isalpha(static_cast<unsigned char>(s[0])) &&
           std::all_of(s.begin(), s.end(), [](char c) {
               return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
           });
}

// Parses one override value as TOML, so arrays and numbers read exactly as in a deck. A bare
// word (`--set problem.name=jacobi`) is taken as a string: shells make quoting awkward.
toml::table parse_override_value(const std::string& text, const std::string& value) {
    try {
        const std::string doc = "v = " + value;
        return toml::parse(std::string_view(doc), std::string_view("--set"));
    } catch (const toml::parse_error& e) {
        if (is_bare_word(value)) return toml::table{{"v", value}};
        throw ConfigError(fmt::format("--set {}: cannot read '{}' as a TOML value ({})", text,
                                      value, e.description()));
    }
}

}  // namespace

std::map<std::string, std::string> apply_overrides(toml::table& root,
                                                   const std::vector<std::string>& overrides) {
    std::map<std::string, std::string> origin;
    for (const std::string& text : overrides) {
        const auto eq = text.find('=');
        if (eq == std::string::npos || eq == 0) {
            throw ConfigError(
                fmt::format("--set {}: expected key=value, e.g. --set time.steps=10", text));
        }
        const std::string key = text.substr(0, eq);
        toml::table parsed = parse_override_value(text, text.substr(eq + 1));
        if (!parsed.contains("v")) throw ConfigError(fmt::format("--set {}: no value", text));

        toml::table* table = &root;
        std::string_view rest = key;
        for (auto dot = rest.find('.'); dot != std::string_view::npos; dot = rest.find('.')) {
            const std::string part(rest.substr(0, dot));
            rest.remove_prefix(dot + 1);
            if (!table->contains(part)) {  // a table only this override names: blame it
                table->insert(part, toml::table{});
                origin.emplace(key.substr(0, key.size() - rest.size() - 1), "--set " + text);
            }
            table = (*table)[part].as_table();
            if (table == nullptr) {
                throw ConfigError(fmt::format("--set {}: '{}' is not a table", text, part));
            }
        }
        table->insert_or_assign(std::string(rest), std::move(*parsed.get("v")));
        origin[key] = "--set " + text;
    }
    return origin;
}

}  // namespace gridsim

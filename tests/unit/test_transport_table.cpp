// The transport table (parallel/transport_table.hpp) is the only list of transports: the deck
// takes exactly its names, the keys document and `gridsim info` name every row, and each row's
// refusal holds the rule stated beside it.
#include <gtest/gtest.h>

#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "config/common_keys.hpp"
#include "config/config.hpp"
#include "parallel/mpi_session.hpp"
#include "parallel/nccl_transport.hpp"
#include "parallel/transport.hpp"
#include "platform/backend_select.hpp"
#include "problems/problem.hpp"

using namespace gridsim;

namespace {

const char* kDeck = R"([problem]
name = "heat"
[grid]
cells = [9, 9]
)";

// The ConfigError of the deck with `sets`, or "" where it loads.
std::string error_of(const std::vector<std::string>& sets) {
    try {
        load_config(kDeck, "deck.toml", sets);
    } catch (const ConfigError& e) {
        return e.what();
    }
    return {};
}

std::string transport_set(const std::string& word) { return "parallel.transport=\"" + word + "\""; }

// A GPU run whose ranks each have a GPU that reaches every other's.
RankGpuFacts best_case() {
    RankGpuFacts f;
    f.ranks = 4;
    f.own_gpus = true;
    f.ipc_gap.clear();  // every rank reaches every other
    f.nccl_built = nccl_built();
    f.cuda_aware = true;
    return f;
}

}  // namespace

TEST(TransportTable, RowsAreFoundByTheirKindAndNamedOnce) {
    std::set<std::string> names{"auto"};
    for (const TransportRow& row : kTransportRows) {
        EXPECT_EQ(&transport_row(row.kind), &row) << row.name;
        EXPECT_TRUE(names.insert(row.name).second) << row.name << " named twice";
        EXPECT_EQ(std::string(to_string(row.kind)), row.name);
    }
    EXPECT_EQ(std::string(to_string(TransportKind::automatic)), "auto");
}

TEST(TransportTable, TheDeckTakesEveryRowByNameAndNothingElse) {
    for (const TransportRow& row : kTransportRows) {
        const Config c = load_config(kDeck, "deck.toml", {transport_set(row.name)});
        EXPECT_EQ(c.transport, row.kind) << row.name;
        // The CPU backend hands over host memory only.
        const std::string cpu = error_of({transport_set(row.name), "parallel.backend=\"cpu\""});
        EXPECT_EQ(cpu.find("moves device memory") != std::string::npos,
                  row.memory == TransportMemory::device)
            << row.name << ": " << cpu;
    }
    std::string words = "auto";
    for (const TransportRow& row : kTransportRows) words += std::string(", ") + row.name;
    const std::string e = error_of({transport_set("carrier-pigeon")});
    EXPECT_NE(e.find("'carrier-pigeon' is not one of: " + words), std::string::npos) << e;
}

TEST(TransportTable, TheKeysDocumentAndInfoNameEveryRow) {
    std::string meaning;
    for (const CommonKey& k : common_keys())
        if (k.key == "parallel.transport") meaning = std::string(k.meaning);
    for (const TransportRow& row : kTransportRows)
        EXPECT_NE(meaning.find(std::string("`") + row.name + "`"), std::string::npos) << meaning;
    // `gridsim info` offers, each with its words: staged always; with the CUDA backend ipc,
    // nccl where NCCL is built and cuda-aware where MPI says it is CUDA-aware.
    const std::string offered = transports_offered();
    const bool cuda = cuda_backend_built();
    const auto offers = [&](TransportKind kind) {
        const TransportRow& row = transport_row(kind);
        return offered.find(std::string(row.name) + " (" + row.meaning + ")") != std::string::npos;
    };
    EXPECT_TRUE(offers(TransportKind::staged)) << offered;
    EXPECT_EQ(offers(TransportKind::ipc), cuda) << offered;
    EXPECT_EQ(offers(TransportKind::nccl), cuda && nccl_built()) << offered;
    EXPECT_EQ(offers(TransportKind::cuda_aware), cuda && mpi_is_cuda_aware()) << offered;
}

// Each refusal against the rule the README states for parallel.transport, fact by fact.
TEST(TransportTable, RefusalsFollowTheirRules) {
    RankGpuFacts f = best_case();
    EXPECT_EQ(transport_refusal(TransportKind::staged, f), "");
    EXPECT_EQ(transport_refusal(TransportKind::cuda_aware, f), "");
    f.cuda_aware = false;
    EXPECT_NE(transport_refusal(TransportKind::cuda_aware, f).find("CUDA-aware MPI"),
              std::string::npos);
    EXPECT_EQ(transport_refusal(TransportKind::staged, f), "");

    f = best_case();
    EXPECT_EQ(transport_refusal(TransportKind::nccl, f).empty(), nccl_built());
    f.own_gpus = false;  // NCCL refuses two ranks on one GPU
    EXPECT_NE(transport_refusal(TransportKind::nccl, f), "");

    // ipc: where every rank reaches every other (sums by mailboxes), in a CUDA build; where some
    // pair cannot, only with NCCL for the sums, which needs a GPU per rank. The reason names
    // the gap.
    f = best_case();
    EXPECT_EQ(transport_refusal(TransportKind::ipc, f).empty(), cuda_backend_built());
    if (cuda_backend_built()) {
        f.ipc_gap = "ranks 0 and 5 are on different nodes";
        EXPECT_EQ(transport_refusal(TransportKind::ipc, f).empty(), nccl_built());
        f.own_gpus = false;
        const std::string why = transport_refusal(TransportKind::ipc, f);
        EXPECT_NE(why.find(f.ipc_gap), std::string::npos) << why;
    }
}

TEST(TransportTable, AutoIsResolvedBeforeATransportIsMade) {
    TransportArgs<double> args;
    args.kind = TransportKind::automatic;
    EXPECT_THROW((void)make_transport(args), std::logic_error);
}

// The nodes of a run and the ranks on each: one notion of "the same node" for everything that
// asks (which GPU a rank drives, which ranks reach each other's GPU, the process grid and which
// block each rank takes, the header, the report). Two ranks share a node where MPI puts them in
// one MPI_COMM_TYPE_SHARED communicator. Where MPI gives every rank a communicator of its own
// while the launcher numbers the nodes (SLURM_NODEID) and puts several ranks on one, the
// launcher's numbering is taken. Nodes are numbered in the order of their lowest rank.
#pragma once

#include <string>
#include <vector>

#include <mpi.h>

#include "parallel/mpi_session.hpp"

namespace gridsim {

struct NodeMap {
    std::vector<int> node_of;        // the node of each rank (of the communicator gathered over)
    std::vector<std::string> names;  // each node's name: its lowest rank's host name, made unique
    // Each rank's rank in MPI_COMM_WORLD (the launcher's numbering; gather_node_map fills it).
    std::vector<int> world_rank;

    [[nodiscard]] int nodes() const { return static_cast<int>(names.size()); }
    [[nodiscard]] int ranks() const { return static_cast<int>(node_of.size()); }
    [[nodiscard]] std::vector<int> ranks_on(int node) const;
    [[nodiscard]] int most_ranks_on_a_node() const;
    // Whether every node holds the same number of ranks.
    [[nodiscard]] bool uniform() const;
    // "2 nodes: n01 (ranks 0-3), n02 (ranks 4-7)"; "1 node: n01 (ranks 0-3)".
    [[nodiscard]] std::string text() const;
};

// From each rank's node key (equal keys: one node) and host name.
NodeMap node_map_from(const std::vector<std::string>& keys, const std::vector<std::string>& hosts);

// Whether every rank's group (`members[r]`: the ranks sharing its node, as "0 1 2") holds that
// rank and is the same list on each of its members.
bool groups_agree(const std::vector<std::string>& members);

// The keys node_map_from takes: `mpi` (each rank's MPI_COMM_TYPE_SHARED group, as groups_agree
// reads it), unless every rank has a group of its own there while the launcher's node ids
// (`launcher`, "" where unset) are set on every rank and put some ranks together. Where the
// groups disagree between ranks (MPI's view of locality differs from rank to rank), the
// launcher's ids where every rank has one, else the host names (`hosts`).
std::vector<std::string> node_keys(const std::vector<std::string>& mpi,
                                   const std::vector<std::string>& launcher,
                                   const std::vector<std::string>& hosts);

// Collective over `comm`: every rank's node, on every rank.
NodeMap gather_node_map(MPI_Comm comm);

// The ranks of `comm` on this rank's node (by gather_node_map), collective.
Communicator node_comm(MPI_Comm comm);

// "0-3", "0,2,4-5": a list of ranks in short.
std::string rank_ranges(const std::vector<int>& ranks);

}  // namespace gridsim

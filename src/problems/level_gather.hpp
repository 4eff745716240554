// A multigrid level's points moved between the ranks' blocks and rank 0's whole copy of the
// level (problems/mg_levels.hpp, "gathered"): each rank's owned points through the host, one
// MPI gather or scatter in rank order, so the moves are exact and each is the other's transpose.
#pragma once

#include <vector>

#include "kernels/backend.hpp"
#include "mesh/domain.hpp"
#include "parallel/mpi_session.hpp"

namespace gridsim {

template <class T>
class LevelGather {
public:
    // `mine`: this rank's block of the level. Collective over `comm`, which it duplicates (rank
    // 0 learns the blocks).
    LevelGather(MPI_Comm comm, Backend<T>& be, const Subdomain& mine);

    // whole = every rank's owned points of `part` at their places (rank 0; `whole` is null
    // elsewhere), its halos zero.
    void gather(FieldView<T> part, const FieldView<T>* whole);
    // part = the points of `whole` on this rank's block (rank 0's `whole`), its halos zero.
    void scatter(const FieldView<T>* whole, FieldView<T> part);

private:
    struct Block {
        std::array<int, 3> offset, size;
    };
    // Between `field`'s owned points and `packed` (x fastest), `block` placed at its offset.
    static void pack(const std::vector<T>& field, const FieldExtents& ext, const Block& block,
                     T* packed);
    static void unpack(const T* packed, const Block& block, const FieldExtents& ext,
                       std::vector<T>& field);

    Communicator comm_;
    Backend<T>& be_;
    Block mine_;
    std::vector<Block> blocks_;  // rank 0: every rank's, in rank order
    std::vector<int> counts_, displs_;
    std::vector<T> field_, packed_, all_;
};

}  // namespace gridsim

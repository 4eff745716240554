// A multigrid level's points moved between the ranks' blocks and rank 0's whole copy of the
// level (problems/mg_levels.hpp, "gathered"): each rank's owned points through the host, one
// MPI gather or scatter in rank order, so the moves are exact and each is the other's transpose.
#pragma once

#include <vector>

#include "kernels/backend.hpp"
#include "mesh/domain.hpp"
#include "parallel/gather.hpp"
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
    // Between the points of `field` in the box at `offset` of `size` and `packed` (x fastest).
    static void pack(const std::vector<T>& field, const FieldExtents& ext,
                     const std::array<int, 3>& offset, const std::array<int, 3>& size, T* packed);
    static void unpack(const T* packed, const std::array<int, 3>& offset,
                       const std::array<int, 3>& size, const FieldExtents& ext,
                       std::vector<T>& field);

    Communicator comm_;
    Backend<T>& be_;
    std::array<int, 3> size_;  // this rank's block
    RankBlocks blocks_;        // rank 0: every rank's
    std::vector<T> field_, packed_, all_;
};

}  // namespace gridsim

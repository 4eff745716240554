// The Cartesian process grid: MPI_Dims_create + MPI_Cart_create over a parent communicator,
// periodic where the boundary is periodic, and this rank's block and face neighbours.
#pragma once

#include <array>

#include "config/config.hpp"
#include "mesh/domain.hpp"
#include "parallel/mpi_session.hpp"

namespace gridsim {

class CartTopology {
public:
    // Throws ConfigError (naming parallel.process_grid or grid.cells) when the process grid
    // does not fit the rank count or leaves a rank fewer points than the halo width. Every
    // rank throws the same error, so none is left waiting.
    CartTopology(MPI_Comm parent, const Config& cfg, const Domain& dom, int halo);

    [[nodiscard]] MPI_Comm comm() const { return comm_.get(); }
    [[nodiscard]] int rank() const { return rank_; }
    [[nodiscard]] int size() const { return size_; }
    [[nodiscard]] const std::array<int, 3>& process_grid() const { return process_grid_; }
    [[nodiscard]] const std::array<int, 3>& coords() const { return coords_; }
    [[nodiscard]] const Subdomain& subdomain() const { return sub_; }
    // Rank (in comm()) across each face; MPI_PROC_NULL where there is none.
    [[nodiscard]] int neighbour(int face) const { return neighbours_[face]; }

private:
    Communicator comm_;
    int rank_ = 0;
    int size_ = 1;
    std::array<int, 3> process_grid_{1, 1, 1};
    std::array<int, 3> coords_{0, 0, 0};
    std::array<int, 6> neighbours_{};
    Subdomain sub_;
};

// The process grid for `nranks`: the deck's choice where given (non-zero; a partial choice is
// completed by MPI_Dims_create), else the factorisation with the lowest modelled halo cost.
std::array<int, 3> choose_process_grid(const Config& cfg, const Domain& dom, int nranks);

// Modelled seconds per step that the busiest rank of process grid `grid` spends on its halos:
// per face it sends (one or two per split axis), a latency plus the face's bytes over a
// bandwidth, where an x face (one point per row) counts a whole 32-byte memory sector per
// point, the traffic its packing really causes. Only the order of the costs matters.
double modelled_halo_cost(const Domain& dom, const std::array<int, 3>& grid, int value_bytes);

}  // namespace gridsim

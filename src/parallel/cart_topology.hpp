// The Cartesian process grid: MPI_Dims_create + MPI_Cart_create over a parent communicator,
// periodic where the boundary is periodic, and this rank's block and face neighbours.
#pragma once

#include <array>
#include <string>

#include "config/config.hpp"
#include "mesh/domain.hpp"
#include "parallel/grid_model.hpp"
#include "parallel/mpi_session.hpp"

namespace gridsim {

class CartTopology {
public:
    // Throws ConfigError (naming parallel.process_grid or grid.cells) when the process grid
    // does not fit the rank count or leaves a rank fewer points than the halo width. Every
    // rank throws the same error, so none is left waiting.
    CartTopology(MPI_Comm parent, const Config& cfg, const Domain& dom, int halo);

    // The same process grid over a communicator of its own, with this rank's block `sub` of
    // another grid over it (a multigrid level's; its faces and neighbours are this one's).
    // Collective.
    [[nodiscard]] CartTopology with_block(const Subdomain& sub) const;
    // One rank alone (a communicator of its own over MPI_COMM_SELF) holding the whole grid
    // `whole`: its periodic faces are its own neighbours. Not collective.
    [[nodiscard]] static CartTopology alone(const Subdomain& whole);

    [[nodiscard]] MPI_Comm comm() const { return comm_.get(); }
    [[nodiscard]] int rank() const { return rank_; }
    [[nodiscard]] int size() const { return size_; }
    [[nodiscard]] const std::array<int, 3>& process_grid() const { return process_grid_; }
    [[nodiscard]] const std::array<int, 3>& coords() const { return coords_; }
    [[nodiscard]] const Subdomain& subdomain() const { return sub_; }
    // Rank (in comm()) across each face; MPI_PROC_NULL where there is none.
    [[nodiscard]] int neighbour(int face) const { return neighbours_[face]; }
    // The box of blocks each node takes ({0, 0, 0}: the launcher's order), and where the deck's
    // process grid costs more on these nodes than the model's, what each costs ("" otherwise).
    [[nodiscard]] const std::array<int, 3>& node_tile() const { return tile_; }
    [[nodiscard]] const std::string& layout_note() const { return layout_note_; }

private:
    CartTopology() = default;

    Communicator comm_;
    int rank_ = 0;
    int size_ = 1;
    std::array<int, 3> process_grid_{1, 1, 1};
    std::array<int, 3> coords_{0, 0, 0};
    std::array<int, 6> neighbours_{};
    Subdomain sub_;
    std::array<int, 3> tile_{0, 0, 0};
    std::string layout_note_;
};

}  // namespace gridsim

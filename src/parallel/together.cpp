#include "parallel/together.hpp"

#include <iostream>

#include "parallel/mpi_session.hpp"

namespace gridsim {

void fail_together(MPI_Comm comm, const std::string& text) {
    if (comm_rank(comm) == 0) std::cerr << "gridsim: error: " << text << std::endl;
    throw RunFailure(text);
}

void on_rank0_together(MPI_Comm comm, const std::function<void()>& work) {
    std::string error;
    if (comm_rank(comm) == 0) {
        try {
            work();
        } catch (const std::exception& e) {
            error = e.what();
        }
    }
    broadcast_string(comm, error);
    if (!error.empty()) fail_together(comm, error);
}

}  // namespace gridsim

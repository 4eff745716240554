// One time loop per problem (heat.cpp, jacobi.cpp), instantiated for float and double.
#pragma once

#include "solver/run.hpp"

namespace gridsim {

template <class T>
RunResult run_heat(const Config& cfg, MPI_Comm comm, const RunOptions& opt);
template <class T>
RunResult run_jacobi(const Config& cfg, MPI_Comm comm, const RunOptions& opt);

}  // namespace gridsim

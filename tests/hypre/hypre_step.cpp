// A reference for the implicit heat step, for tests and the comparison of speed only (gridsim
// does not link hypre): S backward-Euler steps (1 + 2 sum_d r_d) u'_i - sum_d r_d (u'_{i+e_d} +
// u'_{i-e_d}) = u_i at the updated points, Dirichlet points holding their values, solved by
// hypre's Struct PCG preconditioned by one PFMG V-cycle to a relative residual of `tol`, on any
// number of ranks (each holds a slab of the updated points along the slowest axis).
//
//   hypre_step NX NY NZ PX PY PZ RX RY RZ STEPS TOL IN OUT [RELAX]
//
// N*: points per axis (NZ = 1 in 2D), P*: 1 where the axis is periodic, R*: r_d = alpha dt / h_d^2
// (0 beyond the grid's dimensions); IN and OUT: the whole field, doubles, x fastest; RELAX:
// PFMG's smoother (hypre's numbering: 1 weighted Jacobi, its default; 2 symmetric red-black
// Gauss-Seidel). Each step prints its iterations, residual, and the seconds of hypre's setup
// (PFMG's levels and operators) and solve, the slowest rank's, after a barrier; the matrix and
// vectors' assembly is in neither.
#include <HYPRE_struct_ls.h>
#include <mpi.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

namespace {

struct Problem {
    std::array<int, 3> n{1, 1, 1};
    std::array<bool, 3> periodic{false, false, false};
    std::array<double, 3> r{0, 0, 0};
    int dims = 3;
    int relax = 1;
    // This rank's updated points: [lo, hi] per axis (a Dirichlet axis loses its two end points),
    // the slowest axis cut into `ranks` contiguous slabs.
    std::array<int, 3> first{0, 0, 0}, last{0, 0, 0};
    [[nodiscard]] int lo(int d) const { return first[d]; }
    [[nodiscard]] int hi(int d) const { return last[d]; }
    void own(int rank, int ranks) {
        for (int d = 0; d < 3; ++d) {
            first[d] = periodic[d] || d >= dims ? 0 : 1;
            last[d] = periodic[d] || d >= dims ? n[d] - 1 : n[d] - 2;
        }
        const int s = dims - 1;
        const int count = last[s] - first[s] + 1;
        const int start = first[s];
        first[s] = start + count * rank / ranks;
        last[s] = start + count * (rank + 1) / ranks - 1;
    }
    [[nodiscard]] std::size_t at(int x, int y, int z) const {
        return (static_cast<std::size_t>(z) * n[1] + y) * n[0] + x;
    }
};

// The point at offset `step` along axis d from (x, y, z), wrapped on a periodic axis; false where
// it is a Dirichlet point (its value then in `value`).
bool neighbour_is_unknown(const Problem& p, std::array<int, 3> c, int d, int step,
                          const std::vector<double>& u, double& value) {
    c[d] += step;
    if (p.periodic[d]) c[d] = (c[d] + p.n[d]) % p.n[d];
    if (p.periodic[d] || d >= p.dims || (c[d] >= 1 && c[d] <= p.n[d] - 2)) return true;
    value = u[p.at(c[0], c[1], c[2])];
    return false;
}

// One step: u at the updated points replaced by the solution.
int solve_step(const Problem& p, HYPRE_StructGrid grid, HYPRE_StructStencil stencil,
               std::vector<double>& u, double tol) {
    HYPRE_StructMatrix a;
    HYPRE_StructVector b, x;
    HYPRE_StructMatrixCreate(MPI_COMM_WORLD, grid, stencil, &a);
    HYPRE_StructMatrixInitialize(a);
    HYPRE_StructVectorCreate(MPI_COMM_WORLD, grid, &b);
    HYPRE_StructVectorCreate(MPI_COMM_WORLD, grid, &x);
    HYPRE_StructVectorInitialize(b);
    HYPRE_StructVectorInitialize(x);
    const int entries = 1 + 2 * p.dims;
    std::vector<HYPRE_Int> which(entries);
    for (int e = 0; e < entries; ++e) which[e] = e;
    double diag = 1.0;
    for (int d = 0; d < p.dims; ++d) diag += 2.0 * p.r[d];
    for (int z = p.lo(2); z <= p.hi(2); ++z) {
        for (int y = p.lo(1); y <= p.hi(1); ++y) {
            for (int xi = p.lo(0); xi <= p.hi(0); ++xi) {
                std::array<HYPRE_Int, 3> idx{xi, y, z};
                std::vector<double> row(entries, 0.0);
                row[0] = diag;
                double rhs = u[p.at(xi, y, z)];
                for (int d = 0; d < p.dims; ++d) {
                    for (int s = 0; s < 2; ++s) {
                        double value = 0.0;
                        if (neighbour_is_unknown(p, {xi, y, z}, d, s == 0 ? -1 : 1, u, value))
                            row[1 + 2 * d + s] = -p.r[d];
                        else
                            rhs += p.r[d] * value;  // a Dirichlet point: its coupling is zero
                    }
                }
                HYPRE_StructMatrixSetValues(a, idx.data(), entries, which.data(), row.data());
                HYPRE_StructVectorSetValues(b, idx.data(), rhs);
                HYPRE_StructVectorSetValues(x, idx.data(), u[p.at(xi, y, z)]);
            }
        }
    }
    HYPRE_StructMatrixAssemble(a);
    HYPRE_StructVectorAssemble(b);
    HYPRE_StructVectorAssemble(x);
    HYPRE_StructSolver pcg, pfmg;
    HYPRE_StructPCGCreate(MPI_COMM_WORLD, &pcg);
    HYPRE_StructPCGSetTol(pcg, tol);
    HYPRE_StructPCGSetTwoNorm(pcg, 1);
    HYPRE_StructPCGSetMaxIter(pcg, 1000);
    HYPRE_StructPFMGCreate(MPI_COMM_WORLD, &pfmg);
    HYPRE_StructPFMGSetMaxIter(pfmg, 1);
    HYPRE_StructPFMGSetTol(pfmg, 0.0);
    HYPRE_StructPFMGSetZeroGuess(pfmg);
    HYPRE_StructPFMGSetRelaxType(pfmg, p.relax);
    HYPRE_StructPCGSetPrecond(pcg, HYPRE_StructPFMGSolve, HYPRE_StructPFMGSetup, pfmg);
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    HYPRE_StructPCGSetup(pcg, a, b, x);
    MPI_Barrier(MPI_COMM_WORLD);
    const double t1 = MPI_Wtime();
    HYPRE_StructPCGSolve(pcg, a, b, x);
    MPI_Barrier(MPI_COMM_WORLD);
    const double t2 = MPI_Wtime();
    HYPRE_Int iterations = 0;
    double residual = 0.0;
    HYPRE_StructPCGGetNumIterations(pcg, &iterations);
    HYPRE_StructPCGGetFinalRelativeResidualNorm(pcg, &residual);
    // Every rank's new values at its own points, the others' changes zero, summed over the ranks.
    std::vector<double> change(u.size(), 0.0);
    for (int z = p.lo(2); z <= p.hi(2); ++z)
        for (int y = p.lo(1); y <= p.hi(1); ++y)
            for (int xi = p.lo(0); xi <= p.hi(0); ++xi) {
                std::array<HYPRE_Int, 3> idx{xi, y, z};
                double value = 0.0;
                HYPRE_StructVectorGetValues(x, idx.data(), &value);
                change[p.at(xi, y, z)] = value - u[p.at(xi, y, z)];
            }
    MPI_Allreduce(MPI_IN_PLACE, change.data(), static_cast<int>(change.size()), MPI_DOUBLE, MPI_SUM,
                  MPI_COMM_WORLD);
    for (std::size_t i = 0; i < u.size(); ++i) u[i] += change[i];
    HYPRE_StructPFMGDestroy(pfmg);
    HYPRE_StructPCGDestroy(pcg);
    HYPRE_StructVectorDestroy(x);
    HYPRE_StructVectorDestroy(b);
    HYPRE_StructMatrixDestroy(a);
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0)
        std::printf(
            "hypre_step: %d iterations, relative residual %.3e, setup %.6f s, solve %.6f s\n",
            static_cast<int>(iterations), residual, t1 - t0, t2 - t1);
    return residual <= tol ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 14 && argc != 15) {
        std::cerr << "usage: hypre_step NX NY NZ PX PY PZ RX RY RZ STEPS TOL IN OUT [RELAX]\n";
        return 2;
    }
    MPI_Init(&argc, &argv);
    Problem p;
    if (argc == 15) p.relax = std::atoi(argv[14]);
    for (int d = 0; d < 3; ++d) {
        p.n[d] = std::atoi(argv[1 + d]);
        p.periodic[d] = std::atoi(argv[4 + d]) != 0;
        p.r[d] = std::strtod(argv[7 + d], nullptr);
    }
    p.dims = p.n[2] > 1 ? 3 : 2;
    int rank = 0, ranks = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    p.own(rank, ranks);
    const int steps = std::atoi(argv[10]);
    const double tol = std::strtod(argv[11], nullptr);
    std::vector<double> u(static_cast<std::size_t>(p.n[0]) * p.n[1] * p.n[2]);
    std::ifstream(argv[12], std::ios::binary)
        .read(reinterpret_cast<char*>(u.data()), static_cast<std::streamsize>(u.size() * 8));
    HYPRE_StructGrid grid;
    HYPRE_StructGridCreate(MPI_COMM_WORLD, p.dims, &grid);
    std::array<HYPRE_Int, 3> lo{}, hi{}, period{};
    for (int d = 0; d < p.dims; ++d) {
        lo[d] = p.lo(d);
        hi[d] = p.hi(d);
        period[d] = p.periodic[d] ? p.n[d] : 0;
    }
    HYPRE_StructGridSetExtents(grid, lo.data(), hi.data());
    HYPRE_StructGridSetPeriodic(grid, period.data());
    HYPRE_StructGridAssemble(grid);
    HYPRE_StructStencil stencil;
    HYPRE_StructStencilCreate(p.dims, 1 + 2 * p.dims, &stencil);
    std::array<HYPRE_Int, 3> centre{0, 0, 0};
    HYPRE_StructStencilSetElement(stencil, 0, centre.data());
    for (int d = 0; d < p.dims; ++d) {
        for (int s = 0; s < 2; ++s) {
            std::array<HYPRE_Int, 3> off{0, 0, 0};
            off[d] = s == 0 ? -1 : 1;
            HYPRE_StructStencilSetElement(stencil, 1 + 2 * d + s, off.data());
        }
    }
    int status = 0;
    for (int s = 0; s < steps && status == 0; ++s) status = solve_step(p, grid, stencil, u, tol);
    if (rank == 0)
        std::ofstream(argv[13], std::ios::binary)
            .write(reinterpret_cast<const char*>(u.data()),
                   static_cast<std::streamsize>(u.size() * 8));
    HYPRE_StructStencilDestroy(stencil);
    HYPRE_StructGridDestroy(grid);
    MPI_Finalize();
    return status;
}

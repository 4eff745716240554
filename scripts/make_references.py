#!/usr/bin/env python3
"""Writes the reference files in tests/reference/ from independent sources, never from gridsim:

  default.h5         inputs/default.toml: the exact discrete solution of explicit heat,
                     lambda^n * prod_d sin(pi x_d / L_d), with lambda from the FTCS symbol
                     (README, "Deck keys"), in double.
  jacobi2d_small.h5  inputs/jacobi2d_small.toml: the 2D jacobi benchmark computed with NumPy in
                     float32, the standard algorithm on the full array (boundary columns, mirror
                     rows), 500 sweeps.
  heat3d_implicit.h5 inputs/heat3d_implicit.toml: backward Euler, each step's linear system
                     (I - alpha dt Lap_h) u' = u over the solved points (Dirichlet neighbours
                     moved to the right-hand side) assembled as a dense matrix and solved with
                     numpy.linalg.solve (LU), not by CG; initial condition and faces as README,
                     "Deck keys", defines them.

Same layout as gridsim's files (/fields/u [nz][ny][nx], /grid attributes), so `gridsim compare`
reads both. Needs numpy and h5py (scripts/requirements.txt):  python3 scripts/make_references.py [OUTDIR]
"""
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import pydeps  # noqa: E402

h5py, np = pydeps.require("make_references.py", "h5py", "numpy")


def write(path, problem, u, spacing, step, source):
    with h5py.File(path, "w") as f:
        f.attrs["format"] = "gridsim"
        f.attrs["format_version"] = 1
        f.attrs["kind"] = "reference"
        f.attrs["problem"] = problem
        f.attrs["step"] = step
        g = f.create_group("grid")
        g.attrs["global_cells"] = np.array(u.shape[::-1], dtype=np.int64)
        g.attrs["spacing"] = np.array(spacing, dtype=np.float64)
        g.attrs["origin"] = np.zeros(len(spacing))
        f.create_group("provenance").attrs["source"] = source
        f.create_group("fields").create_dataset("u", data=u)
    print(f"wrote {path}: {problem} {'x'.join(map(str, u.shape[::-1]))} {u.dtype}")


def heat_default(outdir):
    # inputs/default.toml: 64^3 on the unit cube, alpha = 1, cfl 0.5, 600 steps, mode (1,1,1).
    n, steps, alpha, cfl = 64, 600, 1.0, 0.5
    h = 1.0 / (n - 1)
    dt = cfl / (2 * alpha * 3 / h**2)
    r = alpha * dt / h**2
    lam = 1.0 - 3 * 4 * r * math.sin(math.pi * h / 2) ** 2  # kappa h / 2 = pi h / (2 L), L = 1
    x = np.arange(n) * h
    phi = np.sin(math.pi * x)
    u = lam**steps * phi[:, None, None] * phi[None, :, None] * phi[None, None, :]  # [z][y][x]
    write(os.path.join(outdir, "default.h5"), "heat", u, [h, h, h], steps,
          "scripts/make_references.py: exact discrete FTCS solution (NumPy)")


def jacobi_small(outdir):
    nx, ny, sweeps = 256, 192, 500
    a = np.zeros((ny, nx), dtype=np.float32)
    col = np.sin(2 * np.pi * np.arange(ny) / (ny - 1)).astype(np.float32)
    a[:, 0] = col
    a[:, nx - 1] = col
    quarter = np.float32(0.25)
    for _ in range(sweeps):
        b = a.copy()
        # (xm + xp + ym + yp) * 0.25, left to right, in float32
        b[1:-1, 1:-1] = quarter * (a[1:-1, :-2] + a[1:-1, 2:] + a[:-2, 1:-1] + a[2:, 1:-1])
        b[0, :] = b[ny - 2, :]  # y periodic over rows 1..ny-2: whole rows mirrored, as the
        b[ny - 1, :] = b[1, :]  # benchmark's halo copies do (corners included)
        a = b
    write(os.path.join(outdir, "jacobi2d_small.h5"), "jacobi", a, [1.0 / (nx - 1), 1.0 / (ny - 1)], sweeps,
          "scripts/make_references.py: NumPy float32 jacobi benchmark")


def heat_implicit(outdir):
    # inputs/heat3d_implicit.toml
    cells, length = (20, 16, 12), (1.2, 1.0, 0.8)
    periodic = (True, False, False)
    faces = (0.0, 0.0, 1.0, -0.5, 0.25, 0.0)  # x_lo, x_hi, y_lo, y_hi, z_lo, z_hi
    centre, radius, amplitude, background = (0.31, 0.47, 0.52), 0.27, 2.0, 0.0
    alpha, cfl, steps = 0.5, 40.0, 10
    h = [length[d] / (cells[d] - 1) for d in range(3)]
    inv_h2 = 1.0 / (h[0] * h[0]) + 1.0 / (h[1] * h[1]) + 1.0 / (h[2] * h[2])
    dt = cfl * (1.0 / (2.0 * alpha * inv_h2))
    r = [alpha * dt / (h[d] * h[d]) for d in range(3)]

    # u[i, j, k] here (x first); hot spot: distance <= radius * shortest length, not wrapped.
    idx = np.indices(cells)
    dist2 = sum((idx[d] * h[d] - centre[d] * length[d]) ** 2 for d in range(3))
    u = np.where(dist2 <= (radius * min(length)) ** 2, amplitude, background)
    fixed = np.zeros(cells, dtype=bool)
    for d in (2, 1, 0):  # where faces meet the x face wins, then the y face
        if periodic[d]:
            continue
        for side, at in ((0, 0), (1, cells[d] - 1)):
            sl = [slice(None)] * 3
            sl[d] = at
            u[tuple(sl)] = faces[2 * d + side]
            fixed[tuple(sl)] = True

    # The solved points, numbered; each row: (1 + 2 sum r) u_p - sum_d r_d (neighbours), a
    # neighbour that is a fixed point going to the right-hand side with its (constant) value.
    solved = np.argwhere(~fixed)
    number = -np.ones(cells, dtype=np.int64)
    number[tuple(solved.T)] = np.arange(len(solved))
    n = len(solved)
    a = np.zeros((n, n))
    rhs_fixed = np.zeros(n)
    for row, p in enumerate(solved):
        a[row, row] = 1.0 + 2.0 * sum(r)
        for d in range(3):
            for step in (-1, 1):
                q = p.copy()
                q[d] += step
                if periodic[d]:
                    q[d] %= cells[d]
                q = tuple(q)
                if fixed[q]:
                    rhs_fixed[row] += r[d] * u[q]
                else:
                    a[row, number[q]] -= r[d]
    for _ in range(steps):
        values = np.linalg.solve(a, u[tuple(solved.T)] + rhs_fixed)
        u[tuple(solved.T)] = values
    write(os.path.join(outdir, "heat3d_implicit.h5"), "heat", np.ascontiguousarray(u.T), h, steps,
          "scripts/make_references.py: backward Euler by a dense LU solve (NumPy)")


if __name__ == "__main__":
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "tests", "reference")
    os.makedirs(out, exist_ok=True)
    heat_default(out)
    jacobi_small(out)
    heat_implicit(out)

"""Heat of problem.order 4 and 8, re-implemented here in NumPy from README.md's words alone
("Deck keys", Heat): the central second differences of order 4 and 8 along each axis, the odd
reflection beyond a Dirichlet face, the explicit step and its stability limit, and the implicit
step solved directly (a dense solve, not a CG). gridsim runs on 1, 2 and 4 CPU ranks, on odd
sizes, with periodic and Dirichlet axes mixed, in float and double.
Needs GRIDSIM and MPIEXEC in the environment."""
import unittest

import numpy as np

from heat_reference import HeatRunCase, explicit_step, hotspot_field, implicit_step

# README: the standard central weights w_0..w_R of the second difference of order 2R.
WEIGHTS = {
    2: [-2.0, 1.0],
    4: [-5.0 / 2.0, 4.0 / 3.0, -1.0 / 12.0],
    8: [-205.0 / 72.0, 8.0 / 5.0, -1.0 / 5.0, 8.0 / 315.0, -1.0 / 560.0],
}
# README: the explicit step is stable for f sum_d r_d <= 1.
FACTOR = {2: 2.0, 4: 8.0 / 3.0, 8: 1024.0 / 315.0}


def padded(u, axis, radius, periodic):
    """u with `radius` points beyond both ends of `axis`: a periodic axis of N points continues
    with point 0 after point N-1; beyond a Dirichlet end point b, the point k away holds
    2 u[b] - u[b -+ k] (the odd reflection through the end point)."""
    if periodic:
        return np.pad(u, [(radius, radius) if a == axis else (0, 0) for a in range(u.ndim)],
                      mode="wrap")
    n = u.shape[axis]
    take = lambda i: np.take(u, [i], axis=axis)
    lo = [2 * take(0) - take(k) for k in range(radius, 0, -1)]
    hi = [2 * take(n - 1) - take(n - 1 - k) for k in range(1, radius + 1)]
    return np.concatenate(lo + [u] + hi, axis=axis)


def laplacian(u, order, h, periodic):
    """sum_d (w_0 u + sum_o w_o (u[+o e_d] + u[-o e_d])) / h_d^2 (arrays z, y, x; h x-first)."""
    w = WEIGHTS[order]
    radius = len(w) - 1
    out = np.zeros_like(u)
    for d in range(u.ndim):
        axis = u.ndim - 1 - d
        p = padded(u, axis, radius, periodic[d])
        n = u.shape[axis]
        s = w[0] * u
        for o in range(1, radius + 1):
            s = s + w[o] * (np.take(p, range(radius - o, radius - o + n), axis=axis) +
                            np.take(p, range(radius + o, radius + o + n), axis=axis))
        out += s / (h[d] * h[d])
    return out


class HeatOrder(HeatRunCase):
    PREFIX = "gridsim_order_"

    def case(self, cells, periodic, order, scheme, precision, steps, cfl):
        length = [1.0, 0.8, 1.2][:len(cells)]
        faces = [0.3, -0.2, 0.1, 0.0, -0.4, 0.25][:2 * len(cells)]
        center = [0.4, 0.35, 0.6][:len(cells)]
        bc = "".join(f'{"xyz"[d]} = "{"periodic" if periodic[d] else "dirichlet"}"\n'
                     for d in range(len(cells)))
        deck = (f"[problem]\nname = \"heat\"\norder = {order}\nscheme = \"{scheme}\"\n"
                f"precision = \"{precision}\"\nalpha = 0.7\n"
                f"[grid]\ncells = {cells}\nlength = {length}\n"
                f"[boundary]\n{bc}face_values = {faces}\n"
                f"[initial]\nkind = \"hotspot\"\ncenter = {center}\nradius = 0.3\n"
                f"amplitude = 1.0\nvalue = 0.5\n"
                f"[time]\nsteps = {steps}\ncfl = {cfl}\n"
                f"cg_tolerance = {1e-6 if precision == 'float' else 1e-13}\n")
        u, h = hotspot_field(cells, length, faces, periodic, center, 0.3, 1.0, 0.5)
        # README, time.cfl: dt = cfl / (f alpha sum_d 1/h_d^2).
        dt = cfl / (FACTOR[order] * 0.7 * sum(1.0 / (hd * hd) for hd in h))
        for _ in range(steps):
            step = explicit_step if scheme == "explicit" else implicit_step
            u = step(u, lambda e: laplacian(e, order, h, periodic), 0.7 * dt, periodic)
        return deck, u, dt

    def check(self, cells, periodic, order, scheme, precision, ranks, steps=6, cfl=0.9,
              time_block=1, sets=()):
        deck, expect, dt = self.case(cells, periodic, order, scheme, precision, steps, cfl)
        deck = deck.replace("[grid]", f"[parallel]\ntime_block = {time_block}\n[grid]")
        atol = 1e-5 if precision == "float" else (1e-10 if scheme == "implicit" else 1e-13)
        # The reference moves: the comparison would catch a lost reflection or a wrong weight.
        self.assertGreater(np.abs(expect - self.case(cells, periodic, order, scheme, precision,
                                                     0, cfl)[1]).max(), 1e-3)
        for n in ranks:
            got, report = self.run_deck(deck, n, *sets, name=f"o{order}{scheme}{precision}{n}")
            self.assertEqual(got.shape, expect.shape)
            self.assertEqual(report["time_block"], time_block)
            np.testing.assert_allclose(got, expect, rtol=0, atol=atol,
                                       err_msg=f"order {order} {scheme} {precision} {n} ranks")
        return got

    def test_order4_explicit_3d_mixed_boundaries_double(self):
        self.check([13, 11, 9], [False, True, False], 4, "explicit", "double", (1, 2, 4))

    def test_order8_explicit_3d_dirichlet_float(self):
        self.check([11, 9, 13], [False, False, False], 8, "explicit", "float", (1, 4))

    def test_order8_explicit_2d_periodic_x_double(self):
        self.check([17, 13], [True, False], 8, "explicit", "double", (1, 2, 4))

    def test_order4_explicit_2d_float(self):
        self.check([15, 11], [False, False], 4, "explicit", "float", (2,))

    def test_time_blocks_order4_3d_mixed_double(self):
        """Three sweeps per halo exchange (6-deep halos): the reflection beyond the Dirichlet
        faces follows each sweep, as the reference takes it every step, so the field is the
        reference's, and bitwise the run of one sweep per exchange."""
        case = ([19, 23, 26], [False, True, False], 4, "explicit", "double")
        blocked = self.check(*case, (1, 2, 4), steps=7, time_block=3)
        single = self.check(*case, (4,), steps=7, time_block=1)
        np.testing.assert_array_equal(blocked, single)
        # 10-deep halos, deeper than the sweep's shell: they move after the whole sweep.
        deep = self.check(*case, (1, 2), steps=11, time_block=5, sets=("parallel.overlap=false",))
        np.testing.assert_array_equal(deep, self.check(*case, (1,), steps=11, time_block=1))

    def test_time_blocks_order8_2d_float(self):
        case = ([33, 19], [False, False], 8, "explicit", "float")
        blocked = self.check(*case, (1, 4), steps=5, time_block=2)
        np.testing.assert_array_equal(blocked, self.check(*case, (4,), steps=5, time_block=1))

    def test_order4_implicit_3d_mixed_double(self):
        self.check([9, 8, 7], [False, False, True], 4, "implicit", "double", (1, 4), steps=2,
                   cfl=4.0)

    def test_order8_implicit_2d_double(self):
        self.check([13, 11], [False, True], 8, "implicit", "double", (1, 2), steps=2, cfl=4.0)

    def test_order8_implicit_3d_float(self):
        self.check([9, 9, 8], [True, False, False], 8, "implicit", "float", (2,), steps=2,
                   cfl=3.0)

    def test_stability_limit_of_each_order(self):
        # README: dt above 1 / (f alpha sum_d 1/h_d^2) is refused for the explicit scheme.
        for order in (2, 4, 8):
            h = 1.0 / 10
            limit = 1.0 / (FACTOR[order] * 1.0 * 3 / (h * h))
            deck = (f"[problem]\norder = {order}\n[grid]\ncells = [11, 11, 11]\n"
                    f"[time]\nsteps = 1\ndt = {limit * 1.001!r}\n")
            err = self.run_deck(deck, 1, name=f"unstable{order}", expect_rc=2)
            self.assertIn("unstable", err)
            deck = deck.replace(f"dt = {limit * 1.001!r}", f"dt = {limit * 0.999!r}")
            self.run_deck(deck, 1, name=f"stable{order}")

    def test_refusals(self):
        base = "[problem]\norder = {}\n[grid]\ncells = [12, 12]\n[time]\nsteps = 1\n"
        for order, sets, key in ((6, (), "problem.order"),
                                 (4, ("parallel.time_block=7",), "parallel.time_block"),
                                 (8, ('problem.scheme="implicit"',
                                      'time.cg_preconditioner="multigrid"'),
                                  "time.cg_preconditioner")):
            err = self.run_deck(base.format(order), 1, *sets, name=f"bad{order}", expect_rc=2)
            self.assertIn(key, err)
            self.assertEqual(len(err.strip().splitlines()), 1, err)


if __name__ == "__main__":
    unittest.main()

"""Fit math of scripts/scaling_lib.py on synthetic data with known answers."""
import math
import os
import random
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "scripts"))
import scaling_lib as lib  # noqa: E402
import scaling_report  # noqa: E402


class AmdahlFit(unittest.TestCase):
    def test_exact_recovery(self):
        for p in (0.5, 0.9, 0.99, 0.999):
            ranks = [1, 2, 4, 8, 16, 64]
            times = [1.0 / lib.amdahl(p, n) for n in ranks]  # T(N) = T1 / S(N), T1 = 1
            s = lib.speedups(ranks, times)
            self.assertAlmostEqual(lib.fit_amdahl(ranks, s), p, places=12)

    def test_noisy_data_stays_close(self):
        rng = random.Random(3)
        p = 0.95
        ranks = [1, 2, 4, 8, 16, 32] * 3
        times = [(1.0 / lib.amdahl(p, n)) * (1 + rng.uniform(-0.02, 0.02)) for n in ranks]
        # The noisy 1-rank runs define the base; keep the best one as the study does.
        base = min(t for n, t in zip(ranks, times) if n == 1)
        s = [base / t for t in times]
        self.assertAlmostEqual(lib.fit_amdahl(ranks, s), p, delta=0.01)

    def test_one_rank_count_is_a_clear_error(self):
        with self.assertRaisesRegex(lib.FitError, "at least two different rank counts"):
            lib.fit_amdahl([1], [1.0])
        with self.assertRaisesRegex(lib.FitError, "at least two different rank counts"):
            lib.fit_amdahl([4, 4], [1.0, 1.0])

    def test_base_other_than_one_rank(self):
        # A study starting at 2 ranks takes the 2-rank run as 2x faster than one rank.
        p = 0.9
        ranks = [2, 4, 8]
        times = [1.0 / lib.amdahl(p, n) for n in ranks]
        s = lib.speedups(ranks, times)
        self.assertAlmostEqual(s[0], 2.0)
        self.assertAlmostEqual(s[2], 2.0 * lib.amdahl(p, 8) / lib.amdahl(p, 2))


class GustafsonFit(unittest.TestCase):
    def test_exact_recovery(self):
        for p in (0.6, 0.9, 0.999):
            ranks = [1, 2, 4, 8, 32]
            # Weak scaling: N times the work in T(N) = N / S(N) (T1 = 1).
            times = [n / lib.gustafson(p, n) for n in ranks]
            s = lib.speedups(ranks, times, weak=True)
            for n, si in zip(ranks, s):
                self.assertAlmostEqual(si, lib.gustafson(p, n), places=12)
            self.assertAlmostEqual(lib.fit_gustafson(ranks, s), p, places=12)

    def test_one_rank_count_is_a_clear_error(self):
        with self.assertRaisesRegex(lib.FitError, "Gustafson"):
            lib.fit_gustafson([8], [7.5])


class KarpFlatt(unittest.TestCase):
    def test_equals_the_serial_fraction_of_an_amdahl_code(self):
        for n in (2, 4, 16):
            self.assertAlmostEqual(lib.karp_flatt(n, lib.amdahl(0.8, n)), 0.2, places=12)
        self.assertIsNone(lib.karp_flatt(1, 1.0))


class ComputeDivision(unittest.TestCase):
    def test_strong_divides_and_weak_keeps_the_first_compute(self):
        perfect, ratio = lib.compute_division(1, 0.276, 4, 0.0798)
        self.assertAlmostEqual(perfect, 0.069)
        self.assertAlmostEqual(ratio, 0.069 / 0.0798)
        perfect, ratio = lib.compute_division(2, 0.2, 8, 0.04)  # from 2 ranks: a quarter
        self.assertAlmostEqual(perfect, 0.05)
        self.assertAlmostEqual(ratio, 1.25)
        perfect, ratio = lib.compute_division(1, 0.3, 4, 0.33, weak=True)
        self.assertAlmostEqual(perfect, 0.3)
        self.assertAlmostEqual(ratio, 0.3 / 0.33)

    def test_no_compute_time_gives_no_ratio(self):
        self.assertTrue(math.isnan(lib.compute_division(1, 0.1, 2, 0.0)[1]))


class ComputeText(unittest.TestCase):
    """The report's sentence on where the last rank count's step goes."""

    @staticmethod
    def row(ranks, step_ms, compute_ms, vector_ms=0.0):
        return {"ranks": ranks, "time_per_step_s": step_ms / 1e3, "compute_s": compute_ms / 1e3,
                "vector_s": vector_ms / 1e3}

    def test_a_step_beyond_its_phases_is_time_not_hidden(self):
        text = scaling_report.compute_text({"kind": "strong"}, self.row(1, 1.0, 1.0), self.row(4, 0.3, 0.28))
        self.assertIn("0.2800 ms, 89% of perfect division of N=1's (0.2500 ms)", text)
        self.assertIn("the step 0.0200 ms more than it (transfers", text)

    def test_a_step_shorter_than_its_phases_says_they_overlapped(self):
        # Interior and boundary lanes (and the CG's vector operations) timed while they overlap.
        text = scaling_report.compute_text({"kind": "strong"}, self.row(1, 186.0, 35.0, 159.0),
                                           self.row(4, 49.0, 15.0, 40.0))
        self.assertIn("the step 6.0000 ms less than it and the vector operations together", text)
        self.assertIn("ran at the same time", text)
        self.assertNotIn("not hidden", text)

    def test_a_step_shorter_than_its_compute_alone_names_the_two_lanes(self):
        text = scaling_report.compute_text({"kind": "strong"}, self.row(1, 0.26, 0.26), self.row(4, 0.074, 0.10))
        self.assertIn("the step 0.0260 ms less than it: the interior and the boundary shell overlapped", text)
        self.assertNotIn("together", text)


class JobLabel(unittest.TestCase):
    def test_job_and_step_or_a_dash(self):
        job = {"scheduler": "slurm", "id": "4242", "step": "3"}
        self.assertEqual(lib.job_label({"job": job}), "slurm 4242.3")
        self.assertEqual(lib.job_label({"job": {**job, "scheduler": "pbs", "id": "1.s", "step": ""}}),
                         "pbs 1.s")
        self.assertEqual(lib.job_label({"job": {"scheduler": "", "id": "", "step": ""}}), "-")
        self.assertEqual(lib.job_label({}), "-")  # a report from before `job`


class NodesLabel(unittest.TestCase):
    def test_nodes_and_ranks_per_node(self):
        two = {"nodes": [{"name": "a", "ranks": [0, 1]}, {"name": "b", "ranks": [2, 3]}]}
        self.assertEqual(lib.nodes_label(two), "2 x 2")
        uneven = {"nodes": [{"name": "a", "ranks": [0, 1, 2]}, {"name": "b", "ranks": [3]}]}
        self.assertEqual(lib.nodes_label(uneven), "2 nodes: 3+1")
        self.assertEqual(lib.nodes_label({}), "-")


class NodeModel(unittest.TestCase):
    def test_terms_add_up_and_the_network_is_shared(self):
        faces = {"intra_messages": 2, "intra_bytes": 4e6, "inter_messages": 1, "inter_bytes": 2e6}
        t = lib.node_model_seconds(1e-9, 8e6, 4, faces, (5e-6, 1e11), (1e-5, 4e10), 4)
        # 2 ms of work, 2 x 5 us + 40 us inside, 10 us + 2 MB at 10 GB/s (a quarter of 40) across
        self.assertAlmostEqual(t, 2e-3 + 10e-6 + 40e-6 + 10e-6 + 200e-6, places=12)
        alone = {**faces, "inter_messages": 0, "inter_bytes": 0}
        self.assertLess(lib.node_model_seconds(1e-9, 8e6, 4, alone, (5e-6, 1e11), (1e-5, 4e10), 4), t)
        one_per_node = lib.node_model_seconds(1e-9, 8e6, 4, faces, (5e-6, 1e11), (1e-5, 4e10), 1)
        self.assertAlmostEqual(t - one_per_node, 2e6 / 1e10 - 2e6 / 4e10, places=12)


class Decomposition(unittest.TestCase):
    def test_halo_traffic_counts_faces_of_the_largest_block(self):
        # 64^3 over 2x2x1, non-periodic: one x face and one y face of 32x64, doubles.
        self.assertEqual(lib.halo_traffic([64, 64, 64], [2, 2, 1], [False] * 3, 8), (2, 2 * 32 * 64 * 8))
        # Periodic x over 4 ranks: two faces each way on that axis.
        self.assertEqual(lib.halo_traffic([64, 64], [4, 1], [True, False], 4), (2, 2 * 64 * 4))
        self.assertEqual(lib.halo_traffic([64, 64], [1, 1], [True, True], 4), (0, 0))

    def test_halo_model_recovers_latency_and_bandwidth(self):
        alpha, bw = 5e-6, 2e9
        samples = [(m, b, alpha * m + b / bw) for m, b in [(2, 1e6), (4, 1.5e6), (6, 4e6), (2, 8e6)]]
        a, w = lib.fit_halo_model(samples)
        self.assertAlmostEqual(a, alpha, delta=1e-12)
        self.assertAlmostEqual(w / bw, 1.0, places=9)
        with self.assertRaises(lib.FitError):
            lib.fit_halo_model([(0, 0, 0.0), (2, 1e6, 1e-3)])


    def test_halo_inputs_read_the_deck_of_a_report(self):
        def report(boundary, dims=2, precision="float"):
            return {"config": {"boundary": boundary}, "dims": dims, "precision": precision}
        self.assertEqual(lib.halo_inputs(report({"kind": "benchmark"})), ([False, True], 4))
        self.assertEqual(lib.halo_inputs(report({"kind": "dirichlet", "z": "periodic"}, 3, "double")),
                         ([False, False, True], 8))

    def test_fitted_halo_model_on_rows_of_known_transfer_times(self):
        # Two faces of 1024 doubles at 1x2 and four at 2x2: 5 us a message, 1 GB/s.
        def row(cells, grid, transfer_per_step):
            return {"cells": cells, "process_grid": grid,
                    "report": {"steps": 10, "phases": {"transfer": {"max": 10 * transfer_per_step}}}}
        rows = []
        for cells, grid in (("1024x1024", "1x2"), ("1024x1024", "2x2"), ("2048x1024", "1x4")):
            m, b = lib.halo_traffic([int(c) for c in cells.split("x")], [int(g) for g in grid.split("x")],
                                    [False, False], 8)
            rows.append(row(cells, grid, 5e-6 * m + b / 1e9))
        alpha, bw, why = lib.fitted_halo_model(rows, [False, False], 8)
        self.assertEqual(why, "")
        self.assertAlmostEqual(alpha, 5e-6, delta=1e-12)
        self.assertAlmostEqual(bw / 1e9, 1.0, places=6)
        alpha, bw, why = lib.fitted_halo_model(rows[:1], [False, False], 8)
        self.assertIsNone(alpha)
        self.assertNotEqual(why, "")

    def test_model_verdict_trusts_the_model_with_the_smaller_error(self):
        halo = (5e-6, 1e9, 1e-9, 0.02)
        self.assertIn("Trusting the halo model", lib.model_verdict("Amdahl's law", 0.05, halo, 1e-3)[1])
        self.assertIn("Trusting Amdahl's law", lib.model_verdict("Amdahl's law", 0.01, halo, 1e-3)[1])


if __name__ == "__main__":
    unittest.main()

"""scripts/regress.py (the GPU regression gate's verdict) on synthetic run reports whose figures
are known by construction: the best repeat counts, the CG figure is its field passes over the
copy bandwidth, a figure more than 5% below its baseline fails the gate, a run without a report
fails it, a figure with a tolerance of its own in the baseline is held to that one, and --update
writes a baseline (with its reason, keeping each figure's own tolerance) that the same reports
then pass."""
import contextlib
import io
import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "scripts"))
import regress  # noqa: E402

GPU = [{"gpu": "Test GPU X1 (0000:01:00.0)"}]


def stencil_report(ratio, us):
    return {"bandwidth_ratio": ratio, "time_per_step_s": us * 1e-6, "placement": GPU}


def cg_report(iterations, loop_s, points, ranks, copy_gbps, precision="double", passes=11):
    return {"cg": {"passes_per_iteration": passes, "iterations_per_step": {"total": iterations}},
            "precision": precision, "updated_points_per_step": points, "loop_seconds": loop_s,
            "ranks": ranks, "copy_bandwidth_GBps": copy_gbps, "placement": GPU}


class Gate(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = os.path.join(self.tmp.name, "reports")
        os.makedirs(self.dir)
        self.baseline = os.path.join(self.tmp.name, "baseline.json")

    def tearDown(self):
        self.tmp.cleanup()

    def put(self, name, doc):
        with open(os.path.join(self.dir, name + ".json"), "w") as f:
            json.dump(doc, f)

    def run_gate(self, *args):
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            rc = regress.main([self.dir, "--baseline", self.baseline, *args])
        return rc, out.getvalue(), err.getvalue()

    def write_baseline(self, figures):
        with open(self.baseline, "w") as f:
            json.dump({"figures": {k: {"ratio": v, "us": 1.0} for k, v in figures.items()}}, f)

    def written(self):
        """The baseline file as --update wrote it."""
        with open(self.baseline) as f:
            return json.load(f)

    def row(self, text, name):
        for line in text.splitlines():
            if line.startswith(f"| {name} |"):
                return [c.strip() for c in line.strip("|").split("|")]
        self.fail(f"no row {name} in\n{text}")

    def test_best_repeat_and_cg_figure(self):
        self.put("np1_jacobi_r1", stencil_report(0.80, 120.0))
        self.put("np1_jacobi_r2", stencil_report(0.90, 110.0))
        # 11 passes of 2e6 doubles, 50 iterations in 0.5 s on 2 ranks of 2 GB/s each:
        # 11 * 2e6 * 8 * 50 / 0.5 / 2 / 2e9 = 4.4; 10 ms per iteration.
        self.put("np2_cg_r1", cg_report(50, 0.5, 2e6, 2, 2.0))
        now, model = regress.collect(self.dir)
        self.assertEqual(model, "Test GPU X1")
        self.assertAlmostEqual(now["np1_jacobi"]["ratio"], 0.90)
        self.assertAlmostEqual(now["np1_jacobi"]["us"], 110.0)
        self.assertAlmostEqual(now["np2_cg"]["ratio"], 4.4)
        self.assertAlmostEqual(now["np2_cg"]["us"], 10000.0)

    def test_verdicts_and_exit_code(self):
        self.put("np1_a_r1", stencil_report(0.96, 1.0))   # 4% below 1.0: ok
        self.put("np1_b_r1", stencil_report(1.06, 1.0))   # 6% above: better
        self.put("np2_c_r1", stencil_report(0.50, 1.0))   # no baseline: new
        self.write_baseline({"np1_a": 1.0, "np1_b": 1.0, "np4_d": 1.0})  # d: not run here
        rc, out, _ = self.run_gate()
        self.assertEqual(rc, 0, out)
        self.assertEqual(self.row(out, "np1_a")[-1], "ok")
        self.assertEqual(self.row(out, "np1_a")[3], "0.960")
        self.assertEqual(self.row(out, "np1_b")[-1], "better")
        self.assertEqual(self.row(out, "np2_c")[-1], "new")
        self.assertEqual(self.row(out, "np4_d")[-1], "MISSING")
        self.assertTrue(out.rstrip().endswith("PASS"), out)

        self.put("np1_a_r1", stencil_report(0.94, 1.0))   # 6% below: fails the gate
        rc, out, _ = self.run_gate()
        self.assertEqual(rc, 1, out)
        self.assertEqual(self.row(out, "np1_a")[-1], "WORSE")
        self.assertTrue(out.rstrip().endswith("FAIL"), out)
        rc, out, _ = self.run_gate("--tolerance", "0.1")
        self.assertEqual(rc, 0, out)

    def test_a_figure_with_its_own_tolerance(self):
        with open(self.baseline, "w") as f:
            json.dump({"figures": {
                "np1_a": {"ratio": 1.0, "us": 1.0},
                "np1_snap": {"ratio": 1.0, "us": 1.0, "tolerance": 0.3,
                             "tolerance_reason": "the file write"}}}, f)
        self.put("np1_a_r1", stencil_report(1.0, 1.0))
        self.put("np1_snap_r1", stencil_report(0.75, 1.0))   # 25% below: within its 30%
        rc, out, _ = self.run_gate()
        self.assertEqual(rc, 0, out)
        self.assertEqual(self.row(out, "np1_snap")[-1], "ok")
        self.assertIn("np1_snap: 30% (the file write)", out)
        self.put("np1_snap_r1", stencil_report(1.35, 1.0))   # 35% above: better
        self.assertEqual(self.row(self.run_gate()[1], "np1_snap")[-1], "better")
        self.put("np1_snap_r1", stencil_report(0.65, 1.0))   # 35% below: fails
        self.put("np1_a_r1", stencil_report(0.94, 1.0))      # the file's 5% still holds here
        rc, out, _ = self.run_gate("--tolerance", "0.1")     # overrides the file's, not its own
        self.assertEqual(rc, 1, out)
        self.assertEqual(self.row(out, "np1_snap")[-1], "WORSE")
        self.assertEqual(self.row(out, "np1_a")[-1], "ok")
        rc, out, _ = self.run_gate("--update", "new figures")
        self.assertEqual(rc, 0, out)
        figures = self.written()["figures"]
        self.assertEqual(figures["np1_snap"], {"ratio": 0.65, "us": 1.0, "tolerance": 0.3,
                                               "tolerance_reason": "the file write"})
        self.assertEqual(figures["np1_a"], {"ratio": 0.94, "us": 1.0})

    def update_beside(self, committed):
        """--update of a new baseline file from reports of np1_a and np1_snap at 1.0, with
        `committed` ({file name: {figure: tolerance}}) as the committed baselines; the figures
        it wrote."""
        folder = os.path.join(self.tmp.name, "baselines")
        os.makedirs(folder)
        for name, tolerances in committed.items():
            with open(os.path.join(folder, name), "w") as f:
                json.dump({"figures": {k: {"ratio": 2.0, "us": 1.0, "tolerance": t,
                                           "tolerance_reason": name}
                                       for k, t in tolerances.items()}}, f)
        self.put("np1_a_r1", stencil_report(1.0, 1.0))
        self.put("np1_snap_r1", stencil_report(1.0, 1.0))
        saved = regress.BASELINES
        regress.BASELINES = folder
        try:
            rc, out, _ = self.run_gate("--update", "the build before")
        finally:
            regress.BASELINES = saved
        self.assertEqual(rc, 0, out)
        return self.written()["figures"]

    def gate_with_snap_held_to(self, figures, source, a_ratio):
        """Checks that the new file's np1_snap holds the 30% of committed file `source` and
        np1_a none of its own, then gates np1_snap 20% below and np1_a at `a_ratio` against it:
        the gate's exit code and output (np1_snap checked ok)."""
        self.assertEqual(figures["np1_snap"], {"ratio": 1.0, "us": 1.0, "tolerance": 0.3,
                                               "tolerance_reason": source})
        self.assertEqual(figures["np1_a"], {"ratio": 1.0, "us": 1.0})
        self.put("np1_snap_r1", stencil_report(0.8, 1.0))   # 20% below: within its 30%
        self.put("np1_a_r1", stencil_report(a_ratio, 1.0))
        rc, out, _ = self.run_gate()
        self.assertEqual(self.row(out, "np1_snap")[-1], "ok")
        return rc, out

    def test_a_new_baseline_takes_the_own_tolerances_of_the_committed_one(self):
        figures = self.update_beside({"test-gpu-x1.json": {"np1_snap": 0.3},
                                      "other-gpu.json": {"np1_a": 0.5}})
        # np1_a 10% below: fails the file's 5% (the other model's 50% is not this model's)
        rc, out = self.gate_with_snap_held_to(figures, "test-gpu-x1.json", 0.9)
        self.assertEqual(rc, 1, out)
        self.assertEqual(self.row(out, "np1_a")[-1], "WORSE")

    def test_a_model_without_a_committed_baseline_takes_the_own_tolerances_of_the_others(self):
        figures = self.update_beside({"other-gpu-b.json": {"np1_snap": 0.2},
                                      "other-gpu-a.json": {"np1_snap": 0.3}})
        rc, out = self.gate_with_snap_held_to(figures, "other-gpu-a.json", 1.0)
        self.assertEqual(rc, 0, out)

    def test_rows_ordered_by_gpu_count(self):
        for name in ("np4_x", "np1_y", "np2_x", "np1_x"):
            self.put(name + "_r1", stencil_report(1.0, 1.0))
        rc, out, _ = self.run_gate()
        names = [line.split("|")[1].strip() for line in out.splitlines()
                 if line.startswith("| np")]
        self.assertEqual(names, ["np1_x", "np1_y", "np2_x", "np4_x"])

    def test_a_run_without_report_fails(self):
        self.put("np1_a_r1", stencil_report(1.0, 1.0))
        with open(os.path.join(self.dir, "failed.txt"), "w") as f:
            f.write("np2_a\n")
        self.write_baseline({"np1_a": 1.0, "np2_a": 1.0})
        rc, out, _ = self.run_gate()
        self.assertEqual(rc, 1, out)
        self.assertEqual(self.row(out, "np2_a")[-1], "FAILED")

    def test_update_writes_a_baseline_with_its_reason(self):
        self.put("np1_a_r1", stencil_report(0.5, 7.0))
        self.write_baseline({"np1_a": 1.0})
        rc, out, err = self.run_gate("--update", "")
        self.assertEqual(rc, 2, out + err)
        self.assertIn("--update needs a reason", err)
        rc, out, _ = self.run_gate("--update", "a slower but correct kernel")
        self.assertEqual(rc, 0, out)
        doc = self.written()
        self.assertEqual(doc["reason"], "a slower but correct kernel")
        self.assertEqual(doc["gpu"], "Test GPU X1")
        self.assertEqual(doc["figures"]["np1_a"], {"ratio": 0.5, "us": 7.0})
        rc, out, _ = self.run_gate()
        self.assertEqual(rc, 0, out)
        self.assertEqual(self.row(out, "np1_a")[-1], "ok")

    def test_update_keeps_the_gpu_counts_it_did_not_measure(self):
        self.put("np1_a_r1", stencil_report(0.5, 7.0))
        with open(self.baseline, "w") as f:
            json.dump({"updated": "2026-01-02", "figures": {
                "np1_a": {"ratio": 1.0, "us": 1.0}, "np4_a": {"ratio": 0.9, "us": 2.0},
                "np4_b": {"ratio": 0.8, "us": 3.0, "kept": "2025-12-31"}}}, f)
        rc, out, _ = self.run_gate("--update", "one GPU only")
        self.assertEqual(rc, 0, out)
        figures = self.written()["figures"]
        self.assertEqual(list(figures), ["np1_a", "np4_a", "np4_b"])
        self.assertEqual(figures["np1_a"], {"ratio": 0.5, "us": 7.0})
        self.assertEqual(figures["np4_a"], {"ratio": 0.9, "us": 2.0, "kept": "2026-01-02"})
        self.assertEqual(figures["np4_b"]["kept"], "2025-12-31")

    def test_default_baseline_is_per_gpu_model(self):
        self.assertEqual(regress.slug("NVIDIA H100 80GB HBM3"), "nvidia-h100-80gb-hbm3")
        self.assertEqual(regress.gpu_model({"placement": [{"gpu": "NVIDIA H200 (0000:1a:00.0)"}]}),
                         "NVIDIA H200")

    def test_bad_input_exits_2(self):
        rc, _, err = self.run_gate()
        self.assertEqual(rc, 2)
        self.assertIn("no run reports", err)
        self.put("np1_a_r1", {"something": "else"})
        rc, _, err = self.run_gate()
        self.assertEqual(rc, 2)
        self.assertIn("not a gridsim run report", err)


if __name__ == "__main__":
    unittest.main()

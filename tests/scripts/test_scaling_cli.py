"""scripts/scaling.py end to end: tiny strong and weak studies on 1, 2 and 4 CPU ranks through
mpirun, and its handling of bad input. Needs GRIDSIM (the executable) and MPIEXEC."""
import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "..", "scripts", "scaling.py")
INPUTS = os.path.join(HERE, "..", "..", "inputs")
GRIDSIM = os.environ["GRIDSIM"]
LAUNCH = os.environ.get("MPIEXEC", "mpirun") + " -np {n} --oversubscribe"
TINY = ["--set", "grid.cells=[24,20,16]", "--set", "time.steps=8"]


def read_json(path):
    with open(path) as f:
        return json.load(f)


def read_text(path):
    with open(path) as f:
        return f.read()


def gridsim_choice(study, cells, n):
    """`gridsim check --ranks n` for the study's deck with these cells."""
    sets = [a for v in study["set"] for a in ("--set", v)]
    out = subprocess.run([GRIDSIM, "check", study["deck_path"], "--json", "--ranks", str(n), *sets,
                          "--set", f"grid.cells=[{','.join(map(str, cells))}]"],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout)["process_grid_for_ranks"]["grid"]


def scaling(*args):
    return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True,
                          env={**os.environ, "GRIDSIM": GRIDSIM}, check=False)


class Studies(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="gridsim_scaling_")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def check_outputs(self, out, kind, ranks):
        for name in ("report.md", "scaling.csv", "speedup.png", "efficiency.png", "phases.png"):
            path = os.path.join(out, name)
            self.assertTrue(os.path.isfile(path) and os.path.getsize(path) > 0, name)
        study = read_json(os.path.join(out, "study.json"))
        with open(os.path.join(out, "scaling.csv")) as f:
            rows = list(csv.DictReader(f))
        self.assertEqual([int(r["ranks"]) for r in rows], ranks)
        kept = {}  # the fastest repeat's report per rank count: the one the CSV keeps
        for run in study["runs"]:
            rep = read_json(os.path.join(out, "runs", run["report"]))
            self.assertEqual(rep["ranks"], run["ranks"])
            # The study ran on the process grid gridsim itself chooses: for the deck's grid
            # (strong), or for a domain shaped like one rank's block (weak).
            shape = study["per_rank_cells"] if kind == "weak" else rep["config"]["grid"]["cells"]
            self.assertEqual(rep["process_grid"][:len(shape)],
                             gridsim_choice(study, shape, rep["ranks"]))
            if kind == "weak":
                self.assertEqual(rep["config"]["grid"]["cells"],
                                 [c * g for c, g in zip(shape, rep["process_grid"])])
            if rep["ranks"] not in kept or rep["time_per_step_s"] < kept[rep["ranks"]]["time_per_step_s"]:
                kept[rep["ranks"]] = rep
        best = {n: rep["time_per_step_s"] for n, rep in kept.items()}
        t1 = best[min(best)]
        for r in rows:
            n = int(r["ranks"])
            # The CSV's numbers are the JSON reports' (best of the repeats), and the speedup
            # follows from them.
            self.assertAlmostEqual(float(r["time_per_step_s"]), best[n], delta=1e-9 * best[n])
            expect = (n * t1 / best[n]) if kind == "weak" else (t1 / best[n])
            self.assertAlmostEqual(float(r["speedup"]), expect, places=5)
            self.assertAlmostEqual(float(r["efficiency"]), expect / n, places=5)
        return study, rows, kept

    def test_strong_study(self):
        out = os.path.join(self.tmp, "strong")
        run = scaling("run", "strong", "--deck", os.path.join(INPUTS, "scaling_cpu.toml"), "--ranks", "1", "2", "4",
                      "--repeat", "2", "--launcher", LAUNCH, "--out", out, *TINY)
        self.assertEqual(run.returncode, 0, run.stderr)
        rep = scaling("report", out)
        self.assertEqual(rep.returncode, 0, rep.stderr)
        self.assertIn("Amdahl's law: P = ", rep.stdout)
        study, rows, _ = self.check_outputs(out, "strong", [1, 2, 4])
        self.assertEqual(len(study["runs"]), 6)
        self.assertEqual({r["cells"] for r in rows}, {"24x20x16"})  # strong: one problem size
        # An explicit step has no vector operations: no such column.
        self.assertEqual({float(r["vector_s"]) for r in rows}, {0.0})
        self.assertNotIn("vector ms", read_text(os.path.join(out, "report.md")))
        model = scaling("model", out, "--predict", "8", "64")
        self.assertEqual(model.returncode, 0, model.stderr)
        self.assertIn("Trusting", model.stdout)
        # Earlier results are never overwritten.
        again = scaling("run", "strong", "--deck", os.path.join(INPUTS, "scaling_cpu.toml"), "--ranks", "1",
                        "--launcher", LAUNCH, "--out", out)
        self.assertEqual(again.returncode, 2)
        self.assertIn("already holds a study", again.stderr)

    def test_ranks_left_idle_are_counted_where_they_were_launched(self):
        # A deck that runs on one rank of those launched (parallel.ranks_used): each N keeps its
        # own row, whose process grid says how many ran.
        out = os.path.join(self.tmp, "idle")
        run = scaling("run", "strong", "--deck", os.path.join(INPUTS, "scaling_cpu.toml"), "--ranks", "1", "2",
                      "--launcher", LAUNCH, "--out", out, *TINY, "--set", "parallel.ranks_used=1")
        self.assertEqual(run.returncode, 0, run.stderr)
        rep = scaling("report", out)
        self.assertEqual(rep.returncode, 0, rep.stderr)
        with open(os.path.join(out, "scaling.csv")) as f:
            rows = list(csv.DictReader(f))
        self.assertEqual([(r["ranks"], r["process_grid"]) for r in rows],
                         [("1", "1x1x1"), ("2", "1x1x1 (1 of 2 ranks)")])
        # The model reads the process grids of the rows, idle ranks or not.
        model = scaling("model", out, "--predict", "4")
        self.assertEqual(model.returncode, 0, model.stderr)

    def test_each_point_names_its_batch_job(self):
        # A study run inside a Slurm job step: every row of the table and the CSV names the job
        # and step of the run it kept (the report's `job`).
        out = os.path.join(self.tmp, "job")
        env = {**os.environ, "GRIDSIM": GRIDSIM, "SLURM_JOB_ID": "5150", "SLURM_STEP_ID": "7"}
        run = subprocess.run([sys.executable, SCRIPT, "run", "strong", "--deck",
                              os.path.join(INPUTS, "scaling_cpu.toml"), "--ranks", "1", "2",
                              "--launcher", LAUNCH, "--out", out, *TINY],
                             capture_output=True, text=True, env=env, check=False)
        self.assertEqual(run.returncode, 0, run.stderr)
        rep = scaling("report", out)
        self.assertEqual(rep.returncode, 0, rep.stderr)
        with open(os.path.join(out, "scaling.csv")) as f:
            self.assertEqual([r["job"] for r in csv.DictReader(f)], ["slurm 5150.7"] * 2)
        table = [ln for ln in read_text(os.path.join(out, "report.md")).splitlines()
                 if ln.startswith("| ")]
        self.assertTrue(table[0].endswith("| job |"), table[0])
        self.assertEqual(sum(ln.endswith("| slurm 5150.7 |") for ln in table), 2, table)

    def test_cg_study_splits_out_vector_operations_and_reductions(self):
        out = os.path.join(self.tmp, "cg")
        run = scaling("run", "strong", "--deck", os.path.join(INPUTS, "bench_heat3d_implicit.toml"), "--ranks", "1",
                      "2", "4", "--launcher", LAUNCH, "--out", out, "--set", "grid.cells=[24,20,16]", "--set",
                      "time.steps=2", "--set", 'parallel.backend="cpu"')
        self.assertEqual(run.returncode, 0, run.stderr)
        rep = scaling("report", out)
        self.assertEqual(rep.returncode, 0, rep.stderr)
        _, rows, kept = self.check_outputs(out, "strong", [1, 2, 4])
        # Each row's parts are the kept (fastest) run's phase means per step, read here from the
        # JSON reports; what is left of the step is "other".
        for row in rows:
            r = kept[int(row["ranks"])]
            per_step = {k: v["mean"] / r["steps"] for k, v in r["phases"].items()}
            parts = {"compute_s": per_step["interior"] + per_step["boundary"],
                     "transfer_s": per_step["pack"] + per_step["transfer"] + per_step["unpack"],
                     "vector_s": per_step["vector"], "reduction_s": per_step["reduction"]}
            self.assertGreater(parts["vector_s"], 0.0)
            self.assertGreater(parts["reduction_s"], 0.0)
            parts["other_s"] = max(0.0, r["time_per_step_s"] - sum(parts.values()))
            for name, value in parts.items():
                self.assertAlmostEqual(float(row[name]), value, delta=1e-9 * r["time_per_step_s"], msg=name)
        # The halo model divides the stencil and the vector operations over the ranks.
        one = kept[1]
        work = sum(one["phases"][p]["mean"] for p in ("interior", "boundary", "vector")) / one["steps"]
        model = scaling("model", out, "--predict", "8")
        self.assertEqual(model.returncode, 0, model.stderr)
        printed = float(model.stdout.split("compute ")[1].split(" ns per point")[0])
        self.assertAlmostEqual(printed, work / one["updated_points_per_step"] * 1e9, delta=1e-4)
        text = read_text(os.path.join(out, "report.md"))
        self.assertIn("| compute ms | transfer ms | vector ms | reduction ms | other ms |", text)
        self.assertIn("Vector operations (passes over the solver's vectors", text)
        self.assertIn("Reductions (local sums and all-reduces", text)

    def test_multigrid_study_says_where_the_v_cycle_goes(self):
        out = os.path.join(self.tmp, "mg")
        run = scaling("run", "strong", "--deck", os.path.join(INPUTS, "bench_heat3d_implicit.toml"), "--ranks", "1",
                      "2", "--launcher", LAUNCH, "--out", out, "--set", "grid.cells=[33,33,33]", "--set",
                      "time.steps=2", "--set", 'parallel.backend="cpu"', "--set",
                      'time.cg_preconditioner="multigrid"')
        self.assertEqual(run.returncode, 0, run.stderr)
        rep = scaling("report", out)
        self.assertEqual(rep.returncode, 0, rep.stderr)
        _, _, kept = self.check_outputs(out, "strong", [1, 2])
        text = read_text(os.path.join(out, "report.md"))
        for n in (1, 2):
            r = kept[n]
            parts = r["cg"]["multigrid"]["parts"]
            # Every part ran, and the V-cycles lie within the loop.
            for name in ("smoothing", "restriction", "prolongation", "coarse_solve"):
                self.assertGreater(parts[name]["min"], 0.0, name)
                self.assertLessEqual(parts[name]["min"], parts[name]["mean"])
                self.assertLessEqual(parts[name]["mean"], parts[name]["max"])
            self.assertLess(sum(v["mean"] for v in parts.values()), r["loop_seconds"])
            coarse = parts["coarse_solve"]["mean"] / r["steps"]
            share = 100 * coarse / r["time_per_step_s"]
            shown = f"{share:.1f}%" if share < 9.5 else f"{share:.0f}%"
            self.assertIn(f"coarse solve {1e3 * coarse:.3f}", text)
            self.assertIn(f"{shown} of a step at N={n}" if n == 1 else f"and {shown} at N={n}:", text)
            sums = f"{r['cg']['allreduces_per_step']:.1f}"
            self.assertIn(f"{sums} all-reduces per step at N={n}" if n == 1 else f"and {sums} at N={n},", text)

    def test_weak_study(self):
        out = os.path.join(self.tmp, "weak")
        run = scaling("run", "weak", "--deck", os.path.join(INPUTS, "scaling_cpu.toml"), "--ranks", "1", "2", "4",
                      "--per-rank-cells", "16", "16", "16", "--launcher", LAUNCH, "--out", out, "--set", "time.steps=8")
        self.assertEqual(run.returncode, 0, run.stderr)
        rep = scaling("report", out)
        self.assertEqual(rep.returncode, 0, rep.stderr)
        self.assertIn("Gustafson's law: P = ", rep.stdout)
        _, rows, _ = self.check_outputs(out, "weak", [1, 2, 4])
        # Cells grow with N, blocks stay 16^3; ties split the slower axes first: 1x1x1, 1x1x2, 1x2x2.
        self.assertEqual([r["cells"] for r in rows], ["16x16x16", "16x16x32", "16x32x32"])

    def test_one_rank_count_reports_without_a_fit(self):
        out = os.path.join(self.tmp, "single")
        self.assertEqual(scaling("run", "strong", "--deck", os.path.join(INPUTS, "scaling_cpu.toml"), "--ranks", "1",
                                 "--launcher", LAUNCH, "--out", out, *TINY).returncode, 0)
        rep = scaling("report", out)
        self.assertEqual(rep.returncode, 0, rep.stderr)
        self.assertIn("need at least two different rank counts", rep.stdout)


class BadInput(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="gridsim_scaling_bad_")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def study(self, name, ranks=("1", "2"), launcher=LAUNCH, extra=()):
        out = os.path.join(self.tmp, name)
        return out, scaling("run", "strong", "--deck", os.path.join(INPUTS, "scaling_cpu.toml"), "--ranks", *ranks,
                            "--launcher", launcher, "--out", out, *TINY, *extra)

    def test_missing_report(self):
        out, run = self.study("missing")
        self.assertEqual(run.returncode, 0, run.stderr)
        os.remove(os.path.join(out, "runs", "strong_n2_r0.json"))
        rep = scaling("report", out)
        self.assertEqual(rep.returncode, 2)
        self.assertIn("strong_n2_r0.json listed in study.json is missing", rep.stderr)

    def test_no_study(self):
        rep = scaling("report", self.tmp)
        self.assertEqual(rep.returncode, 2)
        self.assertIn("holds no study.json", rep.stderr)

    def test_mixed_decks(self):
        out, run = self.study("mixed")
        self.assertEqual(run.returncode, 0, run.stderr)
        other, run2 = self.study("other", ranks=("1",), extra=("--set", "problem.alpha=2.0"))
        self.assertEqual(run2.returncode, 0, run2.stderr)
        shutil.copy(os.path.join(other, "runs", "strong_n1_r0.json"), os.path.join(out, "runs", "strong_n1_r0.json"))
        rep = scaling("report", out)
        self.assertEqual(rep.returncode, 2)
        self.assertIn("mixes runs of different decks", rep.stderr)

    # A launcher that fails the 2-rank run, as a crashed job would.
    FAILING = ("sh -c '[ {n} -eq 2 ] && {{ echo simulated node failure >&2; exit 3; }}; "
               "exec " + LAUNCH.replace("{n}", "{n}") + " \"$0\" \"$@\"'")

    def test_failed_run_continue(self):
        out, run = self.study("cont", ranks=("1", "2", "4"), launcher=self.FAILING, extra=("--on-failure", "continue"))
        self.assertEqual(run.returncode, 1)
        self.assertIn("simulated node failure", run.stderr)
        study = read_json(os.path.join(out, "study.json"))
        self.assertEqual([r["report"] is not None for r in study["runs"]], [True, False, True])
        self.assertIn("simulated node failure", study["runs"][1]["stderr_tail"])
        rep = scaling("report", out)
        self.assertEqual(rep.returncode, 0, rep.stderr)
        self.assertIn("Failed runs (1)", read_text(os.path.join(out, "report.md")))

    def test_failed_run_stop(self):
        out, run = self.study("stop", ranks=("1", "2", "4"), launcher=self.FAILING)
        self.assertEqual(run.returncode, 1)
        study = read_json(os.path.join(out, "study.json"))
        self.assertEqual([r["ranks"] for r in study["runs"]], [1, 2])  # stopped at the failure

    def test_stop_file_ends_the_series_early(self):
        out = os.path.join(self.tmp, "stopped")
        os.makedirs(out)
        open(os.path.join(out, "STOP"), "w").close()  # what the batch templates' USR1 trap leaves
        _, run = self.study("stopped")
        self.assertEqual(run.returncode, 3)
        self.assertIn("stopping", run.stdout)
        self.assertEqual(read_json(os.path.join(out, "study.json"))["runs"], [])

    def test_bad_arguments(self):
        _, run = self.study("nodeck", launcher="mpirun -np 2")
        self.assertEqual(run.returncode, 2)
        self.assertIn("must contain {n}", run.stderr)
        bad = scaling("run", "strong", "--deck", os.path.join(self.tmp, "nope.toml"), "--ranks", "1", "--out",
                      os.path.join(self.tmp, "x"))
        self.assertEqual(bad.returncode, 2)
        self.assertIn("does not exist", bad.stderr)


if __name__ == "__main__":
    unittest.main()

"""scripts/bench-gpu.sh without a GPU: its modes' command lines and exit codes, with stand-ins
for nvidia-smi and mpirun on PATH (mpirun records each command and, where it names a report,
writes one with known figures). The gate mode writes a baseline and then passes against it,
the check mode runs the gpu tests at each rank count (from a build tree or a packed runtime's bin/)
and the sanitizers on every kernel variant, each run writing to a directory of its own,
a failed command makes the mode exit 1, and bad usage exits 2."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SCRIPT = os.path.join(ROOT, "scripts", "bench-gpu.sh")

NVIDIA_SMI = """#!/bin/sh
case "$1" in
  -L) i=0; while [ $i -lt "$FAKE_NGPU" ]; do echo "GPU $i: Fake GPU (UUID: GPU-$i)"; i=$((i+1)); done ;;
  *) echo 81559 ;;
esac
"""

# mpirun: records its arguments; fails where FAKE_FAIL occurs in them; writes a report where
# --report names one (an implicit deck gets the CG's keys).
MPIRUN = """#!{python}
import json, os, sys
args = sys.argv[1:]
with open(os.environ["FAKE_LOG"], "a") as f:
    f.write(" ".join(args) + "\\n")
if os.environ.get("FAKE_FAIL") and os.environ["FAKE_FAIL"] in " ".join(args):
    sys.exit(3)
if "--report" in args:
    doc = {{"bandwidth_ratio": 0.9, "time_per_step_s": 1e-4, "placement": [{{"gpu": "Fake GPU"}}]}}
    if any("implicit" in a for a in args):
        doc.update(cg={{"passes_per_iteration": 11, "iterations_per_step": {{"total": 40}}}},
                   precision="double", updated_points_per_step=512 ** 3, loop_seconds=0.2,
                   ranks=int(args[1]), copy_bandwidth_GBps=4000.0)
    with open(args[args.index("--report") + 1], "w") as f:
        json.dump(doc, f)
"""


class BenchGpu(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.bin = os.path.join(self.tmp.name, "bin")
        self.build = os.path.join(self.tmp.name, "build")
        os.makedirs(self.bin)
        os.makedirs(self.build)
        self.executable(self.bin, "nvidia-smi", text=NVIDIA_SMI)
        self.executable(self.bin, "mpirun", text=MPIRUN.format(python=sys.executable))
        self.executable(self.build, "gridsim")
        self.log = os.path.join(self.tmp.name, "commands.txt")

    def tearDown(self):
        self.tmp.cleanup()

    def executable(self, *path, text=""):
        """An executable file at os.path.join(*path) holding `text`; its path."""
        full = os.path.join(*path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w") as f:
            f.write(text)
        os.chmod(full, 0o755)
        return full

    def run_script(self, *args, ngpu=2, path=None, **env):
        full = dict(os.environ, FAKE_NGPU=str(ngpu), FAKE_LOG=self.log,
                    OUT=os.path.join(self.tmp.name, "out"), REGRESS_REPEAT="1",
                    PATH=path if path is not None else self.bin + os.pathsep + os.environ["PATH"])
        full.update(env)
        return subprocess.run(["bash", SCRIPT, *args], cwd=self.tmp.name, env=full,
                              capture_output=True, text=True, timeout=120)

    def commands(self):
        with open(self.log) as f:
            return f.read().splitlines()

    def test_regress_writes_a_baseline_then_passes_against_it(self):
        baseline = os.path.join(self.tmp.name, "baseline.json")
        r = self.run_script("regress", "--baseline", baseline, "--update", "test reason", self.build)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        with open(baseline) as f:
            doc = json.load(f)
        self.assertEqual(doc["reason"], "test reason")
        # Twenty-three benchmarks at 1 and 2 GPUs (the host's powers of two).
        self.assertEqual(len(doc["figures"]), 46)
        self.assertEqual(doc["figures"]["np2_jacobi2d_f_norm1"]["ratio"], 0.9)
        runs = [c for c in self.commands() if " run " in c]
        # The snapshot deck runs twice per repeat (REGRESS_SNAP_RUNS), each into its own folder.
        self.assertEqual(len(runs), 48)
        self.assertEqual(len([c for c in runs if "cg_preconditioner=multigrid" in c]), 4)
        # Heat of orders 4 and 8, explicit, order 4 implicit and order 4 in 2D, at each GPU count.
        orders = [c for c in runs if "problem.order=" in c]
        self.assertEqual(len(orders), 8)
        self.assertEqual(len([c for c in orders if "grid.cells=[16384,16384]" in c]), 2)
        # Density conductivity, explicit and implicit in 3D, explicit in 2D, with its regions, at
        # each GPU count.
        cond = [c for c in runs if 'problem.conductivity="density"' in c]
        self.assertEqual(len(cond), 6)
        self.assertEqual(len([c for c in cond if "grid.cells=[16384,16384]" in c]), 2)
        self.assertTrue(all("initial.regions=[{" in c for c in cond))
        snaps = [c for c in runs if "snapshot_every=100" in c]
        self.assertEqual(len(snaps), 4)
        self.assertEqual(len({c.split("output.dir=")[1] for c in snaps}), 4)
        self.assertTrue(all(c.startswith(("-np 1 ", "-np 2 ")) for c in runs))
        self.assertTrue(all(os.path.join(ROOT, "inputs", "bench_") in c for c in runs))
        self.assertTrue(any("time.norm_every=1" in c and "problem.precision=double" in c for c in runs))
        # The small deck, whose step is mostly fixed costs, at each GPU count.
        small = [c for c in runs if "grid.cells=[128,128,128]" in c]
        self.assertEqual([c.split()[1] for c in small], ["1", "2"])
        self.assertTrue(all("bench_heat3d.toml" in c for c in small))
        # The deck whose every rank exchanges two faces: the ranks in a column along z.
        zfaces = [c for c in runs if "boundary.z=periodic" in c]
        self.assertEqual([c.split()[1] for c in zfaces], ["1", "2"])
        self.assertTrue(all(f"parallel.process_grid=[1,1,{c.split()[1]}]" in c for c in zfaces))
        # An 80 GB card takes the jacobi 3D figure at 1024^3.
        self.assertIn("grid.cells=[1024,1024,1024]",
                      next(c for c in runs if "bench_jacobi3d" in c))
        again = self.run_script("regress", "--baseline", baseline, self.build)
        self.assertEqual(again.returncode, 0, again.stdout + again.stderr)
        self.assertIn("np2_cg_fused", again.stdout)

    def test_regress_fails_when_a_run_fails(self):
        baseline = os.path.join(self.tmp.name, "baseline.json")
        self.assertEqual(self.run_script("regress", "--baseline", baseline, "--update", "x",
                                         self.build).returncode, 0)
        r = self.run_script("regress", "--baseline", baseline, self.build,
                            FAKE_FAIL="bench_heat3d.toml --quiet")
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("FAILED (rc=3)", r.stdout)

    def test_check_runs_tests_at_each_rank_count_and_the_sanitizers(self):
        self.executable(self.build, "tests", "gpu_backend_test")
        r = self.run_script("check", self.build, ngpu=1, RANKS="1 4")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        cmds = self.commands()
        tests = [c for c in cmds if "gpu_backend_test" in c]
        self.assertEqual([c.split()[1] for c in tests], ["1", "4"])
        self.assertTrue(all(os.path.join(self.build, "tests", "gpu_backend_test") in c for c in tests))
        memcheck = [c for c in cmds if "--tool memcheck" in c]
        racecheck = [c for c in cmds if "--tool racecheck" in c]
        self.assertEqual(len(memcheck), 24)  # eight small decks x three kernel variants
        self.assertEqual(len(racecheck), 12)
        # The density-conduction decks in time blocks (the 3D and 2D levels kernels with a
        # field), the order 8 deck (the plane walk's shared planes) and the order 4 deck in time
        # blocks (the wide levels kernel's shared planes and reflections) are among them, under
        # both tools.
        for tool in (memcheck, racecheck):
            self.assertTrue(any('problem.conductivity="density"' in c and "time_block=2" in c
                                for c in tool))
            self.assertTrue(any('problem.conductivity="density"' in c and "time_block=3" in c
                                and "heat2d_periodic.toml" in c for c in tool))
            self.assertTrue(any("problem.order=8" in c for c in tool))
            self.assertTrue(any("problem.order=4" in c and "time_block=2" in c for c in tool))
        for k in ("stream", "tiled", "naive"):
            self.assertTrue(any(c.endswith("parallel.kernel=" + k) for c in memcheck))
        # Both ranks run the small decks (gridsim would leave one idle): their halos are checked.
        self.assertTrue(all("-np 2 " in c and "parallel.ranks_used=2" in c
                            for c in memcheck + racecheck))
        # Each sanitizer run writes its files to a directory of its own (the small decks differ
        # in problem and precision, and gridsim keeps another run's files).
        dirs = [c.split("output.dir=")[1].split()[0] for c in memcheck + racecheck]
        self.assertEqual(len(set(dirs)), len(dirs))
        # Those are scratch: check runs no benchmark, so it leaves no reports archive.
        self.assertFalse(os.path.exists(os.path.join(self.tmp.name, "out", "reports.tgz")))
        failed = self.run_script("check", self.build, ngpu=1, RANKS="2", FAKE_FAIL="racecheck")
        self.assertEqual(failed.returncode, 1)
        self.assertIn("failed: 12", failed.stdout)

    def test_check_finds_the_tests_beside_gridsim_in_a_packed_runtime(self):
        # scripts/pack_runtime.sh puts gridsim and gpu_backend_test side by side in one bin/.
        flat = os.path.join(self.tmp.name, "runtime", "bin")
        self.executable(flat, "gridsim")
        tests = self.executable(flat, "gpu_backend_test")
        r = self.run_script("check", flat, ngpu=1, RANKS="2")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        runs = [c.split() for c in self.commands() if "gpu_backend_test" in c]
        self.assertTrue(runs)
        self.assertTrue(all(tests in words for words in runs), runs)

    def test_scaling_runs_each_study_over_the_hosts_gpus(self):
        def studies(ngpu):
            out = os.path.join(self.tmp.name, "out%d" % ngpu)
            self.run_script("scaling", self.build, ngpu=ngpu, OUT=out)
            with open(os.path.join(out, "scaling.log")) as f:
                return [line for line in f if line.startswith("=== python3") and " run " in line]
        four = studies(4)
        self.assertEqual(len(four), 5)
        self.assertTrue(all("--ranks 1 2 4 --repeat" in c for c in four))
        self.assertFalse(any("1024" in c for c in four))
        # A whole node of 8: heat 1024^3 strong as well, on 1, 2, 4 and 8 GPUs.
        eight = studies(8)
        self.assertEqual(len(eight), 6)
        big = [c for c in eight if "heat3d-1024-strong" in c]
        self.assertEqual(len(big), 1)
        self.assertIn("run strong --deck " + os.path.join(ROOT, "inputs", "bench_heat3d.toml"),
                      big[0])
        self.assertIn("--ranks 1 2 4 8 --repeat", big[0])
        self.assertIn("--set grid.cells=[1024,1024,1024]", big[0])

    def test_bad_usage_exits_2(self):
        for args, words in ((("nosuch",), "unknown mode 'nosuch'"), ((), "unknown mode ''"),
                            (("regress", "--update"), "--update needs a value"),
                            (("bench", os.path.join(self.tmp.name, "none")), "no gridsim at")):
            r = self.run_script(*args)
            self.assertEqual(r.returncode, 2, args)
            self.assertIn(words, r.stderr)
        # No nvidia-smi on PATH: no GPU.
        r = self.run_script("bench", self.build, path="/usr/bin:/bin")
        self.assertEqual(r.returncode, 2)
        self.assertIn("no GPU found", r.stderr)
        usage = self.run_script("--help")
        self.assertEqual(usage.returncode, 0)
        for mode in ("check", "bench", "regress", "latency", "scaling", "profile"):
            self.assertIn("  " + mode + " ", usage.stdout)


if __name__ == "__main__":
    unittest.main()

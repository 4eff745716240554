"""What a batch job can rely on (docs/running.md, "Batch jobs"): a signal, a STOP file or the deck's wall
time ends a run with a complete checkpoint and exit code 3, and the restart continues bitwise to
the same final field as an uninterrupted run; a blow-up ends every rank with exit code 1 and
says in one line the step, the grid's first bad point and how many points and ranks are bad; a checkpoint holding NaN is
refused on restart; output names cannot break files. Needs GRIDSIM and MPIEXEC in the
environment."""
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
import unittest
import xml.etree.ElementTree as ET

import h5py
import numpy as np

GRIDSIM = os.environ["GRIDSIM"]
MPIEXEC = os.environ.get("MPIEXEC", "mpirun")
DECK = ("[grid]\ncells = [40, 36, 32]\n[time]\nsteps = 10000000\n"
        "[parallel]\nbackend = \"cpu\"\n[output]\nprogress_every = 200\n")


class BatchJobs(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="gridsim_batch_")
        self.deck = self.path("deck.toml")
        with open(self.deck, "w") as f:
            f.write(DECK)

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def path(self, *names):
        return os.path.join(self.tmp, *names)

    def command(self, ranks, out, *args):
        launch = [MPIEXEC, "-np", str(ranks), "--oversubscribe"] if ranks > 1 else []
        return launch + [GRIDSIM, "run", self.deck, "--set", f'output.dir="{out}"', *args]

    def run_to_end(self, ranks, out, *args):
        res = subprocess.run(self.command(ranks, out, *args), capture_output=True, text=True,
                             timeout=300, check=False)
        return res.returncode, res.stdout, res.stderr

    def start_and_wait_for_steps(self, ranks, out, *args):
        """Starts a long run; returns the process once it has printed a progress line."""
        proc = subprocess.Popen(self.command(ranks, out, *args), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        for line in proc.stdout:
            if line.startswith("step "):
                return proc
        proc.wait(timeout=60)
        self.fail(f"no progress line: exit {proc.returncode}: {proc.stderr.read()}")

    def finish(self, proc):
        out, err = proc.communicate(timeout=120)
        return proc.returncode, out, err

    def checkpoint_step(self, out):
        with h5py.File(os.path.join(out, "checkpoint.h5")) as f:
            self.assertIn(f.attrs["kind"], ("checkpoint", b"checkpoint"))
            return int(f.attrs["step"])

    def final_field(self, out):
        with h5py.File(os.path.join(out, "snapshot_final.h5")) as f:
            return f["/fields/u"][...]

    def assert_restart_continues_bitwise(self, ranks, out, stopped_at):
        """The restart from the stop's checkpoint reaches the same field, bit for bit, as one
        uninterrupted run to the same step."""
        end = stopped_at + 37
        rc, stdout, stderr = self.run_to_end(
            ranks, out, "--quiet", "--set", f"time.steps={end}", "--set", "output.write_final=true",
            "--restart", os.path.join(out, "checkpoint.h5"))
        self.assertEqual(rc, 0, stdout + stderr)
        whole = self.path("whole")
        rc, stdout, stderr = self.run_to_end(1, whole, "--quiet", "--set", f"time.steps={end}",
                                             "--set", "output.write_final=true")
        self.assertEqual(rc, 0, stdout + stderr)
        np.testing.assert_array_equal(self.final_field(out), self.final_field(whole))

    def assert_stopped(self, rc, stdout, stderr, reason):
        self.assertEqual(rc, 3, stdout + stderr)
        m = re.search(r"stopped at step (\d+) of 10000000 by (.+?): checkpoint", stdout)
        self.assertIsNotNone(m, stdout)
        self.assertIn(reason, m.group(2))
        self.assertIn("--restart", stdout)
        return int(m.group(1))

    def test_sigterm_to_the_process_one_rank(self):
        out = self.path("term1")
        proc = self.start_and_wait_for_steps(1, out)
        proc.send_signal(signal.SIGTERM)
        rc, stdout, stderr = self.finish(proc)
        step = self.assert_stopped(rc, stdout, stderr, "SIGTERM")
        self.assertEqual(self.checkpoint_step(out), step)
        self.assert_restart_continues_bitwise(1, out, step)

    def test_sigusr1_to_mpirun_four_ranks(self):
        # mpirun forwards SIGUSR1 to every rank (Slurm's --signal reaches them directly).
        out = self.path("usr4")
        proc = self.start_and_wait_for_steps(4, out, "--report", self.path("r.json"))
        proc.send_signal(signal.SIGUSR1)
        rc, stdout, stderr = self.finish(proc)
        step = self.assert_stopped(rc, stdout, stderr, "SIGUSR1")
        self.assertEqual(self.checkpoint_step(out), step)
        with open(self.path("r.json")) as f:
            report = json.load(f)
        self.assertEqual(report["stopped"]["reason"], "SIGUSR1")
        self.assertEqual(report["stopped"]["step"], step)
        self.assertEqual(report["steps"], step)
        self.assert_restart_continues_bitwise(4, out, step)

    def test_stop_file_four_ranks(self):
        out = self.path("stopfile")
        proc = self.start_and_wait_for_steps(4, out)
        os.makedirs(out, exist_ok=True)  # nothing was due to be written yet
        open(os.path.join(out, "STOP"), "w").close()
        rc, stdout, stderr = self.finish(proc)
        step = self.assert_stopped(rc, stdout, stderr, "the STOP file")
        self.assertFalse(os.path.exists(os.path.join(out, "STOP")))  # consumed
        self.assertEqual(self.checkpoint_step(out), step)
        self.assert_restart_continues_bitwise(4, out, step)

    def test_stop_file_lands_where_a_time_block_ends(self):
        # The agreement is taken where a time block ends, never inside one: blocks of 5 steps
        # from step 0, nothing else due before step 200 (the progress line), and a STOP file
        # there from the start, so the first agreement stops the run at a multiple of 5 (it
        # was due at step 1, where a block used to be cut short).
        out = self.path("stopblock")
        os.makedirs(out)
        open(os.path.join(out, "STOP"), "w").close()
        rc, stdout, stderr = self.run_to_end(2, out, "--set", "parallel.time_block=5")
        step = self.assert_stopped(rc, stdout, stderr, "the STOP file")
        self.assertGreater(step, 0)
        self.assertEqual(step % 5, 0)
        self.assertEqual(self.checkpoint_step(out), step)
        self.assert_restart_continues_bitwise(2, out, step)

    def test_wall_time_stops_before_it_passes(self):
        out = self.path("wall")
        began = time.monotonic()
        rc, stdout, stderr = self.run_to_end(2, out, "--set", 'run.max_walltime="00:00:04"',
                                             "--report", self.path("w.json"))
        step = self.assert_stopped(rc, stdout, stderr, "run.max_walltime")
        with open(self.path("w.json")) as f:
            report = json.load(f)
        # From process start to the end of the loop, plus the checkpoint: inside the limit.
        self.assertLess(report["startup_s"] + report["loop_seconds"], 4.0)
        self.assertLess(time.monotonic() - began, 30.0)
        self.assertEqual(self.checkpoint_step(out), step)

    def test_second_signal_ends_at_once(self):
        out = self.path("twice")
        # Steps of about 0.3 s: both signals arrive within one step, before any agreement.
        proc = self.start_and_wait_for_steps(1, out, "--set", "output.progress_every=1",
                                             "--set", "grid.cells=[300,300,300]")
        proc.send_signal(signal.SIGINT)
        time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=60)
        self.assertEqual(proc.returncode, -signal.SIGINT)

    def test_sigkill_of_one_rank_during_a_checkpoint_write(self):
        out = self.path("kill")
        ckpt = os.path.join(out, "checkpoint.h5")
        proc = subprocess.Popen(
            self.command(4, out, "--quiet", "--set", "grid.cells=[160,160,160]", "--set",
                         "output.checkpoint_every=3"), stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 120
        # One complete checkpoint, then the next one's temporary file: a write in progress.
        while not os.path.exists(ckpt) and time.monotonic() < deadline:
            time.sleep(0.01)
        while not os.path.exists(ckpt + ".tmp") and time.monotonic() < deadline:
            time.sleep(0.002)
        ranks = subprocess.run(["pgrep", "-P", str(proc.pid), "-x", "gridsim"],
                               capture_output=True, text=True, check=False).stdout.split()
        self.assertEqual(len(ranks), 4, ranks)
        os.kill(int(ranks[-1]), signal.SIGKILL)
        killed = time.monotonic()
        proc.communicate(timeout=120)
        self.assertNotEqual(proc.returncode, 0)
        self.assertLess(time.monotonic() - killed, 30)  # every other rank ended too
        # The last complete checkpoint restarts (on another rank count) and runs on.
        step = self.checkpoint_step(out)
        rc, stdout, stderr = self.run_to_end(
            2, out, "--quiet", "--set", "grid.cells=[160,160,160]", "--set",
            f"time.steps={step + 2}", "--restart", ckpt)
        self.assertEqual(rc, 0, stdout + stderr)

    def test_a_stalled_rank_ends_the_job(self):
        # A rank that stops making progress (here: stopped by SIGSTOP, as a hung peer would be)
        # holds the others in their halo exchange; their watchdogs end them.
        out = self.path("stall")
        proc = self.start_and_wait_for_steps(2, out, "--set", 'run.stall_timeout="00:00:03"')
        ranks = subprocess.run(["pgrep", "-P", str(proc.pid), "-x", "gridsim"],
                               capture_output=True, text=True, check=False).stdout.split()
        self.assertEqual(len(ranks), 2, ranks)
        os.kill(int(ranks[1]), signal.SIGSTOP)
        stopped = time.monotonic()
        try:
            _, err = proc.communicate(timeout=60)
        finally:
            for pid in ranks:
                try:
                    os.kill(int(pid), signal.SIGKILL)
                except ProcessLookupError:
                    pass
        self.assertNotEqual(proc.returncode, 0)
        self.assertLess(time.monotonic() - stopped, 30)
        self.assertRegex(err, r"gridsim: rank 0: error: no step completed in \d+ s "
                              r"\(run.stall_timeout\)")

    def test_blow_up_ends_every_rank_naming_the_step(self):
        # 3e38 fits in a float; a few steps of the stencil overflow it.
        rc, stdout, stderr = self.run_to_end(
            4, self.path("blow"), "--set", "problem.precision=\"float\"", "--set",
            "initial.amplitude=3e38", "--set", "output.check_every=4", "--set",
            "output.checkpoint_every=4")
        self.assertEqual(rc, 1, stdout + stderr)
        self.assertRegex(stderr, r"gridsim: error: step 4: the solution blew up: \d+ non-finite")
        # One line from rank 0, whatever the rank count: the totals, the grid's first bad point,
        # and how many points on how many of the 4 ranks.
        lines = [l for l in stderr.splitlines() if l.startswith("gridsim:")]
        self.assertEqual(len(lines), 1, stderr)
        self.assertRegex(lines[0], r"^gridsim: error: step 4: the solution blew up: \d+ non-finite "
                                   r"value\(s\); the first bad point is u\(\d+, \d+, \d+\) = "
                                   r"(inf|-inf|nan), \d+ bad point\(s\) on [1-4] of 4 rank\(s\)$")
        self.assertNotIn("MPI_ABORT", stderr)
        # The checkpoint due at that step was not written from the bad field.
        self.assertFalse(os.path.exists(self.path("blow", "checkpoint.h5")))

    def test_last_good_state_is_dumped(self):
        out = self.path("dump")
        rc, stdout, stderr = self.run_to_end(
            2, out, "--set", "problem.precision=\"float\"", "--set", "initial.amplitude=3e38",
            "--set", "output.check_every=2", "--set", "output.dump_on_failure=true")
        self.assertEqual(rc, 1, stdout + stderr)
        self.assertIn("the last good state, step 0, is in", stderr)
        with h5py.File(os.path.join(out, "snapshot_lastgood_00000000.h5")) as f:
            self.assertEqual(int(f.attrs["step"]), 0)
            u = f["/fields/u"][...]
        self.assertTrue(np.isfinite(u).all())
        self.assertGreater(np.abs(u).max(), 1e38)  # the initial state, before the overflow

    def test_bound_on_values(self):
        rc, stdout, stderr = self.run_to_end(2, self.path("bound"), "--set",
                                             "initial.amplitude=2.0", "--set", "output.max_abs=1.5",
                                             "--set", "output.check_every=3")
        self.assertEqual(rc, 1, stdout + stderr)
        self.assertRegex(stderr, r"step 3: the solution blew up: 0 non-finite value\(s\), \|u\| "
                                 r"up to [0-9.]+ against output.max_abs = 1.5")

    def test_last_step_is_checked(self):
        # 10 steps, a check every 1000: only the last step's check sees the bound passed, and the
        # final snapshot is not written from that field.
        out = self.path("last")
        rc, stdout, stderr = self.run_to_end(1, out, "--quiet", "--set", "time.steps=10",
                                             "--set", "initial.amplitude=2.0", "--set",
                                             "output.max_abs=1.5", "--set",
                                             "output.write_final=true")
        self.assertEqual(rc, 1, stdout + stderr)
        self.assertIn("step 10: the solution blew up", stderr)
        self.assertFalse(os.path.exists(os.path.join(out, "snapshot_final.h5")))

    def test_injected_nan_on_one_rank(self):
        out = self.path("nan")
        rc, stdout, stderr = self.run_to_end(4, out, "--quiet", "--set", "time.steps=10", "--set",
                                             "output.checkpoint_every=10")
        self.assertEqual(rc, 0, stdout + stderr)
        ckpt = os.path.join(out, "checkpoint.h5")
        with h5py.File(ckpt, "r+") as f:
            # [z][y][x]: the point (10, 9, 8), five points or more inside its rank's block on
            # every process grid 4 ranks may use for 40 x 36 x 32
            f["/fields/u"][8, 9, 10] = np.nan
        restart = ["--restart", ckpt, "--set", "time.steps=40", "--set", "output.check_every=5"]
        rc, stdout, stderr = self.run_to_end(4, out, *restart)
        self.assertEqual(rc, 2, stdout + stderr)
        self.assertIn("the checkpoint holds 1 non-finite value(s)", stderr)
        rc, stdout, stderr = self.run_to_end(4, out, *restart, "--allow-nonfinite")
        self.assertEqual(rc, 1, stdout + stderr)
        self.assertIn("step 15: the solution blew up", stderr)
        # Five steps spread the NaN over the points within five steps of it along the axes (an
        # L1 ball of radius 5: 231 points, all inside the grid): the first bad point in x-fastest
        # order is five planes below it. One line, from rank 0.
        lines = [l for l in stderr.splitlines() if l.startswith("gridsim:")]
        self.assertEqual(len(lines), 1, stderr)
        self.assertRegex(lines[0], r"the first bad point is u\(10, 9, 3\) = nan, 231 bad "
                                   r"point\(s\) on [1-4] of 4 rank\(s\)$")

    def run_with_file_size_limit(self, ranks, kib, out, *args):
        """Each rank may write no file larger than `kib` KiB (RLIMIT_FSIZE, SIGXFSZ ignored so a
        write fails with EFBIG): a disk that fills up, for one file at a time."""
        inner = " ".join(["exec", GRIDSIM, "run", self.deck, "--set", f"'output.dir=\"{out}\"'",
                          *args])
        cmd = [MPIEXEC, "-np", str(ranks), "--oversubscribe", "--mca", "btl", "self,tcp", "bash",
               "-c", f"trap '' XFSZ; ulimit -f {kib}; {inner}"]
        began = time.monotonic()
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)
        return res.returncode, res.stdout, res.stderr, time.monotonic() - began

    def test_full_disk_during_a_write_ends_every_rank_and_keeps_earlier_files(self):
        # Float snapshots (1 MiB) fit in 1500 KiB, the double checkpoint (2 MiB) does not.
        for ranks in (1, 4):
            out = self.path(f"full{ranks}")
            rc, stdout, stderr, took = self.run_with_file_size_limit(
                ranks, 1500, out, "--quiet", "--set", "grid.cells=[64,64,64]", "--set",
                "time.steps=30", "--set", "output.snapshot_every=10", "--set",
                "output.checkpoint_every=20", "--set", "output.precision='float'")
            self.assertEqual(rc, 1, stdout + stderr)
            self.assertLess(took, 60)
            # One line from rank 0, agreed by the ranks (no per-rank lines), and no MPI_Abort:
            # the ranks end together.
            errors = [l for l in stderr.splitlines() if "error:" in l]
            self.assertEqual(len(errors), 1, stderr)
            self.assertTrue(errors[0].startswith("gridsim: error: "), stderr)
            self.assertIn("checkpoint.h5.tmp removed", errors[0])
            self.assertIn("File too large", errors[0])
            self.assertNotIn("MPI_ABORT", stderr)
            self.assertEqual(sorted(os.listdir(out)),
                             ["snapshot.xmf", "snapshot_00000010.h5", "snapshot_00000010.xmf",
                              "snapshot_00000020.h5", "snapshot_00000020.xmf"])
            for step in (10, 20):
                with h5py.File(os.path.join(out, f"snapshot_{step:08d}.h5")) as f:
                    self.assertEqual(int(f.attrs["step"]), step)
            ET.parse(os.path.join(out, "snapshot.xmf"))

    def test_full_disk_at_the_first_snapshot_leaves_no_file(self):
        out = self.path("full_first")
        rc, stdout, stderr, took = self.run_with_file_size_limit(
            4, 300, out, "--quiet", "--set", "grid.cells=[64,64,64]", "--set", "time.steps=30",
            "--set", "output.snapshot_every=10")
        self.assertEqual(rc, 1, stdout + stderr)
        self.assertLess(took, 60)
        self.assertEqual(os.listdir(out), [])

    def test_output_names_cannot_break_files(self):
        rc, stdout, stderr = self.run_to_end(1, self.path("nul"), "--set",
                                             'output.prefix="x\\u0000y"')
        self.assertEqual(rc, 2, stdout + stderr)
        self.assertIn("output.prefix", stderr)
        out = self.path("xml")
        rc, stdout, stderr = self.run_to_end(
            1, out, "--quiet", "--set", "time.steps=4", "--set", "output.snapshot_every=2",
            "--set", "output.prefix='a&b<c\"d'")
        self.assertEqual(rc, 0, stdout + stderr)
        series = ET.parse(os.path.join(out, 'a&b<c"d.xmf'))
        items = [e.text for e in series.iter("DataItem") if e.get("Format") == "HDF"]
        self.assertEqual(items, ['a&b<c"d_00000002.h5:/fields/u', 'a&b<c"d_00000004.h5:/fields/u'])
        ET.parse(os.path.join(out, 'a&b<c"d_00000002.xmf'))

    def test_another_runs_files_are_not_overwritten_silently(self):
        out = self.path("shared")
        first = ["--quiet", "--set", "time.steps=4", "--set", "output.write_final=true"]
        rc, stdout, stderr = self.run_to_end(1, out, *first)
        self.assertEqual(rc, 0, stdout + stderr)
        before = os.path.getmtime(os.path.join(out, "snapshot_final.h5"))
        # The same problem again (more steps): its own files, replaced.
        rc, stdout, stderr = self.run_to_end(1, out, *first, "--set", "time.steps=6")
        self.assertEqual(rc, 0, stdout + stderr)
        # Another problem: refused before anything is written, unless asked for.
        other = first + ["--set", "grid.cells=[20,20,20]"]
        rc, stdout, stderr = self.run_to_end(1, out, *other)
        self.assertEqual(rc, 2, stdout + stderr)
        self.assertIn("written by another run", stderr)
        self.assertIn("output.overwrite = true", stderr)
        with h5py.File(os.path.join(out, "snapshot_final.h5")) as f:
            self.assertEqual(int(f.attrs["step"]), 6)
        rc, stdout, stderr = self.run_to_end(1, out, *other, "--set", "output.overwrite=true")
        self.assertEqual(rc, 0, stdout + stderr)
        self.assertGreaterEqual(os.path.getmtime(os.path.join(out, "snapshot_final.h5")), before)

    def test_checkpoint_path_that_is_a_directory(self):
        os.makedirs(self.path("mydir"))
        rc, stdout, stderr = self.run_to_end(1, self.path("o"), "--set", "time.steps=4", "--set",
                                             "output.checkpoint_every=2", "--set",
                                             f'output.checkpoint="{self.path("mydir")}"')
        self.assertEqual(rc, 2, stdout + stderr)
        self.assertIn("is a directory, not a file", stderr)
        self.assertTrue(os.path.isdir(self.path("mydir")))
        self.assertFalse(os.path.exists(self.path("mydir.prev")))


if __name__ == "__main__":
    unittest.main()

"""A table of malformed decks, arguments and files, each given to the real executable: every one
must exit with code 2, print one "gridsim: error:" line that names the problem, never crash,
hang or print a stack trace, and write nothing. Hostile HDF5 files (wrong rank, absurd or empty
dimensions, wrong type, a /grid that lies about the data) are made here with h5py from a real
checkpoint. Needs GRIDSIM in the environment."""
import os
import shutil
import subprocess
import tempfile
import unittest

import h5py
import numpy as np

GRIDSIM = os.environ["GRIDSIM"]
MPIEXEC = os.environ.get("MPIEXEC", "mpirun")
BASE = "[grid]\ncells = [16, 16]\n"
JACOBI = "[problem]\nname = \"jacobi\"\n[grid]\ncells = [8, 8]\n"

# (name, deck text, expected words): given to `gridsim check` and to `gridsim run`.
DECKS = [
    ("syntax", "[grid\n", "TOML syntax error"),
    ("no_cells", "[time]\nsteps = 1\n", "grid.cells: is required"),
    ("cells_count", "[grid]\ncells = [4, 4, 4, 4]\n", "expected 2 or 3 values"),
    ("cells_small", "[grid]\ncells = [2, 8]\n", "2 points on axis 0 is out of range"),
    ("cells_type", "[grid]\ncells = \"big\"\n", "grid.cells"),
    ("cells_int_overflow", "[grid]\ncells = [2147483648, 3]\n", "2147483648 points on axis 0"),
    ("cells_product", "[grid]\ncells = [2000000000, 2000000000, 2000000000]\n", "more than 2^62"),
    ("length_negative", BASE + "length = [1.0, -1.0]\n", "every length must be > 0"),
    ("length_count", BASE + "length = [1.0]\n", "grid.length: expected 2 values"),
    ("duplicate_key", "[grid]\ncells = [8, 8]\ncells = [9, 9]\n", "TOML syntax error"),
    ("problem_name", BASE + "[problem]\nname = \"wave\"\n", "problem.name"),
    ("precision", BASE + "[problem]\nprecision = \"half\"\n", "problem.precision"),
    ("alpha_zero", BASE + "[problem]\nalpha = 0.0\n", "problem.alpha"),
    ("boundary_kind", BASE + "[boundary]\nkind = \"open\"\n", "boundary.kind"),
    ("boundary_z_2d", BASE + "[boundary]\nz = \"periodic\"\n", "boundary.z: the grid is 2D"),
    ("face_values", BASE + "[boundary]\nface_values = [1.0]\n", "expected 4 values"),
    ("benchmark_heat", BASE + "[boundary]\nkind = \"benchmark\"\n", "2D jacobi benchmark"),
    ("benchmark_sine", JACOBI + "[boundary]\nkind = \"benchmark\"\n[initial]\nkind = \"sine\"\n",
     "\"sine\" is not defined"),
    ("benchmark_axis", JACOBI + "[boundary]\nkind = \"benchmark\"\nx = \"periodic\"\n",
     "cannot be set with boundary.kind"),
    ("initial_kind", BASE + "[initial]\nkind = \"gauss\"\n", "initial.kind"),
    ("modes_negative", BASE + "[initial]\nmodes = [1, -1]\n", "initial.modes"),
    ("center_outside", BASE + "[initial]\ncenter = [0.5, 1.5]\n", "fractions must be in [0, 1]"),
    ("radius_zero", BASE + "[initial]\nradius = 0.0\n", "initial.radius"),
    ("amplitude_float", BASE + "[problem]\nprecision = \"float\"\n[initial]\namplitude = 1e39\n",
     "cannot be held by a float field"),
    ("value_nan", BASE + "[initial]\nvalue = nan\n", "must be a finite number"),
    ("steps_zero", BASE + "[time]\nsteps = 0\n", "time.steps"),
    ("dt_unstable", BASE + "[time]\ndt = 0.01\n", "explicit heat step is unstable"),
    ("dt_negative", BASE + "[time]\ndt = -1.0\n", "time.dt: must be > 0"),
    ("cfl_range", BASE + "[time]\ncfl = 2.0\n", "time.cfl"),
    ("tolerance_negative", BASE + "[time]\ntolerance = -1.0\n", "time.tolerance"),
    ("norm_every_zero", BASE + "[time]\nnorm_every = 0\n", "time.norm_every"),
    ("lanczos_steps", BASE + "[problem]\nscheme = \"implicit\"\n[time]\n"
     "cg_preconditioner = \"chebyshev\"\ncg_lanczos_steps = 50\ncg_max_iterations = 50\n",
     "time.cg_lanczos_steps"),
    ("multigrid_coarsens", "[grid]\ncells = [3, 3]\n[problem]\nscheme = \"implicit\"\n[time]\n"
     "cg_preconditioner = \"multigrid\"\n", "time.cg_preconditioner: multigrid needs a coarser"),
    ("chebyshev_degree", BASE + "[problem]\nscheme = \"implicit\"\n[time]\n"
     "cg_chebyshev_degree = 0\n", "time.cg_chebyshev_degree"),
    ("steps_string", BASE + "[time]\nsteps = \"10\"\n", "expected an integer"),
    ("process_grid_count", BASE + "[parallel]\nprocess_grid = [1, 1, 1]\n", "expected 2 values"),
    ("process_grid_negative", BASE + "[parallel]\nprocess_grid = [-1, 1]\n", "process_grid"),
    ("backend", BASE + "[parallel]\nbackend = \"opencl\"\n", "parallel.backend"),
    ("transport", BASE + "[parallel]\ntransport = \"mpi\"\n", "parallel.transport"),
    ("block_count", BASE + "[parallel]\nblock = [32, 4, 1]\n", "expected 2 values"),
    ("block_threads", BASE + "[parallel]\nblock = [1024, 2]\n", "at most 1024 threads"),
    ("rows_naive", BASE + "[parallel]\nkernel = \"naive\"\nrows_per_thread = 3\n",
     "the naive kernel takes 1, 2, 4 or 8"),
    ("bind", BASE + "[parallel]\nbind = \"always\"\n", "parallel.bind"),
    ("graphs", BASE + "[parallel]\ngraphs = \"yes\"\n", "parallel.graphs"),
    ("graphs_cpu", BASE + "[parallel]\nbackend = \"cpu\"\ngraphs = \"on\"\n", "needs the CUDA backend"),
    ("faces_first_2d", BASE + "[parallel]\noverlap = \"faces_first\"\n", "needs a 3D grid"),
    ("faces_first_cpu", "[grid]\ncells = [8, 8, 8]\n[parallel]\nbackend = \"cpu\"\n"
     "overlap = \"faces_first\"\n", "parallel.overlap: \"faces_first\" needs the CUDA backend"),
    ("pipelined_2d", BASE + "[parallel]\noverlap = \"pipelined\"\n", "needs a 3D grid"),
    ("pipelined_cpu", "[grid]\ncells = [8, 8, 8]\n[parallel]\nbackend = \"cpu\"\n"
     "overlap = \"pipelined\"\n", "parallel.overlap: \"pipelined\" needs the CUDA backend"),
    ("phase_every", BASE + "[parallel]\nphase_every = -1\n", "parallel.phase_every"),
    ("ranks_used_zero", BASE + "[parallel]\nranks_used = 0\n", "parallel.ranks_used"),
    ("cuda_aware_cpu", BASE + "[parallel]\nbackend = \"cpu\"\ntransport = \"nccl\"\n",
     "parallel.transport"),
    ("ipc_cpu", BASE + "[parallel]\nbackend = \"cpu\"\ntransport = \"ipc\"\n",
     "parallel.transport: \"ipc\" moves device memory"),
    ("dir_empty", BASE + "[output]\ndir = \"\"\n", "output.dir: must not be empty"),
    ("prefix_slash", BASE + "[output]\nprefix = \"a/b\"\n", "output.prefix: must be a file name"),
    ("prefix_control", BASE + "[output]\nprefix = \"a\\u0007b\"\n", "output.prefix"),
    ("output_precision", BASE + "[output]\nprecision = \"half\"\n", "output.precision"),
    ("output_fields", BASE + "[output]\nfields = [\"v\"]\n", "unknown field 'v'"),
    ("max_abs_negative", BASE + "[output]\nmax_abs = -1.0\n", "output.max_abs"),
    ("hint_count_word", BASE + "[output.mpi_hints]\nstriping_factor = \"four\"\n",
     "output.mpi_hints.striping_factor: expected a positive integer"),
    ("hint_switch_word", BASE + "[output.mpi_hints]\nromio_cb_write = \"yes\"\n",
     "output.mpi_hints.romio_cb_write: expected \"enable\""),
    ("hint_float", BASE + "[output.mpi_hints]\ncb_nodes = 2.5\n",
     "output.mpi_hints.cb_nodes: expected a string or an integer, got a number"),
    ("hint_nested", BASE + "[output.mpi_hints.lustre]\nstripes = 4\n",
     "output.mpi_hints.lustre: expected a string or an integer, got a table"),
    ("hints_not_table", BASE + "[output]\nmpi_hints = 4\n",
     "output.mpi_hints: expected a table"),
    ("walltime", BASE + "[run]\nmax_walltime = \"tomorrow\"\n", "not a wall time"),
    ("unknown_key", "[grid]\ncellz = [8, 8]\n", "grid.cellz: unknown key"),
    ("unknown_table", BASE + "[extra]\n", "extra: unknown table"),
]


class BadInput(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="gridsim_bad_")
        # A real checkpoint (heat 2D 16 x 16, step 4) for the hostile copies below.
        cls.deck = cls.write("good.toml", BASE + "[time]\nsteps = 8\n")
        res = subprocess.run([GRIDSIM, "run", cls.deck, "--quiet", "--set", "time.steps=4",
                              "--set", "output.checkpoint_every=4", "--set",
                              f'output.dir="{cls.tmp}/made"'], capture_output=True, text=True,
                             check=False, timeout=120)
        assert res.returncode == 0, res.stderr
        cls.checkpoint = os.path.join(cls.tmp, "made", "checkpoint.h5")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    @classmethod
    def write(cls, name, text):
        path = os.path.join(cls.tmp, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def expect_refused(self, args, words, cwd=None, ranks=None):
        """Runs gridsim ARGS (on `ranks` MPI ranks, or as one process) in an empty directory:
        exit 2, nothing on stdout, one error line naming `words`, no crash, nothing written
        there."""
        work = tempfile.mkdtemp(dir=self.tmp) if cwd is None else cwd
        launch = [] if ranks is None else [MPIEXEC, "-np", str(ranks), "--oversubscribe"]
        res = subprocess.run([*launch, GRIDSIM, *args], capture_output=True, text=True, cwd=work,
                             timeout=300, check=False)
        where = f"gridsim {' '.join(args)}\nstdout: {res.stdout}\nstderr: {res.stderr}"
        self.assertEqual(res.returncode, 2, where)
        self.assertEqual(res.stdout, "", where)  # an exit-2 path prints nothing on stdout
        errors = [l for l in res.stderr.splitlines() if l.startswith("gridsim: error:")]
        self.assertEqual(len(errors), 1, where)
        self.assertIn(words, errors[0], where)
        for bad in ("Segmentation", "terminate called", "Aborted", "MPI_ABORT", "Traceback"):
            self.assertNotIn(bad, res.stdout + res.stderr, where)
        if cwd is None:
            self.assertEqual(os.listdir(work), [], where)
        return errors[0]

    def hostile(self, name, change):
        """A copy of the real checkpoint, changed by change(h5py.File)."""
        path = os.path.join(self.tmp, name + ".h5")
        shutil.copy(self.checkpoint, path)
        with h5py.File(path, "r+") as f:
            change(f)
        return path

    def test_decks(self):
        self.assertGreaterEqual(len(DECKS), 45)
        for name, text, words in DECKS:
            with self.subTest(deck=name):
                deck = self.write(f"{name}.toml", text)
                self.expect_refused(["check", deck], words)
                self.expect_refused(["run", deck, "--set", "output.write_final=true"], words)

    def test_arguments(self):
        deck = self.deck
        cases = [
            (["frobnicate"], "unknown command 'frobnicate'"),
            ([], "A subcommand is required"),
            (["run"], "deck is required"),
            (["run", os.path.join(self.tmp, "missing.toml")], "cannot read deck"),
            (["run", self.tmp], "is a directory, not a deck"),
            (["run", deck, "--set", "grid.cells"], "expected key=value"),
            (["run", deck, "--set", "grid.cells=[4,"], "cannot read '[4,' as a TOML value"),
            (["run", deck, "--set", "grid.cellz=[4,4]"], "grid.cellz: unknown key"),
            (["run", deck, "--frobnicate"], "--frobnicate"),
            (["check", deck, "--ranks", "0"], "--ranks"),
            (["check", deck, "--ranks", "500"], "--ranks 500"),
            (["run", deck, "--report", os.path.join(self.tmp, "no", "dir", "r.json")],
             "does not exist"),
            (["run", deck, "--report", self.tmp], "is a directory, not a file"),
            # A directory the file system refuses (even to root): found before the header.
            (["run", deck, "--set", 'output.dir="/proc/gridsim_probe/x"'], "/proc/gridsim_probe/x"),
            (["run", deck, "--restart", os.path.join(self.tmp, "missing.h5")], "no such file"),
            (["run", deck, "--set", "grid.cells=[100000,100000,100000]"], "do not fit"),
            (["compare", self.checkpoint], "b is required"),
            (["compare", self.checkpoint, os.path.join(self.tmp, "missing.h5")], "no such file"),
            (["compare", self.checkpoint, self.checkpoint, "--rtol", "-1"], "--rtol"),
            (["bench", "--size-mib", "0"], "--size-mib"),
        ]
        for args, words in cases:
            with self.subTest(args=args):
                self.expect_refused(args, words)

    def refused_names(self, work):
        """Names the file system refuses (longer than a file name may be), each only once the
        run would write it: found before the first step all the same."""
        long = "n" * 250
        return [
            (["run", self.deck, "--set", f'output.dir="{work}/o"', "--set",
              "output.snapshot_every=4", "--set", f'output.prefix="{long}"'],
             "output.prefix: cannot create"),
            (["run", self.deck, "--set", f'output.dir="{work}/o"', "--set",
              f'output.checkpoint="{work}/{long}.h5"'], "output.checkpoint: cannot create"),
            (["run", self.deck, "--set", f'output.dir="{work}/o"', "--report",
              os.path.join(work, long + "xxx.json")], "output.report: cannot create"),
        ]

    def test_names_the_file_system_refuses(self):
        for ranks in (None, 4):
            work = tempfile.mkdtemp(dir=self.tmp)
            for args, words in self.refused_names(work):
                with self.subTest(args=args[3:], ranks=ranks):
                    line = self.expect_refused(args, words, cwd=work, ranks=ranks)
                    self.assertIn("File name too long", line)
                    self.assertEqual(os.listdir(work), [])

    def test_collective_refusals_are_said_once(self):
        # The same refusals at 4 ranks: every rank meets them, rank 0 alone says so, in one
        # line, before the header (nothing on stdout), nothing written.
        deck = self.deck
        cases = [
            (["run", deck, "--set", 'output.dir="/proc/gridsim_probe/x"'], "/proc/gridsim_probe/x"),
            (["run", deck, "--report", os.path.join(self.tmp, "no", "dir", "r.json")], "does not exist"),
            (["run", deck, "--set", "time.steps=-3"], "--set time.steps=-3: time.steps"),
            (["run", deck, "--set", "grid.cells=[100000,100000,100000]"], "do not fit"),
        ]
        for args, words in cases:
            with self.subTest(args=args):
                self.expect_refused(args, words, ranks=4)

    def fail_mid_run(self, ranks, args, remove):
        """Starts a long run, removes `remove` once the first progress line is out (after the
        first snapshot), and returns (exit code, stderr) when the run has ended."""
        launch = [] if ranks == 1 else [MPIEXEC, "-np", str(ranks), "--oversubscribe"]
        proc = subprocess.Popen([*launch, GRIDSIM, "run", self.deck, "--set", "grid.cells=[256,256]",
                                 "--set", "time.steps=40000", "--set",
                                 "output.progress_every=400", *args],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for line in proc.stdout:
            if line.startswith("step "):
                shutil.rmtree(remove)
                break
        out, err = proc.communicate(timeout=300)
        self.assertFalse(os.path.exists(remove), f"no progress line: {out}{err}")
        return proc.returncode, err

    def assert_said_once(self, rc, stderr, words):
        self.assertEqual(rc, 1, stderr)
        errors = [l for l in stderr.splitlines() if "error:" in l]
        self.assertEqual(len(errors), 1, stderr)
        self.assertTrue(errors[0].startswith("gridsim: error: "), stderr)  # rank 0's, agreed
        self.assertIn(words, errors[0], stderr)
        for bad in ("MPI_ABORT", "Segmentation", "terminate called", "Traceback"):
            self.assertNotIn(bad, stderr)

    def test_failures_mid_run_are_said_once(self):
        # What could not be found before the first step (the file system changed under the
        # run): agreed by the ranks, one line from rank 0, exit 1, no MPI_Abort, at 1 and 4
        # ranks.
        for ranks in (1, 4):
            with self.subTest(what="output directory removed", ranks=ranks):
                work = tempfile.mkdtemp(dir=self.tmp)
                out = os.path.join(work, "out")
                rc, err = self.fail_mid_run(ranks, ["--set", f'output.dir="{out}"', "--set",
                                                    "output.snapshot_every=400"], out)
                self.assert_said_once(rc, err, out)
                self.assertFalse(os.path.exists(out))
            with self.subTest(what="report directory removed", ranks=ranks):
                work = tempfile.mkdtemp(dir=self.tmp)
                reports = os.path.join(work, "reports")
                os.makedirs(reports)
                rc, err = self.fail_mid_run(
                    ranks, ["--set", f'output.dir="{work}/out"', "--report",
                            os.path.join(reports, "r.json")], reports)
                self.assert_said_once(rc, err, "cannot write run report")

    def test_hostile_files_for_compare(self):
        text = self.write("text.h5", "not an HDF5 file at all\n")
        with open(self.checkpoint, "rb") as f:
            head = f.read(700)
        truncated = os.path.join(self.tmp, "truncated.h5")
        with open(truncated, "wb") as f:
            f.write(head)

        def replace_u(data=None, **kw):
            def change(f):
                del f["/fields/u"]
                if data is not None:
                    f["/fields"].create_dataset("u", data=data)
                else:
                    f["/fields"].create_dataset("u", **kw)
            return change

        cases = [
            (text, "not an HDF5 file"),
            (truncated, "not an HDF5 file"),
            (self.hostile("scalar", replace_u(np.float64(1.0))), "0-dimensional"),
            (self.hostile("four_d", replace_u(np.zeros((2, 2, 2, 2)))), "4-dimensional"),
            (self.hostile("zero_rows", replace_u(np.zeros((0, 16)))), "is empty"),
            (self.hostile("sparse", replace_u(shape=(100000, 100000, 100000), dtype="f8",
                                              chunks=(1, 64, 64))), "more than gridsim compare"),
            (self.hostile("strings", replace_u(np.array([b"a", b"b"]))), "not floating point"),
            (self.hostile("no_fields", lambda f: f.__delitem__("/fields")), "no /fields group"),
            (self.hostile("shape", replace_u(np.zeros((8, 8)))), "shape"),
        ]
        for path, words in cases:
            with self.subTest(file=os.path.basename(path)):
                line = self.expect_refused(["compare", path, self.checkpoint], words)
                # Every structural error names the file, and the object where there is one.
                self.assertIn(path, line)
                if path not in (text, truncated):
                    self.assertIn("/fields", line)

    def test_hostile_checkpoints_for_restart(self):
        def replace_u(**kw):
            def change(f):
                del f["/fields/u"]
                f["/fields"].create_dataset("u", **kw)
            return change

        def set_nan(f):
            f["/fields/u"][3, 4] = np.nan

        def bad_history(f):
            del f["/restart_residual_history"]
            f.create_dataset("/restart_residual_history", data=np.zeros((3, 3)))

        cases = [
            (self.hostile("lying_grid", replace_u(data=np.zeros((8, 8)))), "/fields/u holds"),
            (self.hostile("zero_row", replace_u(data=np.zeros((0, 16)))), "/fields/u holds"),
            (self.hostile("sparse_ckpt", replace_u(shape=(100000, 100000, 100000), dtype="f8",
                                                   chunks=(1, 64, 64))), "/fields/u holds"),
            (self.hostile("int_field", replace_u(data=np.zeros((16, 16), dtype=np.int64))),
             "floating-point"),
            (self.hostile("history", bad_history), "restart_residual_history"),
            (self.hostile("snapshot_kind",
                          lambda f: f.attrs.__setitem__("kind", np.bytes_(b"snapshot"))),
             "a snapshot, not a checkpoint"),
            (self.hostile("no_format", lambda f: f.attrs.__delitem__("format")),
             "not a gridsim file"),
            (self.hostile("grid_attr", lambda f: f["/grid"].attrs.__setitem__(
                "global_cells", np.array([32, 32]))), "differs from the deck's"),
            (self.hostile("nan", set_nan), "non-finite value(s)"),
            (self.hostile("late", lambda f: f.attrs.__setitem__("step", np.array([50]))),
             "past time.steps"),
            (self.write("text_ckpt.h5", "nothing\n"), "not an HDF5 file"),
        ]
        for path, words in cases:
            with self.subTest(file=os.path.basename(path)):
                self.expect_refused(["run", self.deck, "--set", 'output.dir="out"', "--set",
                                     "output.write_final=true", "--restart", path], words)


if __name__ == "__main__":
    unittest.main()

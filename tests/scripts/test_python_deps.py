"""The scripts under a python3 that is not Debian's (a venv, conda, a cluster's module python):
without numpy/h5py/matplotlib each script says so in one line (exit 2), and `scaling.py report`
still writes its tables, skipping only the plots; after `pip install -r scripts/requirements.txt`
in a fresh venv (from the package index; skipped where it cannot be reached) the plots come
back; `pip install ./scripts` into a fresh venv gives the gridsim-scaling, gridsim-plot and
gridsim-regress commands. The scripts are started as a user starts them: through their `#!/usr/bin/env python3`
line, with the venv first on PATH. Needs GRIDSIM (the executable) and MPIEXEC."""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = os.path.abspath(os.path.join(HERE, "..", "..", "scripts"))
INPUTS = os.path.abspath(os.path.join(HERE, "..", "..", "inputs"))
GRIDSIM = os.environ["GRIDSIM"]
LAUNCH = os.environ.get("MPIEXEC", "mpirun") + " -np {n} --oversubscribe"
MODULES = ("numpy", "h5py", "matplotlib")
PNGS = ("speedup.png", "efficiency.png", "phases.png")


def make_venv(path, with_pip):
    """A venv of this interpreter without access to the system's site packages."""
    cmd = [sys.executable, "-m", "venv", path] + ([] if with_pip else ["--without-pip"])
    subprocess.run(cmd, check=True, capture_output=True, text=True)
    return os.path.join(path, "bin")


def as_user(bindir, script, *args, cwd=None):
    """Runs scripts/SCRIPT through its shebang with the venv's python3 first on PATH."""
    env = {**os.environ, "PATH": bindir + os.pathsep + os.environ.get("PATH", ""), "GRIDSIM": GRIDSIM}
    env.pop("PYTHONPATH", None)
    return subprocess.run([os.path.join(SCRIPTS, script), *args], capture_output=True, text=True,
                          env=env, cwd=cwd, check=False)


class WithoutModules(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="gridsim_pydeps_")
        cls.bin = make_venv(os.path.join(cls.tmp, "bare"), with_pip=False)
        probe = subprocess.run([os.path.join(cls.bin, "python3"), "-c", "import numpy"], capture_output=True)
        assert probe.returncode != 0, "the bare venv can import numpy: the test would prove nothing"
        # A tiny study, run by the bare interpreter itself (`run` needs no third-party module);
        # its runs keep their final snapshots for plot_snapshot.py.
        cls.study = os.path.join(cls.tmp, "study")
        run = as_user(cls.bin, "scaling.py", "run", "strong", "--deck", os.path.join(INPUTS, "scaling_cpu.toml"),
                      "--ranks", "1", "2", "--launcher", LAUNCH, "--out", cls.study, "--set",
                      "grid.cells=[16,12,10]", "--set", "time.steps=4", "--set", "output.write_final=true",
                      cwd=cls.tmp)
        assert run.returncode == 0, run.stdout + run.stderr
        cls.snapshot = os.path.join(cls.study, "runs", "strong_n1_r0", "snapshot_final.h5")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def pip_install(self, bindir, *what):
        """pip install WHAT into the venv of `bindir`; skips the test where the package index
        cannot be reached."""
        pip = subprocess.run([os.path.join(bindir, "python3"), "-m", "pip", "install", "--quiet",
                              "--disable-pip-version-check", "--timeout", "30", *what],
                             capture_output=True, text=True, check=False, timeout=900)
        if pip.returncode != 0:
            text = pip.stdout + pip.stderr
            network = any(s in text for s in ("NewConnectionError", "Network is unreachable", "Temporary failure",
                                              "No matching distribution", "ConnectTimeout", "ProxyError"))
            if network:
                self.skipTest("the package index cannot be reached: " + text.strip().splitlines()[-1])
            self.fail(f"pip install {' '.join(what)} failed:\n" + text)

    def assert_one_line_naming(self, proc, script, modules):
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertEqual(proc.stdout, "")
        lines = proc.stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, proc.stderr)
        line = lines[0]
        self.assertTrue(line.startswith(f"{script}: error: Python module"), line)
        for m in modules:
            self.assertIn(m, line)
            self.assertIn(f"python3-{m}", line)  # the Debian way ...
        self.assertIn("-m pip install -r " + os.path.join(SCRIPTS, "requirements.txt"), line)  # ... and pip's
        self.assertNotIn("Traceback", proc.stderr)

    def test_plot_snapshot_names_what_is_missing(self):
        proc = as_user(self.bin, "plot_snapshot.py", self.snapshot, "--out", os.path.join(self.tmp, "x.png"))
        self.assert_one_line_naming(proc, "plot_snapshot.py", MODULES)
        self.assertFalse(os.path.exists(os.path.join(self.tmp, "x.png")))

    def test_make_references_names_what_is_missing(self):
        out = os.path.join(self.tmp, "refs")
        proc = as_user(self.bin, "make_references.py", out)
        self.assert_one_line_naming(proc, "make_references.py", ("h5py", "numpy"))
        self.assertFalse(os.path.exists(out))

    def test_scaling_report_writes_the_tables_and_skips_the_plots(self):
        study = os.path.join(self.tmp, "report_only")
        shutil.copytree(self.study, study)
        proc = as_user(self.bin, "scaling.py", "report", study)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertNotIn("Traceback", proc.stderr)
        skipped = [line for line in proc.stdout.splitlines() if "plots skipped" in line]
        self.assertEqual(len(skipped), 1, proc.stdout)
        self.assertIn("matplotlib", skipped[0])
        for name in ("report.md", "scaling.csv"):
            self.assertGreater(os.path.getsize(os.path.join(study, name)), 0)
        for name in PNGS:
            self.assertFalse(os.path.exists(os.path.join(study, name)), name)
        with open(os.path.join(study, "report.md")) as f:
            text = f.read()
        self.assertIn("**Plots skipped.**", text)
        self.assertNotIn("](speedup.png)", text)

    def test_with_the_requirements_installed_the_pictures_come_back(self):
        venv = os.path.join(self.tmp, "full")
        try:
            bindir = make_venv(venv, with_pip=True)
        except subprocess.CalledProcessError as err:
            self.fail(f"python3 -m venv with pip failed (Debian: apt-get install python3-venv): {err.stderr}")
        self.pip_install(bindir, "-r", os.path.join(SCRIPTS, "requirements.txt"))
        study = os.path.join(self.tmp, "with_plots")
        shutil.copytree(self.study, study)
        proc = as_user(bindir, "scaling.py", "report", study)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertNotIn("plots skipped", proc.stdout)
        for name in PNGS:
            self.assertGreater(os.path.getsize(os.path.join(study, name)), 1000, name)
        png = os.path.join(self.tmp, "snapshot.png")
        proc = as_user(bindir, "plot_snapshot.py", self.snapshot, "--out", png)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        with open(png, "rb") as f:
            self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")

    def test_pip_install_of_the_tools_gives_commands(self):
        # What a user does: `pip install ./scripts` into a fresh venv (from a copy, so that the
        # build leaves nothing in the source tree); the commands run without the source tree.
        venv = os.path.join(self.tmp, "tools")
        bindir = make_venv(venv, with_pip=True)
        src = os.path.join(self.tmp, "tools_src")
        os.makedirs(src)
        for name in os.listdir(SCRIPTS):
            if name.endswith(".py") or name in ("pyproject.toml", "requirements.txt"):
                shutil.copy(os.path.join(SCRIPTS, name), src)
        self.pip_install(bindir, src)
        env = {**os.environ, "PATH": bindir + os.pathsep + os.environ.get("PATH", ""),
               "GRIDSIM": GRIDSIM}
        env.pop("PYTHONPATH", None)

        def command(*args):
            return subprocess.run(list(args), capture_output=True, text=True, env=env,
                                  cwd=self.tmp, check=False)
        for name in ("gridsim-scaling", "gridsim-plot", "gridsim-regress"):
            self.assertTrue(os.path.exists(os.path.join(bindir, name)), name)
        study = os.path.join(self.tmp, "via_package")
        shutil.copytree(self.study, study)
        proc = command("gridsim-scaling", "report", study)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertNotIn("plots skipped", proc.stdout)  # matplotlib came as a dependency
        for name in PNGS:
            self.assertGreater(os.path.getsize(os.path.join(study, name)), 1000, name)
        png = os.path.join(self.tmp, "via_package.png")
        proc = command("gridsim-plot", self.snapshot, "--out", png)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        with open(png, "rb") as f:
            self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")
        proc = command("gridsim-regress", "--help")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("usage: gridsim-regress", proc.stdout)


if __name__ == "__main__":
    unittest.main()

"""ReFrame for the tests of scripts/reframe/: a virtual environment with `reframe-hpc` from
the package index (made once per test process), and one reframe run of gridsim's checks at a
CI size."""
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
CHECKS = os.path.join(ROOT, "scripts", "reframe", "gridsim_checks.py")
SETTINGS = os.path.join(ROOT, "scripts", "reframe", "settings.py")
_VENV = None


class Unavailable(Exception):
    """ReFrame could not be installed here (no package index, no venv module)."""


def reframe():
    """The reframe executable of a fresh venv, installed once."""
    global _VENV
    if _VENV is None:
        venv = tempfile.mkdtemp(prefix="gridsim_reframe_venv_")
        made = subprocess.run([sys.executable, "-m", "venv", venv], capture_output=True, text=True, check=False)
        if made.returncode != 0:
            raise Unavailable(f"python3 -m venv failed (Debian: apt-get install python3-venv): {made.stderr.strip()}")
        pip = subprocess.run([os.path.join(venv, "bin", "python3"), "-m", "pip", "install", "--quiet",
                              "--disable-pip-version-check", "--timeout", "30", "reframe-hpc"],
                             capture_output=True, text=True, check=False, timeout=600)
        if pip.returncode != 0:
            raise Unavailable("pip install reframe-hpc failed: " + (pip.stderr.strip().splitlines() or ["?"])[-1])
        _VENV = venv
    return os.path.join(_VENV, "bin", "reframe")


def run_checks(system, prefix, env, *options):
    """reframe over gridsim's checks on `system` (local or slurm) at a CI size, stage files kept."""
    cmd = [reframe(), "-C", SETTINGS, "--system", system, "-c", CHECKS, "-r", "--prefix", prefix,
           "--keep-stage-files", "-S", "GridsimBenchmark.points_per_axis=24", "-S", "GridsimBenchmark.steps=6",
           *options]
    return subprocess.run(cmd, cwd=prefix, env=env, capture_output=True, text=True, timeout=900, check=False)


def performance_lines(output):
    """{(deck, variable): value} from reframe's 'P: name: value unit' lines under each check."""
    values, deck = {}, None
    for line in output.splitlines():
        m = re.search(r"GridsimBenchmark %deck=(\w+)", line)
        if m and "OK" in line:
            deck = m.group(1)
        m = re.match(r"\s*P: (\w+): (\S+)", line)
        if m and deck:
            values[(deck, m.group(1))] = float(m.group(2))
    return values

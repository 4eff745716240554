"""What the regression tests that run `gridsim run` on a deck of their own share: the binary and
the MPI launcher from the environment (GRIDSIM, MPIEXEC), the launcher's prefix for a rank
count, a test case with a fresh temporary directory per test, and one that writes its DECK there."""
import os
import shutil
import tempfile
import unittest

GRIDSIM = os.environ["GRIDSIM"]
MPIEXEC = os.environ.get("MPIEXEC", "mpirun")


def launch(ranks):
    """The command prefix that starts `ranks` ranks (none for one: a singleton run)."""
    return [MPIEXEC, "-np", str(ranks), "--oversubscribe"] if ranks > 1 else []


class TempDirCase(unittest.TestCase):
    """self.tmp: a directory removed after the test."""
    PREFIX = "gridsim_"

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix=self.PREFIX)

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)


class DeckCase(TempDirCase):
    """self.tmp as TempDirCase's; self.deck: DECK written there."""
    DECK = ""

    def setUp(self):
        super().setUp()
        self.deck = os.path.join(self.tmp, "deck.toml")
        with open(self.deck, "w") as f:
            f.write(self.DECK)

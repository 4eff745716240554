"""The key tables drive what users see: docs/deck-keys.md is `gridsim problems --markdown`
verbatim, every key has a type, a default and a meaning of at most 30 words, every common key
it lists is accepted by `gridsim check` and its literal defaults are the resolved ones; every
key a problem lists is accepted by
`gridsim check` for that problem and written back in its resolved configuration; a key of
another problem is checked, then named as ignored; choice lists come from the table. Needs
GRIDSIM in the environment."""
import json
import os
import re
import subprocess
import tempfile
import unittest

GRIDSIM = os.environ["GRIDSIM"]
DECK_KEYS = os.path.join(os.path.dirname(__file__), "..", "..", "docs", "deck-keys.md")


def rows(markdown):
    """(key, type, default, meaning) of every table row naming a key."""
    out = []
    for line in markdown.splitlines():
        if line.startswith("| `"):
            cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
            out.append((cells[0].strip("`"), cells[1], cells[2], cells[3]))
    return out


def gridsim(*args):
    return subprocess.run([GRIDSIM, *args], capture_output=True, text=True, timeout=60, check=False)


class ProblemTable(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="gridsim_problems_")

    def deck(self, text):
        path = os.path.join(self.tmp, "deck.toml")
        with open(path, "w") as f:
            f.write(text)
        return path

    def test_deck_keys_doc_is_the_generated_table(self):
        with open(DECK_KEYS) as f:
            doc = f.read()
        generated = gridsim("problems", "--markdown")
        self.assertEqual(generated.returncode, 0, generated.stderr)
        self.assertEqual(doc, generated.stdout,
                         "docs/deck-keys.md is stale: gridsim problems --markdown > docs/deck-keys.md")

    def test_every_key_is_short_and_typed(self):
        table = rows(gridsim("problems", "--markdown").stdout)
        self.assertGreater(len(table), 40)
        for key, kind, default, meaning in table:
            self.assertTrue(kind and default and meaning, key)
            self.assertLessEqual(len(meaning.split()), 30, key)

    def test_common_keys_are_accepted_with_their_documented_defaults(self):
        res = gridsim("check", self.deck("[grid]\ncells = [8, 8, 8]\n"), "--json")
        self.assertEqual(res.returncode, 0, res.stderr)
        resolved = json.loads(res.stdout)
        common = gridsim("problems", "--markdown").stdout.split("\n## ")[1]
        literal = 0
        for key, _, default, _ in rows(common):
            table, leaf = key.split(".")
            m = re.fullmatch(r"`(.*)`", default)  # a literal, not another key's name
            value = m.group(1) if m and not re.fullmatch(r"[a-z_]+\.[a-z_]+", m.group(1)) else None
            if leaf in resolved.get(table, {}):
                if value is not None:
                    self.assertEqual(resolved[table][leaf], json.loads(value), key)
                    literal += 1
            else:  # resolved into other keys (boundary.value into face_values): accepted as given
                if value is None:  # only a key with no default may be absent
                    self.assertEqual(default, "none", f"{key}: not written back")
                    continue
                res = gridsim("check", self.deck("[grid]\ncells = [8, 8, 8]\n"), "--set",
                              f"{key}={value}")
                self.assertEqual(res.returncode, 0, f"{key}: {res.stderr}")
        self.assertGreater(literal, 20)

    def test_every_listed_key_is_owned_and_written_back(self):
        listing = gridsim("problems").stdout
        problems = re.findall(r"^(\w+)(?: \(default\))?: ", listing, re.M)
        self.assertEqual(problems[0], "heat")  # the default comes first
        self.assertIn("jacobi", problems)
        sections = re.split(r"^\w+(?: \(default\))?: .*$", listing, flags=re.M)[1:]
        for name, section in zip(problems, sections):
            keys = re.findall(r"^  ([a-z]+\.[a-z_]+) ", section, re.M)
            self.assertTrue(keys, name)
            res = gridsim("check", self.deck(f'[problem]\nname = "{name}"\n[grid]\ncells = [8, 8]\n'), "--json")
            self.assertEqual(res.returncode, 0, res.stderr)
            doc = json.loads(res.stdout)
            for key in keys:
                table, leaf = key.split(".")
                self.assertIn(leaf, doc[table], f"{name}: {key} not written back")

    def test_another_problems_key_is_checked_then_ignored(self):
        deck = self.deck('[problem]\nname = "jacobi"\n[grid]\ncells = [8, 8]\n[time]\ncg_tolerance = 1e-6\n')
        res = gridsim("check", deck)
        self.assertEqual(res.returncode, 0, res.stderr)
        self.assertIn("# note: problem jacobi ignores time.cg_tolerance (a key of problem heat)", res.stdout)
        self.assertNotIn("cg_tolerance", res.stdout.split("\n", 2)[-1])  # not in the resolved deck
        bad = self.deck('[problem]\nname = "jacobi"\n[grid]\ncells = [8, 8]\n[time]\ncg_tolerance = 5.0\n')
        res = gridsim("check", bad)
        self.assertEqual(res.returncode, 2)
        self.assertIn("time.cg_tolerance: must be in (0, 1]", res.stderr)

    def test_choices_come_from_the_table(self):
        res = gridsim("check", self.deck('[problem]\nname = "wave"\n[grid]\ncells = [8, 8]\n'))
        self.assertEqual(res.returncode, 2)
        self.assertIn("problem.name: 'wave' is not one of: heat, jacobi", res.stderr)
        res = gridsim("check", self.deck('[problem]\nscheme = "crank"\n[grid]\ncells = [8, 8]\n'))
        self.assertEqual(res.returncode, 2)
        self.assertIn("problem.scheme: 'crank' is not one of: explicit, implicit", res.stderr)

    def test_implicit_keys_and_the_explicit_limit(self):
        # cfl 50 is refused by the explicit scheme and accepted by the implicit one.
        deck = self.deck('[grid]\ncells = [8, 8]\n[time]\ncfl = 50.0\n')
        res = gridsim("check", deck)
        self.assertEqual(res.returncode, 2)
        self.assertIn("time.cfl: must be in (0, 1]", res.stderr)
        res = gridsim("check", deck, "--set", 'problem.scheme="implicit"', "--json")
        self.assertEqual(res.returncode, 0, res.stderr)
        doc = json.loads(res.stdout)
        h = 1.0 / 7
        self.assertAlmostEqual(doc["time"]["dt"], 50.0 / (2.0 * (1 / (h * h) + 1 / (h * h))), places=12)


if __name__ == "__main__":
    unittest.main()

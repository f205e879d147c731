#!/usr/bin/env python3
"""bench/readme_table.py: the README's results table is the one the curated GPU-suite runs in
bench/results/ give, --write puts it back where it differs, and a missing figure or missing
markers are errors."""
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "bench" / "readme_table.py"
README = ROOT / "README.md"
RESULTS = ROOT / "bench" / "results"


def run(*arguments):
    result = subprocess.run([sys.executable, str(SCRIPT), *map(str, arguments)],
                            capture_output=True, text=True)
    return result.returncode, result.stdout, result.stderr


class ReadmeTable(unittest.TestCase):
    def setUp(self):
        self.directory = tempfile.TemporaryDirectory()
        self.root = Path(self.directory.name)

    def tearDown(self):
        self.directory.cleanup()

    def test_the_readme_holds_the_generated_table(self):
        code, _, error = run("--check", README)
        self.assertEqual(code, 0, error)

    def test_a_changed_figure_fails_the_check_and_write_restores_it(self):
        readme = self.root / "README.md"
        original = README.read_text()
        code, table, _ = run()
        self.assertEqual(code, 0)
        first_row = table.splitlines()[2]
        self.assertIn(first_row, original)
        readme.write_text(original.replace(first_row, first_row.replace("x |", "9x |", 1), 1))
        code, _, error = run("--check", readme)
        self.assertEqual(code, 1)
        self.assertIn("--write", error)
        self.assertEqual(run("--write", readme)[0], 0)
        self.assertEqual(readme.read_text(), original)

    def test_a_readme_without_markers_is_an_error(self):
        readme = self.root / "README.md"
        readme.write_text("# no table here\n")
        code, _, error = run("--check", readme)
        self.assertEqual(code, 2)
        self.assertIn("results-table:begin", error)

    def test_a_figure_missing_from_the_runs_is_an_error(self):
        for gpu in ("h100", "h200"):
            shutil.copytree(RESULTS / gpu, self.root / gpu)
        summary = self.root / "h200" / "summary.txt"
        summary.write_text("".join(line for line in summary.read_text().splitlines(True)
                                   if not line.startswith("quant peers")))
        code, _, error = run("--results", self.root)
        self.assertEqual(code, 2)
        self.assertIn("summary.txt", error)


if __name__ == "__main__":
    unittest.main()

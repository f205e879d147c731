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

    def test_steps_a_run_predates_say_so_and_their_lines_give_the_figures(self):
        for gpu in ("h100", "h200"):
            shutil.copytree(RESULTS / gpu, self.root / gpu)
        for gpu in ("h100", "h200"):  # no MoE lines in either
            summary = self.root / gpu / "summary.txt"
            summary.write_text("".join(line for line in summary.read_text().splitlines(True)
                                       if "moe peers" not in line and "qwen3-30b" not in line))
        code, table, _ = run("--results", self.root)
        self.assertEqual(code, 0)
        self.assertEqual(table.count("not in this run"), 4)
        with (self.root / "h100" / "summary.txt").open("a") as summary:
            summary.write(
                "moe peers verdict: xgemv bf16 over transformers grouped_mm on qwen3-30b-a3b "
                "experts at T=1: 2.61x (target 2.5x)\n"
                "moe peers verdict: xgemv bf16 over grouped_mm, every case: 1.40x geo-mean, "
                "worst 0.95x: deepseek-v3 T=64 uniform; never slower: NO (40/41)\n"
                "demo verdict: qwen3-30b-a3b batch 1, per token over torch bf16: graph bf16 "
                "1.41x, int4-g128 1.69x; eager bf16 1.43x\n")
        code, table, _ = run("--results", self.root)
        self.assertEqual(code, 0)
        self.assertIn("| 2.61x; 1.40x (worst 0.95x) | not in this run |", table)
        self.assertIn("| 1.41x / 1.69x | not in this run |", table)
        # A step's line without its figure is still an error.
        with (self.root / "h200" / "summary.txt").open("a") as summary:
            summary.write("moe peers verdict: nothing measured\n")
        self.assertEqual(run("--results", self.root)[0], 2)


if __name__ == "__main__":
    unittest.main()

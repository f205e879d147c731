#!/usr/bin/env python3
"""bench/compare_runs.py on runs written here: medians or the fastest over several runs a side,
the records it compares, the cases the new build did not time, and its exit status."""
import json
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "compare_runs.py"


def record(case, us, lib="xgemv", nrhs=1, pct_bound=90.0):
    return {"suite": "llm", "dtype": "bf16", "case": case, "nrhs": nrhs, "lda": 4096, "incx": 1,
            "incy": 1, "lib": lib, "us": us, "pct_bound": pct_bound}


class CompareRuns(unittest.TestCase):
    def setUp(self):
        self.directory = tempfile.TemporaryDirectory()
        self.root = Path(self.directory.name)
        self.count = 0

    def tearDown(self):
        self.directory.cleanup()

    def run_dir(self, records):
        """A results directory holding `records`."""
        self.count += 1
        path = self.root / f"run{self.count}"
        path.mkdir()
        (path / "results.json").write_text(json.dumps({"records": records}))
        return str(path)

    def compare(self, base, new, *arguments):
        result = subprocess.run([sys.executable, str(SCRIPT), ",".join(base), ",".join(new),
                                 *arguments], capture_output=True, text=True)
        return result.returncode, result.stdout

    def test_each_side_counts_by_the_median_of_its_runs(self):
        base = [self.run_dir([record("a", t)]) for t in (10.0, 30.0, 11.0)]  # median 11
        new = [self.run_dir([record("a", t)]) for t in (12.0, 11.0, 99.0)]   # median 12
        status, output = self.compare(base, new, "--cases", "--slower", "1.2")
        self.assertIn("| llm a | xgemv | 11.00 | 12.00 | 1.091 | 90.0 -> 90.0 |", output)
        self.assertIn("geo-mean new/base 1.0909 over 1 cases (3 and 3 run(s), medians)", output)
        self.assertEqual(status, 1)  # 9% slower on the geometric mean

    def test_over_fastest_takes_each_sides_least_time_and_highest_bound(self):
        # one disturbed run of the new build (its ceiling slowed too): the median of two is the
        # mean and calls it 50% slower; the fastest runs agree
        base = [self.run_dir([record("a", 10.0, pct_bound=90.0)]),
                self.run_dir([record("a", 10.2, pct_bound=88.0)])]
        new = [self.run_dir([record("a", 10.1, pct_bound=89.0)]),
               self.run_dir([record("a", 20.0, pct_bound=91.0)])]
        status, output = self.compare(base, new, "--cases")
        self.assertIn("| llm a | xgemv | 10.10 | 15.05 | 1.490 | 89.0 -> 90.0 |", output)
        self.assertEqual(status, 1)
        status, output = self.compare(base, new, "--cases", "--over", "fastest")
        self.assertIn("| llm a | xgemv | 10.00 | 10.10 | 1.010 | 90.0 -> 91.0 |", output)
        self.assertIn("geo-mean new/base 1.0100 over 1 cases (2 and 2 run(s), fastest)", output)
        self.assertEqual(status, 0)

    def test_faster_or_equal_passes_and_only_the_named_libraries_count(self):
        base = [self.run_dir([record("a", 10.0), record("a", 1.0, lib="cublas")])]
        new = [self.run_dir([record("a", 9.0), record("a", 5.0, lib="cublas")])]
        status, output = self.compare(base, new)
        self.assertIn("geo-mean new/base 0.9000 over 1 cases", output)
        self.assertEqual(status, 0)
        status, output = self.compare(base, new, "--libs", "cublas")
        self.assertIn("1 case(s) more than 1.05x slower", output)
        self.assertEqual(status, 1)

    def test_each_nrhs_is_a_case_of_its_own(self):
        base = [self.run_dir([record("a", 10.0), record("a", 20.0, nrhs=8)])]
        new = [self.run_dir([record("a", 10.0), record("a", 20.0, nrhs=8)])]
        status, output = self.compare(base, new)
        self.assertIn("over 2 cases", output)
        self.assertEqual(status, 0)

    def test_a_case_the_new_build_did_not_time_fails_the_comparison(self):
        base = [self.run_dir([record("a", 10.0), record("b", 10.0)])]
        new = [self.run_dir([record("a", 10.0), record("b", None)])]  # b failed its check
        status, output = self.compare(base, new)
        self.assertIn("not timed in the new runs (failed its check or did not run): llm b", output)
        self.assertIn("1 not timed in the new runs", output)
        self.assertEqual(status, 1)

    def test_an_unreadable_run_is_exit_status_2(self):
        status, output = self.compare([str(self.root / "missing")], [self.run_dir([])])
        self.assertIn("cannot read a run", output)
        self.assertEqual(status, 2)


if __name__ == "__main__":
    unittest.main()

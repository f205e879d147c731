#!/usr/bin/env python3
"""What a ctest run skipped and why, then its counts, both read from ctest's own output:

    python3 tests/summary/ctest_summary.py CONSOLE_LOG LAST_TEST_LOG

CONSOLE_LOG holds what ctest printed (tests/run.sh keeps it): its count line ("N% tests passed,
F tests failed out of T") and the tests that did not run. LAST_TEST_LOG is the run's
Testing/Temporary/LastTest.log: every test's output, and the skip regular expression that
matched. The reason of a test skipped by its output is the line that matched; of one skipped by
its exit code (77), its last line of output, where every skipping program says why.

Prints one line per skipped test, then "tests: P passed, F failed, S skipped, T total" (skipped
tests are not counted as passed; disabled ones, not in ctest's total, are named after it)."""
import re
import sys

# "80% tests passed, 1 tests failed out of 5"; newer CTest: "100% tests passed out of 5".
COUNTS = re.compile(r"^\d+% tests passed(?:, (\d+) tests? failed)? out of (\d+)$", re.M)
NOT_RUN = re.compile(r"^\s+\d+ - (\S+) \((Skipped|Disabled)\)$", re.M)
# One test's block of LastTest.log: its name, its output, and what follows up to the next block.
BLOCK = re.compile(r"^\d+/\d+ Test: (\S+)\n.*?^Output:\n-+\n(.*?)^<end of output>\n"
                   r"(.*?)(?=^\d+/\d+ Testing: |\Z)", re.M | re.S)
SKIP_REGEX = re.compile(r"^Skip regular expression found in output\. Regex=\[(.*)\]$", re.M)


def skip_reason(output, after):
    """The first line of `output` that the skip regular expression named in `after` matches;
    without one, the last line."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    matched = SKIP_REGEX.search(after)
    if matched:
        try:
            pattern = re.compile(matched.group(1))
        except re.error:  # CMake's syntax, which Python's mostly shares: else the last line
            pattern = None
        hits = [line for line in lines if pattern and pattern.search(line)]
        if hits:
            return hits[0]
    return lines[-1] if lines else "(no output)"


def main(argv):
    if len(argv) != 2:
        print(__doc__)
        return 2
    with open(argv[0], errors="replace") as console_file:
        console = console_file.read()
    with open(argv[1], errors="replace") as log_file:
        blocks = {name: (output, after) for name, output, after in BLOCK.findall(log_file.read())}

    not_run = NOT_RUN.findall(console)
    skipped = [name for name, why in not_run if why == "Skipped"]
    disabled = [name for name, why in not_run if why == "Disabled"]
    if skipped:
        print("Skipped, with the reason each gave:")
        width = max(len(name) for name in skipped)
        for name in skipped:
            print(f"  {name:<{width}}  {skip_reason(*blocks.get(name, ('', '')))}")

    counts = COUNTS.search(console)
    failed, total = (int(counts.group(1) or 0), int(counts.group(2))) if counts else (0, 0)
    line = (f"tests: {total - failed - len(skipped)} passed, {failed} failed, "
            f"{len(skipped)} skipped, {total} total")
    if disabled:
        line += f" ({len(disabled)} disabled: {', '.join(disabled)})"
    print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

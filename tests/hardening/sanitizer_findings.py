#!/usr/bin/env python3
"""Counts the findings in compute-sanitizer logs and says whose code each is in.

usage: sanitizer_findings.py LOG...   prints, per log: "<xgemv's> <third party's>"

A report in a kernel is xgemv's when the kernel's name contains "xgemv" (the library's kernels
and the tests' helpers). A host-side report (a CUDA API error, a leaked allocation) belongs to the
code of its first host frame past the CUDA driver and runtime: cuBLAS, NCCL, PyTorch, Python and the
like are third party, anything else (xgemv's libraries, the test programs) is xgemv's. Reports
the tool counted but did not print (past --print-limit), or could not be read, count as xgemv's.
"""
import re
import sys

REPORT_PREFIX = "========= "
NOT_REPORTS = ("COMPUTE-SANITIZER", "ERROR SUMMARY", "LEAK SUMMARY", "RACECHECK SUMMARY",
               "Target application returned an error", "Saved host backtrace")
KERNEL = re.compile(r"\bat (.+?)\+0x[0-9a-f]+")
HOST_FRAME = re.compile(r"Host Frame:.* in (\S+)\s*$")
CUDA_RUNTIME = re.compile(r"^(libcuda|libcudart)\.so")
THIRD_PARTY = re.compile(r"libcublas|libnccl|libc10|libtorch|libnv|python|triton")
ERROR_SUMMARY = re.compile(r"ERROR SUMMARY: (\d+) errors?\s*$")


def reports(lines):
    """The log's reports, each a list of its lines (the leading '========= ' removed)."""
    report = None
    for line in lines:
        if not line.startswith(REPORT_PREFIX.rstrip()):
            continue
        body = line[len(REPORT_PREFIX):].rstrip("\n") if line.startswith(REPORT_PREFIX) else ""
        if not body.strip():
            if report:
                yield report
            report = None
        elif body.startswith(" "):
            if report is not None:
                report.append(body)
        elif not body.startswith(NOT_REPORTS):
            if report:
                yield report
            report = [body]
    if report:
        yield report


def is_third_party(report):
    for line in report:
        if "Host Frame:" in line:
            continue
        kernel = KERNEL.search(line)
        if kernel:
            return "xgemv" not in kernel.group(1)
    for line in report:
        frame = HOST_FRAME.search(line)
        if frame and not CUDA_RUNTIME.match(frame.group(1)):
            return bool(THIRD_PARTY.search(frame.group(1)))
    return False


def count(path):
    with open(path, errors="replace") as log:
        lines = log.readlines()
    third_party = ours = 0
    for report in reports(lines):
        if is_third_party(report):
            third_party += 1
        else:
            ours += 1
    counted = sum(int(m.group(1)) for m in map(ERROR_SUMMARY.search, lines) if m)
    return max(ours, counted - third_party), third_party


def main(paths):
    if not paths:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    for path in paths:
        print(*count(path))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

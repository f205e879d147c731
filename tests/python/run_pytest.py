#!/usr/bin/env python3
"""Runs the Python package's tests as CTest sees them:

    python3 tests/python/run_pytest.py cpu [PYTEST ARGS]   # tests without the gpu marker
    python3 tests/python/run_pytest.py gpu [PYTEST ARGS]   # the gpu tests; exit 77 without a GPU

Exit status: pytest's (0 when every selected test passed), 77 for `gpu` on a machine without a
CUDA device (CTest's skip code)."""
import pathlib
import sys

import pytest
import torch

SKIP_EXIT_CODE = 77


def main(argv):
    if not argv or argv[0] not in ("cpu", "gpu"):
        print(__doc__)
        return 2
    kind, extra = argv[0], argv[1:]
    if kind == "gpu" and not torch.cuda.is_available():
        print("SKIPPED: no CUDA device; the Python package's GPU tests did not run")
        return SKIP_EXIT_CODE
    here = pathlib.Path(__file__).resolve().parent
    marker = "gpu" if kind == "gpu" else "not gpu"
    return pytest.main([str(here), "-m", marker, "-q", "-p", "no:cacheprovider", *extra])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

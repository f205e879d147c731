"""pytest set-up: the package from the source tree (interface/python/src) unless it is installed,
and the `gpu` marker (tests that need a CUDA device). Without a device, plain `pytest tests/python`
skips the gpu tests, saying why; tests/python/run_pytest.py runs them apart from the CPU tests
(CTest's python.gpu, reported skipped without a device)."""
import pathlib
import sys

import pytest

SOURCE = pathlib.Path(__file__).resolve().parents[2] / "interface" / "python" / "src"


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs a CUDA device")
    try:
        import xgemv  # noqa: F401  (installed: test that copy)
    except ImportError:
        sys.path.insert(0, str(SOURCE))


def pytest_collection_modifyitems(config, items):
    import torch
    if torch.cuda.is_available():
        return
    skip = pytest.mark.skip(reason="needs a CUDA device; none is visible to torch")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)

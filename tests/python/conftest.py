"""pytest set-up: the package from the source tree (interface/python/src) unless it is installed,
and the `gpu` marker (tests that need a CUDA device; tests/python/run_pytest.py runs them apart
from the CPU tests, reporting skipped without a device)."""
import pathlib
import sys

SOURCE = pathlib.Path(__file__).resolve().parents[2] / "interface" / "python" / "src"


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs a CUDA device")
    try:
        import xgemv  # noqa: F401  (installed: test that copy)
    except ImportError:
        sys.path.insert(0, str(SOURCE))

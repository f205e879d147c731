#!/usr/bin/env bash
# pip install ./interface/python as a user would, into a fresh virtual environment that sees
# PYTHON's packages (torch, scikit-build-core: nothing is downloaded), then, from outside the
# repository: import, the version, the library inside the installed package, and on a machine
# with a GPU one call.
#   bash tests/python/pip_install_test.sh PYTHON WORK_DIR
set -euo pipefail
python=$1 work=$2
root=$(cd "$(dirname "$0")/../.." && pwd)
rm -rf "$work" && mkdir -p "$work"
"$python" -m venv "$work/venv"
# The new environment sees PYTHON's own packages (PYTHON may itself be a virtual environment,
# whose packages --system-site-packages would not bring).
site=$("$work/venv/bin/python" -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")
"$python" -c "import sysconfig; print('\n'.join(sorted({sysconfig.get_paths()[k] for k in ('purelib', 'platlib')})))" \
  > "$site/xgemv-test-base.pth"
"$work/venv/bin/pip" install --no-build-isolation --no-deps --no-index \
  --config-settings=build-dir="$work/build" "$root/interface/python"
cd "$work"
env -u XGEMV_LIBRARY -u PYTHONPATH "$work/venv/bin/python" - <<'PY'
import importlib.metadata, pathlib
import torch
import xgemv
library = pathlib.Path(xgemv._library.LIBRARY_PATH)
assert "site-packages" in library.parts, library
assert xgemv.__version__ == importlib.metadata.version("xgemv"), xgemv.__version__
# What pip resolves for a user: the torch the tests run on, not whatever is newest, and numpy.
from packaging.requirements import Requirement
requires = {r.name: r.specifier for r in map(Requirement, importlib.metadata.requires("xgemv"))}
assert "2.11.0" in requires["torch"] and "2.12.0" not in requires["torch"], requires
assert "numpy" in requires, requires
print(f"installed xgemv {xgemv.__version__} with {library}")
if torch.cuda.is_available():
    x = torch.randn(2, 256, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(64, 256, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(64, device="cuda", dtype=torch.bfloat16)
    torch.testing.assert_close(xgemv.linear(x, w, b), torch.nn.functional.linear(x, w, b),
                               rtol=2e-2, atol=2e-2)
    print("one linear call on", torch.cuda.get_device_name())
PY

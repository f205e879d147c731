#!/usr/bin/env bash
# The README's test command, run from the repository root of a fresh clone:
#   bash tests/run.sh [CTEST ARGUMENTS]      (e.g. -LE fuzz, -L gpu)
# Installs the Debian packages the build needs and clang for the fuzz tests (those missing), puts
# nvcc on PATH if it is not, makes build/venv with torch and pytest for the Python tests
# (cmake/setup.sh), configures and builds build/ (Release), then runs the tests. Without a GPU the
# GPU tests report skipped. Last it prints every skipped test with the reason it gave, and one
# line of counts, "tests: P passed, F failed, S skipped, T total", both read from ctest's output
# (tests/summary/ctest_summary.py). Exit status: ctest's.
set -euo pipefail
cd "$(dirname "$0")/.."
source cmake/setup.sh
xgemv_install_packages
xgemv_install_fuzzer
xgemv_find_nvcc
python_options=()
if xgemv_python_environment build/venv; then
  python_options=(-DXGEMV_PYTHON="$PWD/build/venv/bin/python")
else
  echo "xgemv: no Python environment for the Python package's tests; they are left out" >&2
fi
xgemv_configure build -DCMAKE_BUILD_TYPE=Release "${python_options[@]}"
cmake --build build --parallel "${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}"
# ctest's console output is kept for the summary; its LastTest.log holds each test's output.
console=build/Testing/ctest-console.log
mkdir -p build/Testing
status=0
ctest --test-dir build --output-on-failure "$@" | tee "$console" || status=$?
python3 tests/summary/ctest_summary.py "$console" build/Testing/Temporary/LastTest.log
exit "$status"

#!/usr/bin/env bash
# The README's test command, run from the repository root of a fresh clone:
#   bash tests/run.sh [CTEST ARGUMENTS]      (e.g. -LE fuzz, -L gpu)
# Installs the Debian packages the build needs and clang for the fuzz tests (those missing), puts
# nvcc on PATH if it is not (cmake/setup.sh), configures and builds build/ (Release), then runs
# the tests. Without a GPU the GPU tests report skipped. Exit status: ctest's.
set -euo pipefail
cd "$(dirname "$0")/.."
source cmake/setup.sh
xgemv_install_packages
xgemv_install_fuzzer
xgemv_find_nvcc
xgemv_configure build -DCMAKE_BUILD_TYPE=Release
cmake --build build --parallel "${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}"
ctest --test-dir build --output-on-failure "$@"

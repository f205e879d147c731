#!/usr/bin/env bash
# The README's benchmark command, run from the repository root of a fresh clone:
#   bash bench/run.sh
# The set-up of tests/run.sh (cmake/setup.sh; clang aside), then builds xgemv-bench in build/
# and runs the anchor shapes (--suite anchors --quick): with a GPU, xgemv beside cuBLAS and the
# stream-read ceiling (about a minute on an H200); without one, a demo: the OpenBLAS rows of its
# fp32/fp64 cases. Results: build/bench/results/. Then the optional Python steps on them, each of which says
# "skipped (...)" where its modules are missing: the Triton row-block kernel (torch, triton and a
# GPU) and the chart (matplotlib).
set -euo pipefail
cd "$(dirname "$0")/.."
source cmake/setup.sh
xgemv_install_packages
xgemv_find_nvcc
xgemv_configure build -DCMAKE_BUILD_TYPE=Release
cmake --build build --parallel "${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}" --target xgemv-bench
results=build/bench/results
build/bench/xgemv-bench --suite anchors --quick --out-dir "$results"
if command -v python3 >/dev/null; then
  python3 bench/triton/seed_gemv.py "$results"
  python3 bench/plot.py "$results"
else
  echo "bench/run.sh: no python3: the Triton seed and the chart are skipped"
fi

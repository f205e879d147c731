#!/usr/bin/env bash
# The CPU tests (ctest -L cpu) built with AddressSanitizer and UndefinedBehaviorSanitizer: host
# C, C++ and Fortran code instrumented, CUDA device code as always. The fuzz runs are left out
# (the fuzzers carry their own sanitizers and run in the normal build), and so are the Python
# package's tests (an instrumented libxgemv.so loaded by ctypes would need the sanitizer runtime
# preloaded into Python). Installs what the build needs first, as tests/run.sh does
# (cmake/setup.sh).
#
#   tests/hardening/sanitize-cpu.sh [BUILD_DIR]     (default: build-sanitize)
#
# Any sanitizer report fails the test that triggered it. Exit status: ctest's.
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build-sanitize}
sanitizers="-fsanitize=address,undefined"
compile_flags="$sanitizers -fno-sanitize-recover=undefined -fno-omit-frame-pointer"

source cmake/setup.sh
xgemv_install_packages
xgemv_find_nvcc
xgemv_configure "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DXGEMV_BUILD_BENCH=OFF \
  -DXGEMV_FUZZ_CXX=OFF -DXGEMV_PYTHON= \
  -DCMAKE_C_FLAGS="$compile_flags" -DCMAKE_CXX_FLAGS="$compile_flags" \
  -DCMAKE_Fortran_FLAGS="$compile_flags" \
  -DCMAKE_EXE_LINKER_FLAGS="$sanitizers" -DCMAKE_SHARED_LINKER_FLAGS="$sanitizers"
cmake --build "$build" --parallel "${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}"

# protect_shadow_gap=0: the CUDA driver maps memory where ASan would otherwise reserve its
# shadow gap (without it cudaGetDeviceCount fails under ASan on a GPU machine).
# verify_asan_link_order=0: programs that LD_PRELOAD the drop-in load it, instrumented, ahead of
# the ASan runtime, which then comes as its dependency. (The install tests' consumers link with
# the sanitizer flags, as the project's own programs do.)
export ASAN_OPTIONS=${ASAN_OPTIONS:-protect_shadow_gap=0:verify_asan_link_order=0:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
ctest --test-dir "$build" -L cpu -LE fuzz --output-on-failure

# shellcheck shell=bash
# The set-up behind the README's two commands (tests/run.sh, bench/run.sh) and the sanitizer
# build (tests/hardening/sanitize-cpu.sh), sourced from the repository root:
#
#   source cmake/setup.sh
#   xgemv_install_packages      # the Debian packages the build needs, those missing only
#   xgemv_install_fuzzer        # optional: clang with libFuzzer, for the fuzz tests
#   xgemv_find_nvcc             # nvcc on PATH ($CUDA_HOME/bin or /usr/local/cuda/bin if not)
#   xgemv_configure DIR [ARGS]  # cmake -S . -B DIR (Ninja for a new DIR) ARGS
#   xgemv_python_environment DIR  # a virtual environment with torch for the Python tests
#
# The installs only warn when they fail (the configure step then names what is really missing);
# xgemv_find_nvcc and xgemv_configure return non-zero on failure. The CUDA toolkit itself (13.x)
# is not a Debian package: it must be there already.

# Packages whose program may also come from elsewhere (then it is enough): "package:program".
xgemv_tool_packages=(cmake:cmake ninja-build:ninja g++:g++ gfortran:gfortran
  pkg-config:pkg-config python3:python3)
# Libraries and headers, checked with dpkg.
xgemv_library_packages=(libopenblas-dev libgtest-dev libgmock-dev libcli11-dev
  nlohmann-json3-dev)

# apt-get install --no-install-recommends "$@", as root or through sudo; refreshes the package
# lists before the first install.
xgemv_apt_lists_fresh=0
xgemv_apt_install() {
  local sudo=()
  if [[ $(id -u) -ne 0 ]]; then
    if ! command -v sudo >/dev/null; then
      echo "xgemv: not root and no sudo: cannot install $*" >&2
      return 1
    fi
    sudo=(sudo)
  fi
  if ((!xgemv_apt_lists_fresh)); then
    "${sudo[@]}" apt-get update -q || return 1
    xgemv_apt_lists_fresh=1
  fi
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
    --no-install-recommends "$@"
}

xgemv_package_installed() {
  dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'
}

xgemv_install_packages() {
  local missing=() entry package
  for entry in "${xgemv_tool_packages[@]}"; do
    package=${entry%%:*}
    if ! command -v "${entry#*:}" >/dev/null && ! xgemv_package_installed "$package"; then
      missing+=("$package")
    fi
  done
  for package in "${xgemv_library_packages[@]}"; do
    xgemv_package_installed "$package" || missing+=("$package")
  done
  if ((${#missing[@]})); then
    if ! command -v apt-get >/dev/null || ! command -v dpkg-query >/dev/null; then
      echo "xgemv: not a Debian system; install the equivalents of: ${missing[*]}" >&2
    else
      echo "xgemv: installing ${missing[*]}"
      # Not fatal: packages may come from elsewhere (a prefix on CMAKE_PREFIX_PATH, say); the
      # configure step names what is really missing.
      xgemv_apt_install "${missing[@]}" ||
        echo "xgemv: could not install ${missing[*]}; trying the build anyway" >&2
    fi
  fi
  return 0
}

# clang with libFuzzer builds the fuzz targets (tests/hardening/fuzz); without it the fuzz tests
# report skipped, so a failed install is no error.
xgemv_install_fuzzer() {
  command -v apt-get >/dev/null || return 0
  if ! command -v clang++ >/dev/null; then
    echo "xgemv: installing clang (optional, for the fuzz tests)"
    xgemv_apt_install clang ||
      echo "xgemv: clang not installed: the fuzz tests will report skipped" >&2
  fi
  if command -v clang++ >/dev/null; then
    local runtime
    runtime=libclang-rt-$(clang++ -dumpversion | cut -d. -f1)-dev
    if ! xgemv_package_installed "$runtime"; then
      xgemv_apt_install "$runtime" ||
        echo "xgemv: $runtime not installed: the fuzz tests will report skipped" >&2
    fi
  fi
  return 0
}

xgemv_find_nvcc() {
  command -v nvcc >/dev/null && return 0
  local dir
  for dir in ${CUDA_HOME:+"$CUDA_HOME/bin"} /usr/local/cuda/bin; do
    if [[ -x $dir/nvcc ]]; then
      export PATH=$dir:$PATH
      echo "xgemv: nvcc is not on PATH; using $dir/nvcc"
      return 0
    fi
  done
  echo "xgemv: no CUDA toolkit: nvcc is not on PATH, nor in \$CUDA_HOME/bin or" \
    "/usr/local/cuda/bin (install the CUDA 13 toolkit)" >&2
  return 1
}

# The Python tests (the package's, PyTorch under the cuBLAS drop-in, the bench's Python steps) run
# with XGEMV_PYTHON, this environment: torch (PyPI's wheel: a CUDA build of about 2.6 GB with its
# nvidia-* libraries, triton among them; its CPU side is all the CPU tests use, and it is the
# torch of the GPU machine), transformers (the MoE models' experts modules; the GPU machine's
# release), pytest and scikit-build-core. Made once in DIR; returns non-zero when it cannot (no
# python3 venv module, no registry): the Python package's tests are then left out and the others
# run with the python3 on PATH.
xgemv_python_torch="torch==2.11.*"
xgemv_python_transformers="transformers==5.17.*"
xgemv_python_environment() {
  local dir=$1
  if [[ -x $dir/bin/python ]] &&
    "$dir/bin/python" -c "import torch, transformers, pytest, scikit_build_core" 2>/dev/null; then
    return 0
  fi
  echo "xgemv: making $dir with $xgemv_python_torch, $xgemv_python_transformers, pytest and" \
    "scikit-build-core"
  { [[ -x $dir/bin/python ]] || python3 -m venv "$dir"; } &&
    "$dir/bin/pip" install -q "$xgemv_python_torch" "$xgemv_python_transformers" numpy pytest \
      scikit-build-core
}

xgemv_configure() {
  local dir=$1
  shift
  local generator=()
  # A build folder keeps the generator it was made with.
  if [[ ! -f $dir/CMakeCache.txt ]] && command -v ninja >/dev/null; then generator=(-G Ninja); fi
  cmake -S . -B "$dir" "${generator[@]}" "$@"
}

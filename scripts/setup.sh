#!/usr/bin/env bash
# Installs the Debian packages gpufact needs that are missing (non-interactive, idempotent),
# then configures and builds it with a CMake preset; --test also runs the test suite.
#
#   scripts/setup.sh            install + build (preset release)
#   scripts/setup.sh --test     install + build + ctest
#   options: --preset release|debug|ci   --no-install
set -euo pipefail

preset=release
run_tests=0
install=1
while [ $# -gt 0 ]; do
  case "$1" in
    --test) run_tests=1 ;;
    --no-install) install=0 ;;
    --preset) preset="${2:?--preset needs a value}"; shift ;;
    -h|--help) sed -n '2,8p' "$0"; exit 0 ;;
    *) echo "setup.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done

cd "$(dirname "$0")/.."

packages=(build-essential cmake git pkg-config
          libopenblas-dev liblapacke-dev libbenchmark-dev libgtest-dev libcli11-dev nlohmann-json3-dev
          python3 python3-matplotlib python3-jsonschema patchelf)
if [ "$install" = 1 ]; then
  missing=()
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    sudo=""
    [ "$(id -u)" = 0 ] || sudo="sudo"
    echo "setup.sh: installing ${missing[*]}"
    $sudo apt-get update -q
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
  fi
fi

if ! command -v nvcc >/dev/null 2>&1; then
  for d in /usr/local/cuda/bin /usr/local/cuda-*/bin; do
    if [ -x "$d/nvcc" ]; then export PATH="$d:$PATH"; break; fi
  done
fi
command -v nvcc >/dev/null 2>&1 || { echo "setup.sh: the CUDA toolkit (nvcc) was not found; install it first" >&2; exit 1; }

cmake --preset "$preset"
cmake --build --preset "$preset" -j "$(nproc)"
if [ "$run_tests" = 1 ]; then
  ctest --preset "$preset" -j "$(nproc)"
fi

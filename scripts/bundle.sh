#!/usr/bin/env bash
# Makes a relocatable gpufact folder for GPU nodes that lack the build dependencies:
#   bin/gpufact  (RPATH $ORIGIN/../lib, then the usual CUDA library folders)
#   lib/         every non-system shared library it needs (Google Benchmark, OpenBLAS, LAPACKE, gfortran, ...)
#   share/gpufact/  presets, the report schema and the plotting script
# The node needs only the NVIDIA driver and the CUDA runtime libraries (cudart is linked
# statically; cuBLAS and cuSOLVER come from the node's CUDA installation).
#
#   scripts/bundle.sh [BUILD_DIR] [OUT_DIR] [--tar]     defaults: build/release bundle/gpufact
set -euo pipefail
cd "$(dirname "$0")/.."
build=build/release
out=bundle/gpufact
tar=0
positional=()
for a in "$@"; do
  case "$a" in
    --tar) tar=1 ;;
    *) positional+=("$a") ;;
  esac
done
[ ${#positional[@]} -ge 1 ] && build="${positional[0]}"
[ ${#positional[@]} -ge 2 ] && out="${positional[1]}"
[ -x "$build/gpufact" ] || { echo "bundle.sh: $build/gpufact not found; build first (scripts/setup.sh)" >&2; exit 1; }

rm -rf "$out"
cmake --install "$build" --prefix "$out" >/dev/null
mkdir -p "$out/lib"
# Copy what ldd resolves, except the C/C++ runtime, the driver and the CUDA toolkit's own libraries.
ldd "$out/bin/gpufact" | awk '/=> \// {print $1, $3}' | while read -r name path; do
  case "$name" in
    linux-vdso*|ld-linux*|libc.so*|libm.so*|libpthread.so*|libdl.so*|librt.so*|libgcc_s.so*|libstdc++.so*) continue ;;
    libcuda.so*|libnvidia-ml.so*|libcudart.so*|libcublas*|libcusolver*|libcusparse*|libnvJitLink*|libcufft*) continue ;;
  esac
  cp -L "$path" "$out/lib/$name"
done
# Bundled libraries find each other first.
if command -v patchelf >/dev/null 2>&1; then
  for f in "$out"/lib/*.so*; do patchelf --set-rpath '$ORIGIN' "$f"; done
fi
echo "bundle: $out ($(du -sh "$out" | cut -f1)); libraries: $(ls "$out/lib" | tr '\n' ' ')"
if [ "$tar" = 1 ]; then
  tar -C "$(dirname "$out")" -cJf "$out.tar.xz" "$(basename "$out")"
  echo "bundle: $out.tar.xz ($(du -sh "$out.tar.xz" | cut -f1))"
fi

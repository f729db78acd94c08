#!/usr/bin/env bash
# Installs the Debian 12 packages Ferrite needs to build and test. Idempotent: when every
# package is already installed it only runs dpkg-query and exits, without apt-get update.
set -euo pipefail

packages=(
  cmake g++ make ccache                            # native build (ccache: rebuilds and fresh clones)
  libxbyak-dev libhwy-dev libdnnl-dev ocl-icd-opencl-dev  # JIT, portable SIMD, oneDNN (+ its CMake dep)
  libzydis-dev                                     # disassembly in JIT dumps (optional)
  libxxhash-dev                                    # digests of packed weights (header-only)
  libre2-dev                                       # RegexFullMatch (native; wasm and aarch64:
  curl xz-utils patch perl python3-six unicode-data  #   Debian's RE2 sources, scripts/fetch_re2.sh)
  libgtest-dev                                     # unit tests (native, and sources for wasm)
  clang-14 libfuzzer-14-dev libclang-rt-14-dev     # fuzz targets (libFuzzer with ASan and UBSan)
  emscripten wabt binaryen                         # wasm build
  libonnx-testdata                                 # ONNX node conformance cases
  clang-format                                     # format check in scripts/test.sh
  pmccabe                                          # function sizes (scripts/check_sizes.sh)
  python3 python3-numpy python3-onnx               # example model and test fixtures
  pybind11-dev python3-dev python3-pytest          # the Python module and its tests
  chromium-headless-shell                          # the JavaScript package's browser test
  g++-aarch64-linux-gnu qemu-user-static           # the ARM check (cross build, tests under qemu)
  python3-torch python3-torchvision                # end-to-end test models (tests/models)
  libopenblas0-openmp                              # a fast BLAS for torch (Debian defaults to the reference one)
)
# node may come from elsewhere (e.g. node 20); only install Debian's when there is none.
command -v node >/dev/null 2>&1 || packages+=(nodejs)
# npm installs playwright-core (the browser test's driver) into build/browser.
command -v npm >/dev/null 2>&1 || packages+=(npm)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#packages[@]} packages present"
  exit 0
fi

echo "setup: installing ${missing[*]}"
sudo=()
if [ "$(id -u)" -ne 0 ]; then sudo=(sudo); fi
apt=("${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600)
"${apt[@]}" update
"${apt[@]}" install -y --no-install-recommends "${missing[@]}"

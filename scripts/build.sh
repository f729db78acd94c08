#!/usr/bin/env bash
# scripts/build.sh native|wasm|wasm-mt|asan|tsan|aarch64|fuzz [TARGET...] — configures and builds into build/<kind>:
#   native  Release, GCC
#   wasm    Release, Emscripten (emcmake); tests run under node
#   asan    AddressSanitizer + UndefinedBehaviorSanitizer at -O1 -g1 (with asserts): compiles
#           2.4x faster than -O2 -g and still gives file:line stack traces
#   tsan    ThreadSanitizer at -O1 -g1 (scripts/test.sh builds only the C API's threads test)
#   wasm-mt the JavaScript package's threaded module (pthreads) into build/wasm/js
#   aarch64 Release, cross-built with g++-aarch64-linux-gnu (scripts/aarch64.cmake): the
#           portable path only; tests run under qemu-aarch64
#   fuzz    the libFuzzer targets (tests/fuzz) with clang 14, ASan and UBSan at -O1 -g1, the
#           same sources as the product build (which stays on GCC); by default only them
# With TARGETs only those are built (e.g. `ferrite`), otherwise everything.
set -euo pipefail
cd "$(dirname "$0")/.."

kind=${1:-}
shift || true
# The cores (GNU nproc gives OMP_NUM_THREADS when it is set: scripts/test.sh sets it to 1).
jobs=$(env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT nproc)
case "$kind" in
  native) configure=(cmake -S . -B build/native -DCMAKE_BUILD_TYPE=Release) ;;
  asan)
    configure=(cmake -S . -B build/asan -DCMAKE_BUILD_TYPE=RelWithDebInfo
      "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1" -DFERRITE_SANITIZE=ON)
    ;;
  tsan)
    configure=(cmake -S . -B build/tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo
      "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1" "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -g1"
      -DFERRITE_TSAN=ON)
    ;;
  fuzz)
    configure=(cmake -S . -B build/fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo
      -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14
      "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1" "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -g1"
      -DFERRITE_FUZZ=ON -DFERRITE_TESTS=OFF)
    [ $# -gt 0 ] || set -- fuzz_targets
    ;;
  aarch64)
    configure=(cmake -S . -B build/aarch64 -DCMAKE_BUILD_TYPE=Release
      "-DCMAKE_TOOLCHAIN_FILE=$PWD/scripts/aarch64.cmake")
    ;;
  wasm-mt)
    # The package's threaded module (pthreads), written into build/wasm/js.
    export NODE_PATH=/usr/share/nodejs
    configure=(emcmake cmake -S . -B build/wasm-mt -DCMAKE_BUILD_TYPE=Release
      -DFERRITE_WASM_THREADS=ON -DFERRITE_TESTS=OFF "-DFERRITE_JS_DIR=$PWD/build/wasm/js")
    ;;
  wasm)
    # emcc's JS optimizer requires `acorn` from Debian's node packages. EM_CACHE stays
    # unset: Debian ships emscripten's system libraries prebuilt in its own cache.
    export NODE_PATH=/usr/share/nodejs
    configure=(emcmake cmake -S . -B build/wasm -DCMAKE_BUILD_TYPE=Release)
    ;;
  *)
    echo "usage: scripts/build.sh native|wasm|wasm-mt|asan|tsan|aarch64|fuzz [TARGET...]" >&2
    exit 2
    ;;
esac

# ccache, when installed (scripts/setup.sh installs it), with its cache outside the clone
# (~/.cache/ccache) and paths taken relative to the repository, so that a fresh clone
# anywhere, as CI makes, reuses what earlier builds compiled.
if command -v ccache >/dev/null 2>&1; then
  export CCACHE_BASEDIR=$PWD CCACHE_NOHASHDIR=1
  export CCACHE_DIR=${CCACHE_DIR:-$HOME/.cache/ccache}
  ccache --max-size="${FERRITE_CCACHE_SIZE:-20G}" >/dev/null
  if [[ $kind == wasm* ]]; then
    export EM_COMPILER_WRAPPER=ccache
  else
    configure+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
  fi
fi

start=$(date +%s)
# wasm and aarch64 compile RE2 from Debian's sources (native builds link libre2).
case "$kind" in wasm | wasm-mt | aarch64) bash scripts/fetch_re2.sh ;; esac
"${configure[@]}"
targets=()
for t in "$@"; do targets+=(--target "$t"); done
cmake --build "build/$kind" -j "$jobs" "${targets[@]}"
echo "build $kind: $(($(date +%s) - start))s"

#!/usr/bin/env bash
# README command #2 (and CI): installs what is missing, checks formatting, exports the
# end-to-end test models with PyTorch (build/models), builds native, wasm and asan, and runs
# their tests:
#   native  every ctest entry (unit tests, conformance and models on every backend, CLI errors)
#   wasm    every ctest entry, under node (and in headless Chromium), the package's threaded
#           module (wasm-mt) built first; the models on the portable backend only
#   asan    every ctest entry too (the unit tests in one process; the models on the jit and
#           portable backends: the reference interpreter runs them natively)
#   aarch64 the portable path cross-built for ARM: unit and conformance tests under qemu
#   tsan    the C API's threads test (one session from 8 threads) under ThreadSanitizer
#   fuzz    the libFuzzer targets (clang, build/fuzz): every reproducer of tests/fuzz/regressions
#           and 20 s of fuzzing per target from a sample of the seeds (tests/fuzz/ci.sh)
# Every step runs even if an earlier one failed; the last line says what failed, and the
# exit status is non-zero if anything did.
set -euo pipefail
cd "$(dirname "$0")/.."

# ctest's parallel jobs: the cores. GNU nproc gives OMP_NUM_THREADS when it is set, so it is
# asked without it (with OMP_NUM_THREADS=1, set for the tests below, every ctest ran serially).
jobs=$(env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT nproc)
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
script_start=$(date +%s)
failed=()
summaries=()

step() {  # step NAME COMMAND...: runs, times and records one step
  local name=$1 t0=$(date +%s)
  shift
  echo "=== $name"
  if "$@"; then
    echo "=== $name: ok ($(($(date +%s) - t0))s)"
  else
    echo "=== $name: FAILED ($(($(date +%s) - t0))s)"
    failed+=("$name")
  fi
}

check_format() {
  local files
  if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    files=$(git ls-files '*.cc' '*.h' '*.c')
  else
    files=$(find . -path ./build -prune -o \( -name '*.cc' -o -name '*.h' -o -name '*.c' \) -print)
  fi
  local f bad=0
  for f in $files; do  # file names in this repo have no spaces
    if ! clang-format --dry-run --Werror "$f" >/dev/null 2>&1; then
      echo "needs clang-format -i: $f"
      bad=1
    fi
  done
  return "$bad"
}

run_ctest() {  # run_ctest KIND [ctest args...]: ctest in build/KIND, summary kept for the end
  local kind=$1 log="build/$1/ctest.log" status=0
  shift
  ctest --test-dir "build/$kind" -j "$jobs" --timeout 1200 --output-on-failure "$@" 2>&1 |
    tee "$log" || status=$?
  [ "$status" -eq 0 ] && grep -q 'tests passed' "$log" || status=1
  summaries+=("$kind: $(grep -E 'tests passed|No tests were found' "$log" | tail -1)")
  return "$status"
}

export_models() {  # tests/models into build/models (float16 twins: build/models_half), again
  local out=build/models half=build/models_half hash  # only when its scripts changed
  hash=$(cat tests/models/*.py | sha256sum | cut -d' ' -f1)
  if [ "$(cat "$out/.export-hash" 2>/dev/null)" = "$hash" ]; then
    echo "$out is up to date"
    return 0
  fi
  rm -rf "$out" "$half"  # no stale or half-written cases; the hash is written only on success
  /usr/bin/python3 tests/models/export_models.py --out "$out" --half-out "$half" &&
    echo "$hash" >"$out/.export-hash"
}

build_and_test() {  # build_and_test KIND [ctest args...]
  local kind=$1
  shift
  rm -f "build/$kind/ctest.log"
  step "build $kind" bash scripts/build.sh "$kind"
  if [[ " ${failed[*]-} " == *" build $kind "* ]]; then
    summaries+=("$kind: not tested (build failed)")
    return
  fi
  step "test $kind" run_ctest "$kind" "$@"
}

step "setup" bash scripts/setup.sh
step "clang-format" check_format
step "sizes" bash scripts/check_sizes.sh
step "export models" export_models
build_and_test native
# The JavaScript package's threaded module first (build/wasm-mt writes it into
# build/wasm/js), so that the wasm tests find it.
step "build wasm-mt" bash scripts/build.sh wasm-mt ferrite_wasm
build_and_test wasm
build_and_test asan
# ARM: the portable path cross-built for aarch64, its unit and conformance tests under
# qemu-aarch64.
rm -f build/aarch64/ctest.log
step "build aarch64" bash scripts/build.sh aarch64 ferrite unit_tests
if [[ " ${failed[*]-} " == *" build aarch64 "* ]]; then
  summaries+=("aarch64: not tested (build failed)")
else
  step "test aarch64" run_ctest aarch64 -R '^(unit_tests|conformance_)'
fi
# ThreadSanitizer: only the C API's threads test (and the libraries under it).
rm -f build/tsan/ctest.log
step "build tsan" bash scripts/build.sh tsan c_api_threads
if [[ " ${failed[*]-} " == *" build tsan "* ]]; then
  summaries+=("tsan: not tested (build failed)")
else
  step "test tsan" run_ctest tsan -R '^c_api_threads$'
fi
# Fuzzing: the targets of tests/fuzz built with clang (ccache), each run on every reproducer
# and fuzzed for a fixed 20 s; any crash, hang, sanitizer report or backend disagreement fails.
step "build fuzz" bash scripts/build.sh fuzz
if [[ " ${failed[*]-} " == *" build fuzz "* ]]; then
  summaries+=("fuzz: not run (build failed)")
else
  step "fuzz" bash tests/fuzz/ci.sh 20
fi

echo
echo "=== summary"
for s in "${summaries[@]}"; do echo "$s"; done
total=$(($(date +%s) - script_start))
# One closing line over every ctest run: "N passed, M failed".
passed=0
failed_tests=0
for kind in native wasm asan aarch64 tsan; do
  line=$(grep -E 'tests passed, [0-9]+ tests? failed out of' "build/$kind/ctest.log" 2>/dev/null | tail -1 || true)
  if [[ $line =~ ([0-9]+)\ tests?\ failed\ out\ of\ ([0-9]+) ]]; then
    failed_tests=$((failed_tests + BASH_REMATCH[1]))
    passed=$((passed + BASH_REMATCH[2] - BASH_REMATCH[1]))
  fi
done
if [ ${#failed[@]} -eq 0 ]; then
  echo "ALL PASSED in ${total}s"
else
  echo "FAILED: $(IFS=,; echo "${failed[*]}") (in ${total}s)"
fi
echo "${passed} passed, ${failed_tests} failed"
[ ${#failed[@]} -eq 0 ]

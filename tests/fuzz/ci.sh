#!/usr/bin/env bash
# tests/fuzz/ci.sh [SECONDS]: the fuzz step of scripts/test.sh, after `scripts/build.sh fuzz`
# (and the native build, whose `ferrite compile` makes the plan seeds). Checks that the
# mutators still understand the seeds (fuzz_mutator_check: a plan format change that
# plan_layout.cc misses fails here), then per target: every reproducer of regressions/ once,
# and SECONDS (default 20) of fuzzing from a fixed sample of the seeds plus the reproducers,
# with a fixed random seed, two targets at a time. Any crash, hang over 10 s, out-of-memory,
# sanitizer report, leak or backend disagreement fails the step, with the artifact in
# build/fuzz/ci/findings.
set -euo pipefail
cd "$(dirname "$0")/../.."

seconds=${1:-20}
bin=build/fuzz/bin
work=build/fuzz/ci
export OMP_NUM_THREADS=1 ASAN_OPTIONS=detect_leaks=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
ferrite=build/native/bin/ferrite
[ -x "$ferrite" ] || ferrite=""
/usr/bin/python3 tests/fuzz/make_seeds.py --out build/fuzz/seeds --ferrite "$ferrite"
"$bin/fuzz_mutator_check" --mutants 2 build/fuzz/seeds/onnx build/fuzz/seeds/plan

sample() {  # sample DIR N: every k-th file of DIR (sorted), about N of them
  local files
  mapfile -t files < <(find "$1" -type f | sort)
  local n=${#files[@]} k
  k=$(((n + $2 - 1) / $2))
  [ "$k" -ge 1 ] || k=1
  for ((i = 0; i < n; i += k)); do echo "${files[$i]}"; done
}

rm -rf "$work"
fuzz_target() {  # fuzz_target TARGET: its reproducers, then SECONDS of fuzzing; one line out
  local t=$1 seeds dict n log t0
  case "$t" in
    onnx_*) seeds=build/fuzz/seeds/onnx; dict=onnx; n=150 ;;
    plan_*) seeds=build/fuzz/seeds/plan; dict=plan; n=150 ;;
    npy) seeds=build/fuzz/seeds/npy; dict=npy; n=100 ;;
  esac
  mkdir -p "$work/corpus/$t" "$work/findings/$t"
  sample "$seeds" "$n" | xargs -r cp -t "$work/corpus/$t"
  # The reproducers up to 16 kB join the corpus as mutation seeds. The larger ones (huge
  # node counts, the slowest units) ran once just before: libFuzzer would run them again
  # as it reads the corpus (~70 s of fuzz_onnx_run's step).
  find tests/fuzz/regressions -maxdepth 1 \( -name '*.onnx' -o -name '*.fplan' \) -size -16k \
    -exec cp -t "$work/corpus/$t" {} +
  log="$work/$t.log"
  t0=$(date +%s)
  # The reproducers first, each once: under ASan, UBSan and coverage the largest
  # (concat_100000.onnx, 1.3 s natively) takes ~10 s on an idle core and twice that beside
  # other work, so their limit is 60 s; regressions.py holds them to time natively.
  if "$bin/fuzz_$t" -timeout=60 -rss_limit_mb=2048 -artifact_prefix="$work/findings/$t/" \
      tests/fuzz/regressions/*.onnx tests/fuzz/regressions/*.fplan >"$log" 2>&1 &&
    "$bin/fuzz_$t" -seed=1 -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
      -max_len=65536 -dict="tests/fuzz/dict/$dict.dict" \
      -artifact_prefix="$work/findings/$t/" "$work/corpus/$t" >>"$log" 2>&1; then
    echo "fuzz_$t: ok ($(($(date +%s) - t0)) s; $(grep -E '^#[0-9]+' "$log" | tail -1 | cut -c1-80))"
  else
    {
      echo "fuzz_$t: FAILED ($(($(date +%s) - t0)) s), in $log:"
      grep -E '^Running: ' "$log" | tail -1
      grep -E '==fuzz==|ERROR: |SUMMARY: |^artifact_prefix|Test unit written' "$log" | head -6
      grep -E '#[0-9]+ 0x[0-9a-f]+ in (ferrite|LLVMFuzzer)' "$log" | head -6 | cut -c1-200
    } >"$work/$t.failed"
    cat "$work/$t.failed"
  fi
}
export -f fuzz_target sample
export seconds bin work
# Two targets at a time (the machine's two cores), fuzz_onnx_run (the slowest: every
# unit compiled and run on each backend) first, so that the others share the other core.
printf '%s\n' onnx_run onnx_compile onnx_import plan_run plan_read npy |
  xargs -P 2 -I{} bash -c 'fuzz_target {}'
failed=()
for f in "$work"/*.failed; do
  [ -e "$f" ] && failed+=("$(basename "$f" .failed)")
done
[ ${#failed[@]} -eq 0 ] || { echo "fuzz findings in: ${failed[*]}"; exit 1; }

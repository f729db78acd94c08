#!/usr/bin/env bash
# tests/fuzz/run.sh [--minutes M] [--parallel P] [--jobs J] [--dir DIR] [--no-build] [TARGET...]
# A fuzz campaign (tests/fuzz/README.md): builds the targets (scripts/build.sh fuzz), makes
# the seed corpora (make_seeds.py, once), then runs each TARGET (default: all) for M minutes
# (default 10) at nice 19, P targets at a time (default 1), J libFuzzer workers each
# (default 1; on a many-core machine, one per core), in fork mode so that it goes on past
# crashes, timeouts (> 10 s) and out-of-memory (> 2 GB) and keeps each as an artifact. Corpora grow in DIR/corpus/TARGET across campaigns
# (default DIR: build/fuzz/campaign, or $FERRITE_FUZZ_DIR); artifacts go to
# DIR/findings/TARGET, logs to DIR/logs. At the end: executions, exec/s and coverage per
# target, and the findings grouped by stack (triage.py), known ones labelled.
set -euo pipefail
cd "$(dirname "$0")/../.."

minutes=10
parallel=1
jobs=1
dir=${FERRITE_FUZZ_DIR:-build/fuzz/campaign}
build=1
targets=()
all_targets=(onnx_import onnx_compile onnx_run plan_read plan_run npy)
while [ $# -gt 0 ]; do
  case "$1" in
    --minutes) minutes=$2; shift 2 ;;
    --parallel) parallel=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    --dir) dir=$2; shift 2 ;;
    --no-build) build=0; shift ;;
    -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
    -*) echo "run.sh: unknown option $1" >&2; exit 2 ;;
    *) targets+=("$1"); shift ;;
  esac
done
[ ${#targets[@]} -gt 0 ] || targets=("${all_targets[@]}")
for t in "${targets[@]}"; do
  [[ " ${all_targets[*]} " == *" $t "* ]] || { echo "run.sh: unknown target $t" >&2; exit 2; }
done

if [ "$build" = 1 ]; then
  bash scripts/build.sh fuzz
  [ -x build/native/bin/ferrite ] || bash scripts/build.sh native ferrite  # for plan seeds
fi
ferrite=build/native/bin/ferrite
[ -x "$ferrite" ] || ferrite=""
/usr/bin/python3 tests/fuzz/make_seeds.py --out build/fuzz/seeds --ferrite "$ferrite"
mkdir -p "$dir/logs"

export OMP_NUM_THREADS=1 ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export minutes dir jobs  # run_target runs in a child shell (xargs): -fork=$jobs needs them
run_target() {  # run_target TARGET: one campaign of one target, its log in DIR/logs
  local t=$1 seeds dict
  local limits="-max_len=65536"
  case "$t" in
    onnx_import) seeds="build/fuzz/seeds/onnx build/fuzz/seeds/tensor"; dict=onnx ;;
    # The model targets compile (and run) every input: models up to 8 KB (all but 32 of the
    # 1,067 seeds) and libFuzzer's plain schedule (README: throughput).
    onnx_*) seeds=build/fuzz/seeds/onnx; dict=onnx; limits="-max_len=8192 -entropic=0" ;;
    plan_*) seeds=build/fuzz/seeds/plan; dict=plan ;;
    npy) seeds=build/fuzz/seeds/npy; dict=npy ;;
  esac
  mkdir -p "$dir/corpus/$t" "$dir/findings/$t"
  # shellcheck disable=SC2086  # $seeds is a list of directories
  nice -n 19 "build/fuzz/bin/fuzz_$t" -fork="$jobs" -ignore_crashes=1 -ignore_timeouts=1 \
    -ignore_ooms=1 -max_total_time=$((minutes * 60)) -timeout=10 -rss_limit_mb=2048 \
    $limits -dict="tests/fuzz/dict/$dict.dict" -artifact_prefix="$dir/findings/$t/" \
    -print_final_stats=1 "$dir/corpus/$t" $seeds tests/fuzz/regressions \
    >"$dir/logs/$t.log" 2>&1 || true
  # The CPU seconds of the campaign (its fork-mode workers included): on a busy machine
  # exec/s says more about the other processes than about the target.
  local cpu
  cpu=$(times | tail -1 | awk '{ split($1, u, /[ms]/); split($2, s, /[ms]/);
                                 printf "%d", u[1] * 60 + u[2] + s[1] * 60 + s[2] }')
  echo "cpu_seconds: $cpu" >>"$dir/logs/$t.log"
  echo "$t: $(grep -E '^#[0-9]+: cov:' "$dir/logs/$t.log" | tail -1) cpu: ${cpu}s"
}
export -f run_target
echo "fuzzing ${targets[*]} for $minutes min each, $parallel at a time; logs in $dir/logs"
printf '%s\n' "${targets[@]}" | xargs -P "$parallel" -I{} bash -c 'run_target {}'

echo
echo "=== per target: executions, coverage (libFuzzer's last fork-mode line)"
for t in "${targets[@]}"; do
  /usr/bin/python3 - "$t" "$dir/logs/$t.log" <<'EOF'
import re, sys
target, log = sys.argv[1], sys.argv[2]
text = open(log, errors="replace").read()
lines = re.findall(r"^#\d+: cov: .*$", text, re.M)
if lines:  # fork mode: the parent's last line
    m = re.match(r"#(\d+): cov: (\d+) ft: (\d+) corp: (\d+) exec/s:? (\d+) "
                 r"oom/timeout/crash: (\d+)/(\d+)/(\d+) time: (\d+)s", lines[-1])
    n, cov, ft, corp, eps, oom, to, crash, secs = m.groups()
else:  # one process (-fork=0): its DONE line and final stats
    m = re.search(r"^#(\d+)\s+DONE\s+cov: (\d+) ft: (\d+) corp: (\d+)/\S+ .*exec/s: (\d+)", text, re.M)
    t = re.search(r"^Done \d+ runs in (\d+) second", text, re.M)
    if not m:
        print(f"{target:13s} no stats (see {log})")
        sys.exit(0)
    n, cov, ft, corp, eps = m.groups()
    oom, to, crash, secs = "0", "0", "0", t.group(1) if t else "?"
cpu = [int(l.split()[1]) for l in open(log, errors="replace") if l.startswith("cpu_seconds:")]
per_cpu = f"{int(n) / cpu[-1]:7.0f}" if cpu and cpu[-1] else "      ?"
print(f"{target:13s} {int(n):>10,} execs  {eps:>6} exec/s  {per_cpu} exec/CPU-s  cov {cov:>6}  "
      f"ft {ft:>7}  corpus {corp:>5}  oom/timeout/crash {oom}/{to}/{crash}  {secs} s")
EOF
done
echo
echo "=== findings by stack (triage.py)"
/usr/bin/python3 tests/fuzz/triage.py --bin build/fuzz/bin "$dir/findings" | tee "$dir/triage.txt"

# What the CLI test scripts share (sourced; they set `tmp` to a scratch directory first).
#   fail MESSAGE          prints FAIL MESSAGE and counts it in $failures
#   expect_error NAME STATUS TEXT COMMAND...
#                         runs COMMAND (a function or program); it must exit with STATUS
#                         ("nonzero" for any but 0) and print exactly one stderr line,
#                         starting with "error: " and containing TEXT
failures=0

fail() {
  echo "FAIL $1"
  failures=$((failures + 1))
}

expect_error() {
  local name=$1 want=$2 text=$3 status=0
  shift 3
  "$@" >"$tmp/out" 2>"$tmp/err" || status=$?
  local lines
  lines=$(wc -l <"$tmp/err")
  if [ "$status" -eq 0 ]; then
    fail "$name: exit status 0"
  elif [ "$want" != nonzero ] && [ "$status" -ne "$want" ]; then
    fail "$name: exit status $status, expected $want"
  elif [ "$lines" -ne 1 ]; then
    fail "$name: $lines lines on stderr: $(cat "$tmp/err")"
  elif ! grep -q '^error: ' "$tmp/err"; then
    fail "$name: stderr does not start with 'error: ': $(cat "$tmp/err")"
  elif ! grep -qF -- "$text" "$tmp/err"; then
    fail "$name: stderr does not mention '$text': $(cat "$tmp/err")"
  else
    echo "ok   $name ($status): $(cat "$tmp/err")"
  fi
}

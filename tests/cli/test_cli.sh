#!/bin/bash
# The gpufact CLI's contract (DESIGN.md, STYLE.md 9): exact exit codes (0 ok, 1 failures or a
# regression, 2 usage, 3 no GPU for an explicitly requested GPU experiment) and, for every
# refused request, exactly one line on stderr that names the problem.
#
# usage: test_cli.sh GPUFACT_BINARY TEMP_DIR
set -u

gpufact=${1:?usage: test_cli.sh GPUFACT_BINARY TEMP_DIR}
tmp=${2:?usage: test_cli.sh GPUFACT_BINARY TEMP_DIR}
case $gpufact in /*) ;; *) gpufact=$PWD/$gpufact ;; esac
[ -x "$gpufact" ] || { echo "FAIL: $gpufact is not an executable"; exit 1; }
python=/usr/bin/python3
[ -x "$python" ] || python=python3

rm -rf "$tmp"
mkdir -p "$tmp"
cd "$tmp" || exit 1  # a bench without -o writes into the current directory

failures=0
checks=0
out="$tmp/stdout.txt"
err="$tmp/stderr.txt"

fail() {
  echo "FAIL: $*"
  echo "  stdout (last lines):"
  tail -n 5 "$out" | sed 's/^/    /'
  echo "  stderr:"
  sed 's/^/    /' "$err"
  failures=$((failures + 1))
}

# expect CODE DESCRIPTION -- ARGS...: runs gpufact ARGS and checks the exit code.
expect() {
  local code=$1 what=$2
  shift 3
  checks=$((checks + 1))
  "$gpufact" "$@" >"$out" 2>"$err"
  local rc=$?
  if [ "$rc" -ne "$code" ]; then
    fail "$what: gpufact $* exited $rc, expected $code"
    return 1
  fi
  echo "ok   $what (exit $rc)"
  return 0
}

# one_line_error PATTERN...: stderr is exactly one line, starting "gpufact: ", containing every
# PATTERN (fixed strings).
one_line_error() {
  local lines
  lines=$(wc -l <"$err")
  if [ "$lines" -ne 1 ]; then
    fail "expected exactly one line on stderr, got $lines"
    return 1
  fi
  if ! grep -q '^gpufact: ' "$err"; then
    fail "stderr does not start with 'gpufact: '"
    return 1
  fi
  local p
  for p in "$@"; do
    if ! grep -qF -- "$p" "$err"; then
      fail "stderr does not mention '$p'"
      return 1
    fi
  done
}

stdout_has() {
  local p
  for p in "$@"; do
    if ! grep -qF -- "$p" "$out"; then
      fail "stdout does not contain '$p'"
      return 1
    fi
  done
}

stderr_empty() {
  if [ -s "$err" ]; then
    fail "expected nothing on stderr"
    return 1
  fi
}

# --- usage errors: exit 2, one line --------------------------------------------------------------
expect 2 "unknown experiment" -- bench nosuch.experiment -o "$tmp/r.json" &&
  one_line_error "nosuch.experiment"
expect 2 "bad axis value" -- bench host.blas -a n=abc -o "$tmp/r.json" &&
  one_line_error "'n'" "abc" "allowed"
expect 2 "axis value out of range" -- bench host.blas -a n=0 -o "$tmp/r.json" &&
  one_line_error "'n'" "[1, "
expect 2 "bad choice" -- bench host.blas -a routine=trsm -o "$tmp/r.json" &&
  one_line_error "routine" "trsm" "gemm|getrf|potrf|geqrf"
expect 2 "unknown axis" -- bench host.blas -a nosuch=1 -o "$tmp/r.json" &&
  one_line_error "nosuch" "routine"
expect 2 "malformed -a" -- bench host.blas -a n -o "$tmp/r.json" &&
  one_line_error "axis=values"
expect 2 "unwritable --out" -- bench host.blas -o /nonexistent/dir/r.json &&
  one_line_error "/nonexistent/dir"
expect 2 "--out is a directory" -- bench host.blas -o "$tmp" &&
  one_line_error "directory"
expect 2 "unknown preset" -- bench --preset nosuchpreset &&
  one_line_error "nosuchpreset" "quick"
expect 2 "unknown option" -- bench --bogus-option &&
  one_line_error "--bogus-option"
expect 2 "zero repetitions" -- bench host.blas --niter 0 -o "$tmp/r.json" &&
  one_line_error "--niter"
expect 2 "bad --benchmark_ flag" -- bench host.blas --benchmark_nosuch=1 -o "$tmp/r.json" &&
  one_line_error "benchmark_nosuch"
if ls "$tmp"/*.json >/dev/null 2>&1; then
  fail "a refused request left a report behind: $(ls "$tmp"/*.json)"
fi
expect 0 "no minimum time: a sample is one call" -- bench --preset ci host.blas -a n=64 --niter 2 --min-time 0 \
  -o "$tmp/min-time-0.json"
# The nb axis sets a panel width only where a method has one; the others skip with the reason.
expect 0 "nb on a method without a panel width" -- bench anderson10.fig8 -a method=openblas -a m=96 -a n=16 \
  --nb 0,8 --precision s --niter 2 -o "$tmp/fig8-nb.json" &&
  stdout_has "no panel width to set (nb = 8)" "1 passed"

# --- no GPU: exit 3, one line ----------------------------------------------------------------------
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
  echo "skip GPU experiment without a GPU (this machine has one: nvidia-smi -L succeeds)"
else
  expect 3 "GPU experiment without a GPU" -- bench volkov08.bandwidth -o "$tmp/gpu.json" &&
    one_line_error "GPU"
  [ -e "$tmp/gpu.json" ] && fail "exit 3 left a report behind"
  # Not asked for explicitly (all experiments): the GPU ones are skipped, the run succeeds.
  expect 0 "preset run without a GPU skips GPU experiments" -- bench --preset ci -a n=64 -o "$tmp/all.json" &&
    stdout_has "skipped" "volkov08.bandwidth"
fi

# --- list, dry run -------------------------------------------------------------------------------
expect 0 "list" -- list && stderr_empty && stdout_has "host.blas" "volkov08.bandwidth" "-a n=" "-a bytes="
expect 0 "list --json" -- list --json && stderr_empty &&
  if ! "$python" -c 'import json,sys; keys={e["key"] for e in json.load(open(sys.argv[1]))}; sys.exit(0 if {"host.blas","volkov08.bandwidth"} <= keys else 1)' "$out"; then
    fail "list --json is not JSON naming every experiment"
  fi
expect 0 "dry run" -- bench --dry-run && stderr_empty && stdout_has "host.blas" "volkov08.bandwidth" "cases"
expect 0 "dry run with overrides" -- bench --dry-run host.blas -a n=100:400:*2 -a routine=gemm --precision d &&
  stdout_has "n=100 " "n=200 " "n=400 " "1 experiments, 3 cases"
# MAGMA's tester vocabulary: -N sizes, --nb block sizes, -l adds the LAPACK (OpenBLAS) method.
expect 0 "tester flags -N --nb -l" -- bench --dry-run volkov08.fig7 -a factorization=lu -a method=cusolver -a data=host -N 1000 --nb 96 -l &&
  stdout_has "n=1000 method=cusolver data=host nb=96" "n=1000 method=openblas data=host nb=96" "1 experiments, 2 cases"
expect 2 "-l without an openblas method" -- bench --dry-run volkov08.fig1 -l && one_line_error "-l" "openblas"
# launch=graph applies to the GPU-resident LU (no panel_sms) and cuSOLVER's getrf only.
expect 0 "launch axis" -- bench --dry-run volkov08.fig7 -a factorization=lu,qr -a method=gpu_resident,cusolver \
  -a data=device -a panel=cusolver -a panel_sms=0,8 -a launch=graph --precision s -N 1000 &&
  stdout_has "factorization=lu precision=s n=1000 method=gpu_resident" "method=cusolver" "launch=graph" "1 experiments, 2 cases"
if ls "$tmp"/gpufact-*.json >/dev/null 2>&1; then fail "--dry-run wrote a report"; fi

# --- a real CPU run, its report, and comparisons ----------------------------------------------------
report="$tmp/ci.json"
# 6 repetitions: with the ci preset's 3, the U test's smallest two-sided p is 0.1 > alpha, so
# compare could never call a planted regression SLOW.
if expect 0 "bench --preset ci host.blas -c" -- bench --preset ci host.blas --niter 6 -c -o "$report"; then
  stderr_empty
  [ -s "$report" ] || fail "no report at $report"
  stdout_has "passed" "report: $report"

  expect 0 "report (markdown)" -- report "$report" && stderr_empty && stdout_has "# gpufact report" "## host.blas"
  expect 0 "report --format csv" -- report "$report" --format csv && stderr_empty &&
    stdout_has "experiment,artifact" "gemm/flop_rate"
  expect 0 "report -o file" -- report "$report" -o "$tmp/report.md" &&
    { [ -s "$tmp/report.md" ] || fail "report -o wrote nothing"; }
  expect 2 "report --format bad" -- report "$report" --format xml

  expect 0 "compare a report with itself" -- compare "$report" "$report" && stderr_empty &&
    stdout_has "0 SLOW, 0 FAST" "0 MISSING, 0 NEW"

  # Plant a 10% lower rate on every flop_rate metric. Timings on a shared CI machine can spread
  # by more than 10%, so both sides get the real medians but tight, deterministic samples
  # (±0.25%): the verdict then depends only on gpufact, not on the machine's noise.
  tight="$tmp/ci_tight.json"
  slow="$tmp/ci_slow.json"
  "$python" - "$report" "$tight" "$slow" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
for res in r["results"]:
    for m in res["metrics"]:
        n = len(m.get("samples", []))
        m["samples"] = [m["value"] * (1 + 0.001 * (i - (n - 1) / 2)) for i in range(n)]
json.dump(r, open(sys.argv[2], "w"), indent=1)
for res in r["results"]:
    for m in res["metrics"]:
        if m["tag"].endswith("/flop_rate"):
            m["value"] *= 0.9
            m["samples"] = [s * 0.9 for s in m["samples"]]
            m["stats"] = {k: (v if k == "cv" else v * 0.9) for k, v in m.get("stats", {}).items()}
json.dump(r, open(sys.argv[3], "w"), indent=1)
EOF
  rates=$(grep -c '"tag": "[a-z]*/flop_rate"' "$tight")
  expect 1 "compare against a planted 10% slower rate" -- compare "$tight" "$slow" &&
    stdout_has "$rates SLOW, 0 FAST"
  expect 0 "compare the other way round (faster) exits 0" -- compare "$slow" "$tight" &&
    stdout_has "0 SLOW, $rates FAST"
  expect 0 "compare --dashboard" -- compare "$report" "$report" --dashboard "$tmp/dash.json" &&
    if ! "$python" -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if d and all("flop_rate" in e["name"] for e in d) else 1)' "$tmp/dash.json"; then
      fail "dashboard JSON is not a non-empty list of rate entries"
    fi

  # A result missing from the new report is a failure too.
  missing="$tmp/ci_missing.json"
  "$python" -c 'import json,sys; r=json.load(open(sys.argv[1])); r["results"]=r["results"][1:]; json.dump(r, open(sys.argv[2],"w"))' "$report" "$missing"
  expect 1 "compare with a missing result" -- compare "$report" "$missing" && stdout_has "MISSING"

  # Unlike environments are refused unless forced.
  other="$tmp/ci_other_cpu.json"
  "$python" -c 'import json,sys; r=json.load(open(sys.argv[1])); r["system"]["host"]["cpu_model"]="Other CPU"; json.dump(r, open(sys.argv[2],"w"))' "$report" "$other"
  expect 2 "compare unlike environments" -- compare "$report" "$other" && one_line_error "Other CPU" "--force"
  expect 0 "compare unlike environments --force" -- compare "$report" "$other" --force && stdout_has "Environments differ"

  # A report written by a newer gpufact is refused.
  future="$tmp/future.json"
  "$python" -c 'import json,sys; r=json.load(open(sys.argv[1])); r["schema_version"]=99; json.dump(r, open(sys.argv[2],"w"))' "$report" "$future"
  expect 2 "report with a newer schema_version" -- report "$future" && one_line_error "schema_version 99"
fi

expect 2 "report of a file that is not a report" -- report /etc/hostname && one_line_error "/etc/hostname"
expect 2 "compare with a file that is not a report" -- compare /etc/hostname /etc/hostname && one_line_error "/etc/hostname"
echo '{"schema_version": 1, "results": [{"experiment": "a.b", "status": "great"}]}' >"$tmp/badstatus.json"
expect 2 "report with a malformed result" -- report "$tmp/badstatus.json" && one_line_error "badstatus.json"

# --- Google Benchmark flags pass through ------------------------------------------------------
expect 0 "--benchmark_filter passes through" -- bench --preset ci host.blas -a n=64 --benchmark_filter=gemm \
  -o "$tmp/filtered.json" &&
  stdout_has "excluded by --benchmark_filter" &&
  if ! "$python" -c '
import json, sys
r = json.load(open(sys.argv[1]))
ran = {res["axes"]["routine"] for res in r["results"] if res["metrics"]}
statuses = {res["axes"]["routine"]: res["status"] for res in r["results"]}
sys.exit(0 if ran == {"gemm"} and statuses["gemm"] == "passed" and statuses["getrf"] == "not_verified" else 1)' "$tmp/filtered.json"; then
    fail "--benchmark_filter=gemm did not measure exactly the gemm cases"
  fi

# --- Ctrl-C keeps what finished -----------------------------------------------------------------
# A long run interrupted by SIGINT exits 130 and leaves a valid report marked incomplete with
# every result that had finished.
checks=$((checks + 1))
rm -f "$tmp/interrupted.json"
"$gpufact" bench --preset ci host.blas -a n=300 --niter 200 --min-time 0.02 -o "$tmp/interrupted.json" \
  >"$out" 2>"$err" &
pid=$!
for _ in $(seq 600); do  # wait until at least one result is on disk (at most 60 s: a loaded 2-core CI machine took over 10)
  if [ -s "$tmp/interrupted.json" ] && "$python" -c 'import json,sys; sys.exit(0 if json.load(open(sys.argv[1]))["results"] else 1)' "$tmp/interrupted.json" 2>/dev/null; then
    break
  fi
  sleep 0.1
done
kill -INT "$pid"
wait "$pid"
rc=$?
if [ "$rc" -ne 130 ]; then
  fail "SIGINT: expected exit 130, got $rc"
elif ! "$python" -c '
import json, sys
r = json.load(open(sys.argv[1]))
done = [x for x in r["results"] if x["status"] == "passed"]
sys.exit(0 if r["meta"]["complete"] is False and r["meta"].get("note") == "interrupted" and done else 1)' "$tmp/interrupted.json"; then
  fail "SIGINT: the report is not marked interrupted or lost the finished results"
fi

echo "$checks checks, $failures failures"
[ "$failures" -eq 0 ]

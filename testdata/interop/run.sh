#!/usr/bin/env bash
# Real-client interop suite: the Apache RocketMQ Java client (Maven, JUnit 5) and rocketmq-client-go v2
# against a freshly built popshim.
#
# Usage: testdata/interop/run.sh [java|go|all]          (default all)
# Env:   INTEROP_JAVA_TESTS=S2*   run only matching Java test classes (surefire -Dtest)
#        INTEROP_KEEP=1           keep the work directory (popshim logs, data, client logs)
#        POPSHIM_BIN=path         use this popshim binary instead of building one (make interop does)
#        POPSHIM_EXTRA_ARGS="…"   extra flags for every `popshim serve` the Java suite starts
#
# Each suite starts and stops its own popshim processes from the binary built here (the Java restart
# scenario has to), on free loopback ports, each with its own data directory under one work directory.
# Every popshim writes its pid to $work/pids; the EXIT trap kills whatever is still listed there, so no
# broker outlives this script, whatever happens.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
what=${1:-all}
case "$what" in java|go|all) ;; *) echo "usage: $0 [java|go|all]" >&2; exit 2 ;; esac

work=$(mktemp -d "${TMPDIR:-/tmp}/popshim-interop.XXXXXX")
mkdir -p "$work/pids"

cleanup() {
  local rc=$?
  local f pid
  for f in "$work"/pids/*.pid; do
    [ -e "$f" ] || continue
    pid=$(cat "$f")
    # each popshim is its own process group leader (setsid / Setpgid): kill the group, then the pid
    kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
  done
  sleep 1
  for f in "$work"/pids/*.pid; do
    [ -e "$f" ] || continue
    pid=$(cat "$f")
    kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true
  done
  if [ "$rc" -ne 0 ] || [ -n "${INTEROP_KEEP:-}" ]; then
    echo "interop: work directory kept: $work (popshim logs under */popshim-*.log)" >&2
  else
    rm -rf "$work"
  fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

start=$(date +%s)
if [ -n "${POPSHIM_BIN:-}" ]; then
  [ -x "$POPSHIM_BIN" ] || { echo "interop: POPSHIM_BIN=$POPSHIM_BIN is not executable" >&2; exit 2; }
  bin=$(cd "$(dirname "$POPSHIM_BIN")" && pwd)/$(basename "$POPSHIM_BIN")
  echo "interop: using $bin"
else
  echo "interop: building popshim"
  bin="$work/popshim"
  (cd "$root" && go build -o "$bin" .)
fi

failed=()

if [ "$what" = java ] || [ "$what" = all ]; then
  echo "interop: Java suite (org.apache.rocketmq:rocketmq-client, JUnit 5)"
  mvn_args=(-B -q -f "$here/java/pom.xml"
    "-Dpopshim.bin=$bin" "-Dpopshim.workdir=$work/java"
    "-Dpopshim.extraArgs=${POPSHIM_EXTRA_ARGS:-}")
  if [ -n "${INTEROP_JAVA_TESTS:-}" ]; then
    mvn_args+=("-Dtest=${INTEROP_JAVA_TESTS}" -Dsurefire.failIfNoSpecifiedTests=false)
  fi
  mkdir -p "$work/java"
  rm -rf "$here/java/target/surefire-reports"
  if ! mvn "${mvn_args[@]}" test; then
    failed+=(java)
    echo "interop: Java suite failed; per-class output: $here/java/target/surefire-reports/" >&2
  fi
  # mvn -q hides surefire's own summary; print one plain line from its XML reports for the CI log
  python3 - "$here/java/target/surefire-reports" <<'PY' || true
import glob, sys, xml.etree.ElementTree as ET
t = f = e = s = 0
for p in glob.glob(sys.argv[1] + "/TEST-*.xml"):
    r = ET.parse(p).getroot()
    t += int(r.get("tests", 0)); f += int(r.get("failures", 0)); e += int(r.get("errors", 0)); s += int(r.get("skipped", 0))
print(f"java-interop: {t - f - e - s} passed, {f + e} failed, {s} skipped")
PY
fi

if [ "$what" = go ] || [ "$what" = all ]; then
  echo "interop: Go suite (github.com/apache/rocketmq-client-go/v2)"
  mkdir -p "$work/go"
  if ! (cd "$root" && POPSHIM_BIN="$bin" POPSHIM_WORKDIR="$work/go" \
      go test -count=1 -tags interop -timeout 10m -v -run 'TestGoClient' ./testdata/interop/go/); then
    failed+=(go)
    echo "interop: Go suite failed" >&2
  fi
fi

if [ ${#failed[@]} -gt 0 ]; then
  echo "interop: FAILED (${failed[*]}) after $(( $(date +%s) - start )) s" >&2
  exit 1
fi
echo "interop: done in $(( $(date +%s) - start )) s"

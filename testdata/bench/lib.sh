# Shared helpers of testdata/bench/run.sh and anchor.sh (sourced, not run).
# Every process started through start_bg is recorded in $work/pids and
# killed by cleanup, so no server outlives the script.

# free_port: testdata/ports.sh.
# shellcheck source=../ports.sh
. "$(dirname "${BASH_SOURCE[0]}")/../ports.sh"

# free_port_block N prints a port p such that p-2 … p+N are all free (the
# Java broker also binds listenPort-2 and listenPort+1).
free_port_block() {
  local n=$1 p i ok
  for _ in $(seq 1 50); do
    p=$(( 20002 + RANDOM % 11900 )) # below the ephemeral range, as free_port
    ok=1
    for i in $(seq -2 "$n"); do
      if (exec 3<>"/dev/tcp/127.0.0.1/$((p + i))") 2>/dev/null; then ok=0; break; fi
    done
    [ "$ok" = 1 ] && { echo "$p"; return 0; }
  done
  echo "no free port block" >&2
  return 1
}

# wait_port HOST PORT SECONDS: wait until something accepts on HOST:PORT.
wait_port() {
  local host=$1 port=$2 secs=$3 i
  for i in $(seq 1 $((secs * 10))); do
    if (exec 3<>"/dev/tcp/$host/$port") 2>/dev/null; then return 0; fi
    sleep 0.1
  done
  echo "bench: nothing listens on $host:$port after ${secs}s" >&2
  return 1
}

# start_bg NAME LOG CMD...: start CMD in its own session, log to LOG,
# record its pid as $work/pids/NAME.pid and print the pid.
start_bg() {
  local name=$1 log=$2
  shift 2
  setsid "$@" >"$log" 2>&1 &
  local pid=$!
  echo "$pid" >"$work/pids/$name.pid"
  echo "$pid"
}

# stop_bg NAME [SECONDS]: SIGTERM the process group of NAME, SIGKILL after
# SECONDS (default 30), and forget it.
stop_bg() {
  local name=$1 secs=${2:-30} f="$work/pids/$1.pid" pid i
  [ -e "$f" ] || return 0
  pid=$(cat "$f")
  kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
  for i in $(seq 1 $((secs * 10))); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true
  rm -f "$f"
}

cleanup() {
  local rc=$? f
  for f in "$work"/pids/*.pid; do
    [ -e "$f" ] || continue
    stop_bg "$(basename "$f" .pid)" 10
  done
  if [ "$rc" -ne 0 ] || [ -n "${BENCH_KEEP:-}" ]; then
    echo "bench: work directory kept: $work" >&2
  else
    rm -rf "$work"
  fi
  exit "$rc"
}

# machine_note prints the machine line of the report, with how full the
# disk of the work directory is, and warns when it is over 70 %: Apache
# RocketMQ deletes files forcibly from 75 % (diskMaxUsedSpaceRatio) and
# refuses writes from 90 %, and popshim from --disk-space-warning-level-ratio
# (0.90), so a full disk skews what they cost (2026-12-06: RocketMQ's 1 KiB
# produce took 414.6 µs per message with the disk at 87 %, 19.5 at 24 %).
machine_note() {
  local used
  used=$(df -P "${work:-/tmp}" | awk 'NR == 2 {sub("%", "", $5); print $5}')
  echo "machine: $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')), $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), load average $(cut -d' ' -f1-3 /proc/loadavg), disk ${used}% used"
  if [ "${used:-0}" -gt 70 ]; then
    echo "bench: WARNING: the disk holding ${work:-/tmp} is ${used}% full; brokers clean or refuse writes near full disks (RocketMQ from 75 %), so their figures are not their usual ones" >&2
  fi
}

# bench_settings NAME: the workload settings shared by run.sh and anchor.sh,
# from the BENCH_* environment (defaults as documented in run.sh), and $bin,
# the popshim binary ($POPSHIM_BIN, or built into $work). Needs $root, $work.
bench_settings() {
  out=${BENCH_OUT:-$root/bin/bench}
  mkdir -p "$out"
  out=$(cd "$out" && pwd)
  duration=${BENCH_DURATION:-10s}
  # 16 connections × 128 pipelined ACKs = 2048 in flight: enough to
  # saturate group mode on a 2-vCPU machine (at 16 × 32 its throughput
  # still rose with the window; sync mode is saturated by its 16 workers
  # either way), so the ratio compares capacities, not request windows.
  # 3.6 M receipt handles last ~10 s at ~350 k ACK/s (2.4 M ran out
  # after ~8.5 s once the bench client got cheaper).
  messages=${BENCH_MESSAGES:-3600000}
  conns=${BENCH_CONNS:-16}
  inflight=${BENCH_INFLIGHT:-128}
  rate=${BENCH_RATE:-0}
  burst=${BENCH_CHANGE_BURST:-2000}
  period=${BENCH_CHANGE_PERIOD:-1s}
  rounds=${BENCH_ROUNDS:-3}
  case $rounds in
    '' | *[!0-9]* | 0) echo "$1: BENCH_ROUNDS must be a whole number >= 1, got '$rounds'" >&2; exit 2 ;;
  esac
  if [ -n "${POPSHIM_BIN:-}" ]; then
    bin=$(cd "$(dirname "$POPSHIM_BIN")" && pwd)/$(basename "$POPSHIM_BIN")
  else
    echo "$1: building popshim"
    bin="$work/popshim"
    (cd "$root" && go build -o "$bin" .)
  fi
}

# popshim_reports DIR: the popshim ack reports in DIR, one per line, round
# by round (group then sync): popshim-group.json popshim-sync.json
# popshim-group-r2.json popshim-sync-r2.json … Missing files are skipped.
popshim_reports() {
  local k=1 f mode
  while :; do
    local found=0
    for mode in group sync; do
      f="$1/popshim-$mode.json"
      [ "$k" -gt 1 ] && f="$1/popshim-$mode-r$k.json"
      if [ -e "$f" ]; then echo "$f"; found=1; fi
    done
    [ "$found" = 1 ] || return 0
    k=$((k + 1))
  done
}

# ack_rate REPORT...: the ACK/s (series "ack") of a bench JSON report, whole;
# with several reports (the rounds of one system) their median, so one slow
# round does not set the curve's 100 % point.
ack_rate() {
  python3 -c 'import json,sys,statistics
rates=[next(s["ops_per_sec"] for s in json.load(open(f))["series"] if s["name"]=="ack") for f in sys.argv[1:]]
print(int(statistics.median(rates)))' "$@"
}

# curve_messages RATE DURATION: receipt handles for a paced run of DURATION
# (e.g. 6s) at RATE ACK/s: 30 % spare and the CHANGE pool.
curve_messages() {
  local secs=${2%s}
  echo $(( $1 * secs * 13 / 10 + 2 * burst + 20000 ))
}

# curve_reports DIR: the curve-*.json reports in DIR and, for every label
# among them, its open-loop ack report (popshim-MODE.json from run.sh,
# anchor-LABEL.json from anchor.sh), whose ACK/s is the label's 100 %.
curve_reports() {
  local f label seen=" "
  for f in "$1"/curve-*.json; do
    [ -e "$f" ] || continue
    echo "$f"
    label=$(basename "$f" .json)
    label=${label#curve-}
    label=${label%-*}
    case $seen in *" $label "*) continue ;; esac
    seen="$seen$label "
    for b in "$1/$label.json" "$1/anchor-$label.json"; do
      [ -e "$b" ] && echo "$b"
    done
  done
}

# txn_table DIR BASE: the txn runs of DIR (anchor-txn-*.json) as a Markdown
# table (commits/s, END p50/p99, commit-to-visibility p50/p99, half SEND
# p99, errors), then per label the median ratio of BASE's commits/s to it
# and of its visibility p50 to BASE's, over the rounds both ran.
txn_table() {
  python3 - "$1" "$2" <<'PY'
import glob, json, os, re, statistics, sys
d, base = sys.argv[1], sys.argv[2]
runs = {}
for f in sorted(glob.glob(os.path.join(d, "anchor-txn-*.json"))):
    r = json.load(open(f))
    s = {x["name"]: x for x in r["series"]}
    m = re.search(r"-r(\d+)\.json$", f)
    rnd = r.get("round") or (int(m.group(1)) if m else 1)
    runs.setdefault(r["label"], {})[rnd] = (s, r.get("machine", {}).get("loadavg1", 0))
ms = lambda s, k, p: s[k]["latency_us"][p] / 1000
print("| run | round | txn/s (commits) | END p50 ms | END p99 ms | commit→visible p50 ms | commit→visible p99 ms | half SEND p99 ms | errors | load avg |")
print("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
for label, rs in runs.items():
    for rnd, (s, load) in sorted(rs.items()):
        err = sum(x["errors"] + x["system_busy"] for x in s.values())
        print(f"| {label} | {rnd} | {s['commit']['ops_per_sec']:.0f} | {ms(s,'commit','p50'):.2f} | {ms(s,'commit','p99'):.2f} | "
              f"{ms(s,'visible','p50'):.2f} | {ms(s,'visible','p99'):.2f} | {ms(s,'half','p99'):.2f} | {err} | {load:.1f} |")
if base in runs:
    print()
    print(f"| {base} vs | txn/s ratio (median of rounds) | per round | visible p50: theirs / ours | per round |")
    print("|---|--:|---|--:|---|")
    for label, rs in runs.items():
        if label == base:
            continue
        both = sorted(set(rs) & set(runs[base]))
        tr = [runs[base][k][0]["commit"]["ops_per_sec"] / rs[k][0]["commit"]["ops_per_sec"] for k in both]
        vr = [ms(rs[k][0], "visible", "p50") / ms(runs[base][k][0], "visible", "p50") for k in both]
        if tr:
            print(f"| {label} | {statistics.median(tr):.2f} | {' '.join(f'{x:.2f}' for x in tr)} | {statistics.median(vr):.2f} | {' '.join(f'{x:.2f}' for x in vr)} |")
PY
}

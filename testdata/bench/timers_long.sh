#!/usr/bin/env bash
# `make bench-timers-long`: long timers. One popshim with --timer-max-delay-sec of a year holds
# BENCH_TIMERS timer messages due evenly over BENCH_TIMER_SPREAD (`popshim bench timer --timer-spread`,
# first due an hour after the fill, so none falls due during the run). Measured: the fill rate, the
# data directory's bytes and popshim's resident memory before and after, its CPU while idle with the
# timers pending, the ACK workload's throughput (`popshim bench`, BENCH_ACK_MESSAGES receipt handles,
# no CHANGE bursts) on the empty broker and beside the pending timers, and a restart: SIGTERM until
# exit, then start until the broker port accepts and until the pending count is back. Writes
# $BENCH_OUT/timers-long.md.
#
# Env (defaults in brackets): POPSHIM_BIN, BENCH_OUT [<repo>/bin/bench], BENCH_TIMERS [1000000],
#   BENCH_TIMER_SPREAD [720h], BENCH_ACK_MESSAGES [300000], BENCH_KEEP
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/popshim-timers.XXXXXX")
mkdir -p "$work/pids"
# shellcheck source=lib.sh
. "$here/lib.sh"
trap cleanup EXIT
trap 'exit 130' INT TERM
bench_settings timers-long
timers=${BENCH_TIMERS:-1000000}
spread=${BENCH_TIMER_SPREAD:-720h}
ackmsgs=${BENCH_ACK_MESSAGES:-300000}

rss_mib() { awk '/VmRSS/ {printf "%.0f", $2/1024}' "/proc/$1/status"; }
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
data_mib() { du -sb "$work/data" | awk '{printf "%.0f", $1/1048576}'; }
pending() { curl -fsS "http://127.0.0.1:$mport/metrics" | awk '/^rocketmq_timing_messages[ {]/ {print $NF; exit}'; }
ops() { python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print("%.0f" % r["series"][0]["ops_per_sec"])' "$1"; }

port=$(free_port); nport=$(free_port); mport=$(free_port)
start() {
  pid=$(start_bg popshim "$work/popshim-$1.log" "$bin" serve --listen "127.0.0.1:$port" \
    --namesrv-listen "127.0.0.1:$nport" --metrics-listen "127.0.0.1:$mport" --broker-ip 127.0.0.1 \
    --data-dir "$work/data" --log-level warn --timer-max-delay-sec 31536000)
}
ack_run() {
  "$bin" bench --addr "127.0.0.1:$port" --messages "$ackmsgs" --duration 20s --change-burst 0 \
    --server-pid "$pid" --quiet --json "$work/$1.json" >"$work/$1.out"
  ops "$work/$1.json"
}

machine_note | tee "$out/machine-timers-long.txt"
start 1
wait_port 127.0.0.1 "$port" 30
sleep 1
rss0=$(rss_mib "$pid"); disk0=$(data_mib)
echo "timers-long: ACK workload on the empty broker"
ack0=$(ack_run ack-empty)
echo "timers-long: storing $timers timers due over $spread"
"$bin" bench timer --addr "127.0.0.1:$port" --messages "$timers" --timer-spread "$spread" --create-topic \
  --json "$work/fill.json" | tee "$work/fill.out"
fill=$(python3 -c 'import json,sys; t=json.load(open(sys.argv[1]))["timer"]; print("%.0f/s (%.0f s)" % (t["fill_per_second"], t["send_seconds"]))' "$work/fill.json")
sleep 5
rss1=$(rss_mib "$pid"); disk1=$(data_mib); pend1=$(pending)
c0=$(cpu_ticks "$pid"); sleep 10; c1=$(cpu_ticks "$pid")
idlecpu=$(python3 -c "print('%.1f' % (($c1 - $c0) / $(getconf CLK_TCK) / 10 * 100))")
echo "timers-long: ACK workload beside $pend1 pending timers"
ack1=$(ack_run ack-timers)
rss2=$(rss_mib "$pid")

t0=$(date +%s.%N)
stop_bg popshim 60
t1=$(date +%s.%N)
start 2
wait_port 127.0.0.1 "$port" 120
t2=$(date +%s.%N)
until [ "$(pending 2>/dev/null || true)" = "$pend1" ]; do
  sleep 0.1
  python3 -c "import sys; sys.exit(0 if $(date +%s.%N) - $t2 < 120 else 1)" || { echo "timers-long: pending count not back after restart" >&2; exit 1; }
done
t3=$(date +%s.%N)
sleep 1
rss3=$(rss_mib "$pid"); disk3=$(data_mib)
secs() { python3 -c "print('%.2f' % ($2 - $1))"; }

{
  echo "# Long timers ($(date -u +%Y-%m-%d), $(cd "$root" && git rev-parse --short HEAD 2>/dev/null || echo unknown))"
  echo
  cat "$out/machine-timers-long.txt"
  echo
  echo "$timers timers (body 128 B) due evenly over $spread; ACK workload: $ackmsgs receipt handles, open loop."
  echo
  echo "| | empty broker | $timers timers pending |"
  echo "|---|---|---|"
  echo "| data directory | $disk0 MiB | $disk1 MiB (after restart: $disk3 MiB) |"
  echo "| RSS | $rss0 MiB | $rss1 MiB (after the ACK run: $rss2 MiB; after restart: $rss3 MiB) |"
  echo "| ACK/s | $ack0 | $ack1 |"
  echo "| CPU while idle | | $idlecpu % of a core |"
  echo
  echo "fill: $fill; stop (SIGTERM → exit): $(secs "$t0" "$t1") s; start → port accepts: $(secs "$t1" "$t2") s;"
  echo "→ pending count back ($pend1): $(secs "$t1" "$t3") s."
} | tee "$out/timers-long.md"

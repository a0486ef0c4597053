#!/usr/bin/env bash
# `make bench-timers-long`: long timers. One popshim with --timer-max-delay-sec of a year is filled
# with BENCH_TIMERS timer messages due evenly over BENCH_TIMER_SPREAD (`popshim bench timer
# --timer-spread`, the first due an hour after the fill, so none falls due during the run). Measured:
# the fill rate; the data directory's bytes and popshim's resident memory after the fill, after a
# SIGKILL and start (the WAL replayed) and after a SIGTERM and start; the time from start until the
# broker port accepts and until the pending count is back; popshim's CPU while idle with the timers
# pending; the ACK workload (`popshim bench`, BENCH_ACK_MESSAGES receipt handles, no CHANGE bursts)
# beside the pending timers and, for comparison, on a second, empty popshim. Writes
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
data_mib() { du -sb "$work/$1" | awk '{printf "%.0f", $1/1048576}'; }
pending() { curl -fsS "http://127.0.0.1:$mport/metrics" | awk '/^rocketmq_timing_messages[ {]/ {printf "%d", $NF; exit}'; }
ops() { python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print("%.0f" % r["series"][0]["ops_per_sec"])' "$1"; }
now() { date +%s.%N; }
secs() { python3 -c "print('%.2f' % ($2 - $1))"; }

port=$(free_port); nport=$(free_port); mport=$(free_port)
# start NAME DATA: popshim on the ports above over $work/DATA, pid in $pid.
start() {
  pid=$(start_bg popshim "$work/popshim-$1.log" "$bin" serve --listen "127.0.0.1:$port" \
    --namesrv-listen "127.0.0.1:$nport" --metrics-listen "127.0.0.1:$mport" --broker-ip 127.0.0.1 \
    --data-dir "$work/$2" --log-level warn --timer-max-delay-sec 31536000)
}
# restart_timed NAME: start over data; sets r_port and r_pend, the seconds from the start until the
# broker port accepts and until the pending count is back (no subshell: $pid must reach the caller).
restart_timed() {
  local t0 t1 t2
  t0=$(now)
  start "$1" data
  wait_port 127.0.0.1 "$port" 300
  t1=$(now)
  until [ "$(pending 2>/dev/null || true)" = "$pend" ]; do
    sleep 0.05
    python3 -c "import sys; sys.exit(0 if $(now) - $t0 < 300 else 1)" || { echo "timers-long: pending count not back" >&2; exit 1; }
  done
  t2=$(now)
  r_port=$(secs "$t0" "$t1"); r_pend=$(secs "$t0" "$t2")
}
ack_run() {
  "$bin" bench --addr "127.0.0.1:$port" --messages "$ackmsgs" --duration 20s --change-burst 0 \
    --server-pid "$pid" --quiet --json "$work/$1.json" >"$work/$1.out"
  ops "$work/$1.json"
}

machine_note | tee "$out/machine-timers-long.txt"
start fill data
wait_port 127.0.0.1 "$port" 30
sleep 1
rss0=$(rss_mib "$pid")
echo "timers-long: storing $timers timers due over $spread"
"$bin" bench timer --addr "127.0.0.1:$port" --messages "$timers" --timer-spread "$spread" --create-topic \
  --json "$work/fill.json" | tee "$work/fill.out"
fill=$(python3 -c 'import json,sys; t=json.load(open(sys.argv[1]))["timer"]; print("%.0f/s (%.0f s)" % (t["fill_per_second"], t["send_seconds"]))' "$work/fill.json")
sleep 5
pend=$(pending); rss1=$(rss_mib "$pid"); disk1=$(data_mib data)
c0=$(cpu_ticks "$pid"); sleep 10; c1=$(cpu_ticks "$pid")
idlecpu=$(python3 -c "print('%.1f' % (($c1 - $c0) / $(getconf CLK_TCK) / 10 * 100))")

echo "timers-long: SIGKILL and start ($pend pending)"
kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid"
rm -f "$work/pids/popshim.pid"
while kill -0 "$pid" 2>/dev/null; do sleep 0.05; done
restart_timed crash; crashport=$r_port; crashpend=$r_pend
sleep 1; rss2=$(rss_mib "$pid"); disk2=$(data_mib data)

echo "timers-long: SIGTERM and start"
t0=$(now); stop_bg popshim 120; t1=$(now)
restart_timed term; termport=$r_port; termpend=$r_pend
sleep 1; rss3=$(rss_mib "$pid"); disk3=$(data_mib data)
echo "timers-long: ACK workload beside $pend pending timers"
ack1=$(ack_run ack-timers)
stop_bg popshim 120

echo "timers-long: ACK workload on an empty popshim"
start empty empty
wait_port 127.0.0.1 "$port" 30
ack0=$(ack_run ack-empty)

{
  echo "# Long timers ($(date -u +%Y-%m-%d), $(cd "$root" && git rev-parse --short HEAD 2>/dev/null || echo unknown))"
  echo
  cat "$out/machine-timers-long.txt"
  echo
  echo "$pend timers (body 128 B) due evenly over $spread, stored at $fill; idle CPU with them pending:"
  echo "$idlecpu % of a core."
  echo
  echo "| | data directory | RSS | start → port accepts | → pending count back |"
  echo "|---|---|---|---|---|"
  echo "| empty | | $rss0 MiB | | |"
  echo "| after the fill | $disk1 MiB | $rss1 MiB | | |"
  echo "| SIGKILL, start | $disk2 MiB | $rss2 MiB | $crashport s | $crashpend s |"
  echo "| SIGTERM ($(secs "$t0" "$t1") s), start | $disk3 MiB | $rss3 MiB | $termport s | $termpend s |"
  echo
  echo "ACK workload ($ackmsgs receipt handles, open loop): $ack1 ACK/s beside the timers, $ack0 ACK/s on an empty popshim."
} | tee "$out/timers-long.md"

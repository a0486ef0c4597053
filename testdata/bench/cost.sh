#!/usr/bin/env bash
# `make bench-cost`: what one message costs the server, popshim against
# Apache RocketMQ 5.5.1 out of the box (anchor.sh's `default`: ASYNC_FLUSH,
# revive-topic POP), side by side in one series of interleaved rounds (the
# order of the systems alternates from round to round):
#
#   produce-128, produce-1k, produce-16k   `bench produce` (SEND_MESSAGE_V2,
#                                          random bodies of 128 B, 1 KiB, 16 KiB)
#   pop-ack                                `bench pop` (pop+ack of
#                                          COST_POP_MESSAGES)
#   ack-max                                `bench` open loop: the ACK stream at its
#                                          limit, with the usual CHANGE bursts
#   ack-20k                                `bench --rate COST_ACK_RATE`: ACKs at
#                                          a fixed rate with the usual CHANGE
#                                          bursts, and the disk's 4 KiB
#                                          write+fdatasync probed beside them
#   sustained-1k                           on a fresh broker, `bench produce`
#                                          of 1 KiB for COST_MINUTES minutes
#
# Every run reads the server's CPU time (/proc/<pid>/stat utime+stime) and
# write_bytes (/proc/<pid>/io) from its first request until the server is
# idle again (--settle-after), so the flushes and compactions a run causes
# count in it; the cost is CPU µs per message and, for produce, disk bytes
# per payload byte. The five short workloads share one broker per round
# and the sustained run gets a fresh one; every broker is warmed first by
# an unmeasured 5 s ack run and COST_WARMUP of 1 KiB produce.
# `popshim bench cost` prints the tables into $BENCH_OUT/cost.md.
#
# Env (defaults in brackets): POPSHIM_BIN, BENCH_OUT [bin/bench],
# BENCH_ROUNDS [3], BENCH_CONNS [16], BENCH_KEEP, and
#   COST_POPSHIM ["popshim=$POPSHIM_BIN"]   popshim builds to run, LABEL=PATH
#                                           each (e.g. a before and an after);
#                                           LABEL=PATH@CPUS runs that one under
#                                           `taskset -c CPUS` (Go then sizes
#                                           GOMAXPROCS and the event loops to
#                                           them): scaling with cores, e.g.
#                                           "1cpu=bin/popshim@0 2cpu=bin/popshim@0,1"
#   COST_ANCHOR                             the label the others are divided by
#                                           (default: the RocketMQ run)
#   COST_ROCKETMQ [1]                       0: no RocketMQ runs
#   COST_WORKLOADS [produce-128 produce-1k produce-16k pop-ack ack-20k sustained-1k]
#   COST_DURATION [20s]                     each short workload's measured phase
#   COST_MINUTES [10]                       the sustained run, minutes
#   COST_POP_MESSAGES [300000]
#   COST_ACK_RATE [20000]
#   COST_ACK_MESSAGES [2000000]             receipt handles prepared for ack-max
#   COST_SETTLE_AFTER [60s]                 longest wait for idle after a short run
#   COST_SUSTAINED_SETTLE [120s]            the same after the sustained run
#   COST_WARMUP [10s]                       produce before the sustained run
#   COST_SERVE_ARGS                         extra `popshim serve` flags
#   COST_PPROF [0]                          1: popshim serves pprof and each
#                                           short popshim run leaves a CPU
#                                           profile of its measured phase,
#                                           cost-W-LABEL-rR.pprof
#   ANCHOR_CACHE, ANCHOR_HEAP               as anchor.sh (rocketmq.sh)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/popshim-cost.XXXXXX")
mkdir -p "$work/pids"
# shellcheck source=lib.sh
. "$here/lib.sh"
trap cleanup EXIT
trap 'exit 130' INT TERM

bench_settings cost
workloads=${COST_WORKLOADS:-produce-128 produce-1k produce-16k pop-ack ack-20k sustained-1k}
short_dur=${COST_DURATION:-20s}
minutes=${COST_MINUTES:-10}
pop_messages=${COST_POP_MESSAGES:-300000}
ack_rate=${COST_ACK_RATE:-20000}
ack_messages=${COST_ACK_MESSAGES:-2000000}
settle_after=${COST_SETTLE_AFTER:-60s}
sustained_settle=${COST_SUSTAINED_SETTLE:-120s}
warmup=${COST_WARMUP:-10s}
popshims=${COST_POPSHIM:-popshim=$bin}
targets=""
for p in $popshims; do
  label=${p%%=*} path=${p#*=} path=${path%@*}
  [ -x "$path" ] || { echo "cost: $label: $path is not an executable" >&2; exit 2; }
  targets="$targets $label"
done
if [ "${COST_ROCKETMQ:-1}" = 1 ]; then
  # shellcheck source=rocketmq.sh
  . "$here/rocketmq.sh"
  rmq_setup
  targets="$targets rocketmq-$version-default"
fi
rm -f "$out"/cost-*.json "$out"/cost.md

# popshim_path LABEL: the binary of a popshim target ("" for RocketMQ).
popshim_path() {
  local p
  for p in $popshims; do
    [ "${p%%=*}" = "$1" ] && { p=${p#*=}; echo "${p%@*}"; return; }
  done
  echo ""
}

# popshim_cpus LABEL: the CPU list of a LABEL=PATH@CPUS target, else "".
popshim_cpus() {
  local p
  for p in $popshims; do
    if [ "${p%%=*}" = "$1" ] && [ "${p#*@}" != "$p" ]; then echo "${p##*@}"; return; fi
  done
  echo ""
}

# start_target LABEL: a fresh broker on a fresh data directory; sets addr,
# bname and spid.
start_target() {
  local path
  path=$(popshim_path "$1")
  if [ -z "$path" ]; then
    rmq_start default
    warm_up
    return
  fi
  local port mport
  port=$(free_port); mport=$(free_port)
  rm -rf "$work/popshim"; mkdir -p "$work/popshim"
  local extra=() pin=() cpus
  [ "${COST_PPROF:-0}" = 1 ] && extra=(--pprof)
  cpus=$(popshim_cpus "$1")
  [ -n "$cpus" ] && pin=(taskset -c "$cpus")
  # shellcheck disable=SC2086
  spid=$(start_bg popshim "$work/popshim/popshim.log" "${pin[@]}" "$path" serve --listen "127.0.0.1:$port" \
    --namesrv-listen "" --grpc-listen= --metrics-listen "127.0.0.1:$mport" --broker-ip 127.0.0.1 \
    --data-dir "$work/popshim/data" --log-level warn "${extra[@]}" ${COST_SERVE_ARGS:-})
  wait_port 127.0.0.1 "$port" 30
  addr=127.0.0.1:$port bname=popshim-a murl=http://127.0.0.1:$mport
  warm_up
}

# warm_up: unmeasured runs on a fresh broker (a JVM compiles its SEND and
# POP/ACK paths; popshim gets the same), then a pause.
warm_up() {
  "$bin" bench --addr "$addr" --broker-name "$bname" --duration 5s --messages 200000 \
    --conns "$conns" --inflight 32 --settle-max 0 --quiet >/dev/null 2>&1 || true
  "$bin" bench produce --addr "$addr" --broker-name "$bname" --conns "$conns" --random-body --body-size 1024 \
    --duration "$warmup" --quiet >/dev/null 2>&1 || true
  wait_idle "$spid" 120
}

# wait_idle PID SECONDS: wait until PID used less than 10 % of a core over
# a second (the flushes and compactions of the warm-up are done), at most
# SECONDS, so the first measured run is not charged with them.
wait_idle() {
  local t0 t1 i
  t0=$(awk '{print $14 + $15}' "/proc/$1/stat")
  for i in $(seq 1 "$2"); do
    sleep 1
    t1=$(awk '{print $14 + $15}' "/proc/$1/stat")
    [ $(( (t1 - t0) * 100 / $(getconf CLK_TCK) )) -lt 10 ] && return 0
    t0=$t1
  done
  echo "cost: pid $1 still busy after ${2}s; measuring anyway" >&2
}

stop_target() {
  if [ -z "$(popshim_path "$1")" ]; then rmq_stop; else stop_bg popshim; fi
}

# run_workload LABEL ROUND W: one measured run of workload W.
run_workload() {
  local label=$1 round=$2 w=$3 f rc=()
  f="$out/cost-$w-$label-r$round.json"
  local common=(--addr "$addr" --broker-name "$bname" --conns "$conns" --server-pid "$spid" --label "$label"
    --round "$round" --workload "$w" --settle-after "$settle_after" --fsync-probe-dir "$work" --json "$f" --quiet)
  echo "cost: round $round: $label: $w ($(cut -d' ' -f1 /proc/loadavg) load)"
  if [ "${COST_PPROF:-0}" = 1 ] && [ -n "$(popshim_path "$label")" ] && [ "$w" != sustained-1k ]; then
    common+=(--metrics-url "$murl/metrics" --cpu-profile "$out/cost-$w-$label-r$round.pprof")
  fi
  case $w in
    produce-128) "$bin" bench produce "${common[@]}" --random-body --body-size 128 --duration "$short_dur" ;;
    produce-1k) "$bin" bench produce "${common[@]}" --random-body --body-size 1024 --duration "$short_dur" ;;
    produce-16k) "$bin" bench produce "${common[@]}" --random-body --body-size 16384 --duration "$short_dur" ;;
    pop-ack) "$bin" bench pop "${common[@]}" --messages "$pop_messages" --duration "$short_dur" --settle-max 90s ;;
    ack-max)
      "$bin" bench "${common[@]}" --messages "$ack_messages" \
        --inflight 128 --change-burst "$burst" --change-period "$period" --duration "$short_dur" --settle-max 90s ;;
    ack-20k)
      "$bin" bench "${common[@]}" --rate "$ack_rate" --messages "$(curve_messages "$ack_rate" "$short_dur")" \
        --inflight 128 --change-burst "$burst" --change-period "$period" --duration "$short_dur" --settle-max 90s ;;
    sustained-1k)
      "$bin" bench produce "${common[@]}" --random-body --body-size 1024 --duration "${minutes}m" \
        --settle-after "$sustained_settle" ;;
    *) echo "cost: unknown workload $w" >&2; exit 2 ;;
  esac | grep -E '^(server cost|disk during)' || rc=("${PIPESTATUS[@]}")
  # A bench that SIGINT or SIGTERM ended exits 130: stop here rather than
  # go on to the next run and tabulate the interrupted one.
  if [ "${rc[0]:-0}" = 130 ]; then rm -f "$f"; exit 130; fi
}

machine_note | tee "$out/machine-cost.txt"
short=() sustained=""
for w in $workloads; do
  if [ "$w" = sustained-1k ]; then sustained=1; else short+=("$w"); fi
done
for round in $(seq 1 "$rounds"); do
  order=$targets
  if [ $((round % 2)) = 0 ]; then order=$(echo "$targets" | tr ' ' '\n' | tac | tr '\n' ' '); fi
  for t in $order; do
    if [ "${#short[@]}" -gt 0 ]; then
      start_target "$t"
      for w in "${short[@]}"; do run_workload "$t" "$round" "$w"; done
      stop_target "$t"
    fi
    if [ -n "$sustained" ]; then
      start_target "$t"
      run_workload "$t" "$round" sustained-1k
      if [ -n "$(popshim_path "$t")" ]; then d=$work/popshim/data; else d=$home/store; fi
      du -sb "$d" | sed "s/^/cost: $t data: /"
      stop_target "$t"
      # A 10-minute 1 KiB run leaves ~30 GB: free it before the next system
      # runs (it would otherwise count against that system's disk-space
      # checks: popshim refuses SENDs above --disk-space-warning-level-ratio,
      # RocketMQ deletes commit-log files above diskMaxUsedSpaceRatio).
      [ -n "${BENCH_KEEP:-}" ] || rm -rf "$d"
    fi
  done
done
[ -n "${home:-}" ] && stop_bg namesrv 30
reports=()
for w in $workloads; do
  for f in "$out"/cost-"$w"-*.json; do [ -e "$f" ] && reports+=("$f"); done
done
"$bin" bench cost --anchor "${COST_ANCHOR:-}" "${reports[@]}" | tee "$out/cost.md"
echo "cost: results in $out (cost.md, cost-*.json)"

#!/usr/bin/env bash
# `make bench-anchor`: the ACK/CHANGE workload of run.sh and the full cycle
# (`bench pop`: pop+ack; `bench produce`) against Apache RocketMQ 5.5.1 in
# three configurations and popshim (group mode), interleaved round by round
# so every system sees the same (shared, noisy) machine:
#
#   kv        POP on the RocksDB KV path (popConsumerKVServiceInit=true,
#             popConsumerKVServiceEnable=true, enablePopBufferMerge=false),
#             flushDiskType ASYNC_FLUSH (the default): the anchor until now
#   default   the out-of-the-box broker: default POP path (checkpoints in the
#             revive topic, buffer merge on), ASYNC_FLUSH
#   syncflush the default POP path with flushDiskType=SYNC_FLUSH
#
# popshim fsyncs before every success reply; RocketMQ in kv and default does
# not. Every broker start is followed by an unmeasured warm-up run (JIT) of
# the ack workload. Each configuration's broker.conf is copied to
# $BENCH_OUT/rocketmq-CONFIG.conf. Nothing of RocketMQ is committed: the
# jars come from Maven Central into $ANCHOR_CACHE on first use.
#
# Artifacts: org.apache.rocketmq:rocketmq-broker:5.5.1 with its runtime
# dependencies, and rocketmq-namesrv. When a module of 5.5.1 cannot be
# resolved (some mirrors carry only part of the release), the modules that
# are missing are taken at 5.5.0 (the broker, store, remoting, common and
# tiered-store jars stay 5.5.1); the script prints which jars it runs.
#
# Per round and system: ack (label rocketmq-5.5.1-CONFIG or popshim-group,
# JSON anchor-LABEL[-rK].json), pop (anchor-pop-LABEL[-rK].json), produce
# (anchor-produce-LABEL[-rK].json) and, when ANCHOR_WORKLOADS names it, txn
# (`bench txn`: half SEND + END_TRANSACTION commit, and commit-to-PULL
# visibility; anchor-txn-LABEL[-rK].json, its table in txn-anchor.md);
# bench compare of each workload goes to compare-anchor.md. With BENCH_CURVE, round 1 of ANCHOR_CURVE_CONFIG also
# runs the latency-against-load points (curve-LABEL-PCT.json), which
# run.sh's curve plot picks up when both write to the same BENCH_OUT.
#
# Env (defaults in brackets): as run.sh (POPSHIM_BIN, BENCH_OUT, BENCH_DURATION,
# BENCH_MESSAGES, BENCH_CONNS, BENCH_INFLIGHT, BENCH_RATE, BENCH_CHANGE_BURST,
# BENCH_CHANGE_PERIOD, BENCH_ROUNDS, BENCH_ARGS, BENCH_KEEP, BENCH_CURVE,
# BENCH_CURVE_DURATION) and
#   ANCHOR_CONFIGS [kv default syncflush]      RocketMQ configurations, in order
#   ANCHOR_WORKLOADS [ack pop produce]         workloads of each round: ack, pop, produce, txn
#   ANCHOR_TXN_INFLIGHT [8]                    txn: transactions in flight per connection
#   ANCHOR_CURVE_CONFIG [default]             the configuration of the curve points
#   ANCHOR_POPSHIM [1]                         0: no popshim runs in the series
#   ANCHOR_CYCLE_MESSAGES [300000]             messages of each pop / produce run
#   ANCHOR_WARMUP [5s]                         warm-up run length (0: none)
#   ANCHOR_CACHE   [~/.cache/popshim-anchor]   jar cache (outside the repo)
#   ANCHOR_HEAP    [1g]                        broker -Xms/-Xmx (namesrv: 256m)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/popshim-anchor.XXXXXX")
mkdir -p "$work/pids"
# shellcheck source=lib.sh
. "$here/lib.sh"
trap cleanup EXIT
trap 'exit 130' INT TERM

bench_settings anchor
# shellcheck source=rocketmq.sh
. "$here/rocketmq.sh"
rmq_setup
configs=${ANCHOR_CONFIGS:-kv default syncflush}
cycle=${ANCHOR_CYCLE_MESSAGES:-300000}
warmup=${ANCHOR_WARMUP:-5s}
curve=${BENCH_CURVE-10 25 50 75 100}
curve_duration=${BENCH_CURVE_DURATION:-6s}
rm -f "$out"/anchor-*.json "$out"/curve-rocketmq-*.json "$out"/compare-anchor.md "$out"/txn-anchor.md
# start_target TARGET: a fresh broker (a RocketMQ configuration, or
# popshim-group); sets addr, bname, spid and murl.
start_target() {
  local t=$1
  if [ "$t" = popshim-group ]; then
    local port nport mport
    port=$(free_port); nport=$(free_port); mport=$(free_port)
    rm -rf "$work/popshim"; mkdir -p "$work/popshim"
    spid=$(start_bg popshim "$work/popshim/popshim.log" "$bin" serve --grpc-listen= --pop-write-mode=group \
      --listen "127.0.0.1:$port" --namesrv-listen "127.0.0.1:$nport" --metrics-listen "127.0.0.1:$mport" \
      --broker-ip 127.0.0.1 --data-dir "$work/popshim/data" --log-level warn)
    wait_port 127.0.0.1 "$port" 30
    wait_port 127.0.0.1 "$mport" 30
    addr=127.0.0.1:$port bname=popshim-a murl=http://127.0.0.1:$mport/metrics
    return
  fi
  rmq_start "$t"
}

stop_target() {
  if [ "$1" = popshim-group ]; then stop_bg popshim; else rmq_stop; fi
}

workloads=" ${ANCHOR_WORKLOADS:-ack pop produce} "
txn_inflight=${ANCHOR_TXN_INFLIGHT:-8}
# runs W: whether workload W is in ANCHOR_WORKLOADS.
runs() { case $workloads in *" $1 "*) return 0 ;; esac; return 1; }

# warm_up: an unmeasured run (ack, or txn when ack is not run) against a
# freshly started JVM.
warm_up() {
  [ "$warmup" != 0 ] || return 0
  if ! runs ack && runs txn; then
    "$bin" bench txn --addr "$addr" --broker-name "$bname" --duration "$warmup" --messages 200000 \
      --conns "$conns" --inflight "$txn_inflight" --quiet >/dev/null 2>&1 || true
    return 0
  fi
  "$bin" bench --addr "$addr" --broker-name "$bname" --duration "$warmup" --messages 200000 \
    --conns "$conns" --inflight "$inflight" --change-burst "$burst" --settle-max 0 --quiet >/dev/null 2>&1 || true
}

targets=""
[ "${ANCHOR_POPSHIM:-1}" = 1 ] && targets="popshim-group"
for c in $configs; do targets="$targets $c"; done
machine_note | tee "$out/machine-anchor.txt"
curve_cfg=${ANCHOR_CURVE_CONFIG:-default}
for round in $(seq 1 "$rounds"); do
for t in $targets; do
  label=$t
  [ "$t" = popshim-group ] || label="rocketmq-$version-$t"
  sfx=""
  [ "$round" -gt 1 ] && sfx="-r$round"
  start_target "$t"
  m=()
  [ -n "$murl" ] && m=(--metrics-url "$murl")
  if [ "$t" != popshim-group ]; then
    echo "anchor: round $round: $label: warm-up ($warmup, not measured)"
    warm_up
  fi
  if runs ack; then
    echo "anchor: round $round/$rounds: $label: ack"
    # shellcheck disable=SC2086
    "$bin" bench --addr "$addr" --broker-name "$bname" --duration "$duration" --messages "$messages" \
      --conns "$conns" --inflight "$inflight" --rate "$rate" --change-burst "$burst" --change-period "$period" \
      --server-pid "$spid" "${m[@]}" --label "$label" --round "$round" --json "$out/anchor-$label$sfx.json" --quiet ${BENCH_ARGS:-}
  fi
  if runs pop; then
    echo "anchor: round $round/$rounds: $label: pop"
    "$bin" bench pop --addr "$addr" --broker-name "$bname" --duration "$duration" --messages "$cycle" \
      --conns "$conns" --server-pid "$spid" "${m[@]}" --label "$label" --round "$round" \
      --json "$out/anchor-pop-$label$sfx.json" --quiet
  fi
  if runs produce; then
    echo "anchor: round $round/$rounds: $label: produce"
    "$bin" bench produce --addr "$addr" --broker-name "$bname" --duration "$duration" --messages "$cycle" \
      --conns "$conns" --server-pid "$spid" "${m[@]}" --label "$label" --round "$round" \
      --json "$out/anchor-produce-$label$sfx.json" --quiet
  fi
  if runs txn; then
    echo "anchor: round $round/$rounds: $label: txn"
    "$bin" bench txn --addr "$addr" --broker-name "$bname" --duration "$duration" --messages "$cycle" \
      --conns "$conns" --inflight "$txn_inflight" --server-pid "$spid" "${m[@]}" --label "$label" --round "$round" \
      --json "$out/anchor-txn-$label$sfx.json" --quiet
  fi
  stop_target "$t"
  if runs ack && [ "$round" = 1 ] && [ "$t" = "$curve_cfg" ] && [ -n "$curve" ]; then
    max=$(ack_rate "$out/anchor-$label.json")
    for pct in $curve; do
      r=$(( max * pct / 100 ))
      [ "$r" -ge 1 ] || continue
      start_target "$t"
      warm_up
      echo "anchor: curve: $label at $pct % of $max ACK/s = $r ACK/s"
      # shellcheck disable=SC2086
      "$bin" bench --addr "$addr" --broker-name "$bname" --duration "$curve_duration" \
        --messages "$(curve_messages "$r" "$curve_duration")" --conns "$conns" --inflight "$inflight" --rate "$r" \
        --change-burst "$burst" --change-period "$period" --server-pid "$spid" --label "$label" \
        --json "$out/curve-$label-$pct.json" --quiet ${BENCH_ARGS:-}
      stop_target "$t"
    done
  fi
done
done
stop_bg namesrv 30

: >"$out/compare-anchor.md"
for w in $workloads; do
  pre="anchor-"
  [ "$w" = ack ] || pre="anchor-$w-"
  reports=()
  for t in $targets; do
    label=$t
    [ "$t" = popshim-group ] || label="rocketmq-$version-$t"
    for f in "$out/$pre$label.json" "$out/$pre$label"-r*.json; do
      [ -e "$f" ] && reports+=("$f")
    done
  done
  [ "${#reports[@]}" -gt 0 ] || continue
  echo "## $w" | tee -a "$out/compare-anchor.md"
  "$bin" bench compare "${reports[@]}" | tee -a "$out/compare-anchor.md"
done
if runs txn; then
  txn_table "$out" "popshim-group" | tee "$out/txn-anchor.md"
fi
curves=()
while read -r f; do curves+=("$f"); done < <(curve_reports "$out")
if [ "${#curves[@]}" -gt 0 ]; then
  "$bin" bench curve -o "$out/curve.svg" "${curves[@]}" | tee "$out/curve.md"
fi
echo "anchor: results in $out (compare-anchor.md, curve.md, *.json, rocketmq-*.conf)"

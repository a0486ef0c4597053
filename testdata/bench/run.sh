#!/usr/bin/env bash
# `make bench`: the ACK/CHANGE workload against popshim --pop-write-mode=group
# and --pop-write-mode=sync, one after the other on this machine, plus the
# two physical limits, then the side-by-side ratio table.
#
#   1. raw storage limit:  popshim bench raw-storage (synced RocksDB WriteBatches,
#                          single synced writes, 4 KiB write+fdatasync latency)
#   2. BENCH_ROUNDS times, for mode in group sync: a fresh popshim on free
#                          loopback ports and a fresh data dir; popshim bench
#                          (prepare, then ACK stream with CHANGE bursts); in the
#                          first round's group mode also popshim bench heartbeat
#                          (the network limit); stop it. Group and sync alternate,
#                          so both see the same (shared, noisy) machine.
#   3. latency against load (BENCH_CURVE): for mode in group sync, a fresh
#                          popshim per point, the ACK stream paced at each
#                          percentage of that mode's median ACK/s over the rounds (the
#                          100 % point paced at it too), CHANGE bursts as above
#   4. popshim bench compare → $out/compare.md (every run, the medians over the
#                          rounds, their ratios and the per-round ratios);
#                          popshim bench plot → $out/latency.svg (first round);
#                          popshim bench curve → $out/curve.svg and curve.md
#                          (with anchor.sh's curve-rocketmq-*.json when present)
#
# Env (defaults in brackets):
#   POPSHIM_BIN            popshim binary [built into the work dir]
#   BENCH_OUT              result directory [<repo>/bin/bench]
#   BENCH_DURATION [10s]   BENCH_MESSAGES [3600000]   BENCH_CONNS [16]   BENCH_INFLIGHT [128]
#   BENCH_RATE [0 = max]   BENCH_CHANGE_BURST [2000] BENCH_CHANGE_PERIOD [1s]
#   BENCH_ROUNDS [3]       group/sync pairs; round 1 writes popshim-MODE.json,
#                          round k>1 popshim-MODE-rK.json
#   BENCH_ARGS             extra flags for every `popshim bench` ack run
#   BENCH_SERVE_ARGS       extra flags for every `popshim serve`
#   BENCH_CURVE ["10 25 50 75 100"]  load points, % of max; empty: no curve
#   BENCH_CURVE_DURATION [6s]        measured phase of each curve point
#   BENCH_KEEP=1           keep the work directory (server logs, data)
# The results (JSON, SVG, compare.md) are in $BENCH_OUT; anchor.sh adds the
# Apache RocketMQ run to the same directory and table.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/popshim-bench.XXXXXX")
mkdir -p "$work/pids"
# shellcheck source=lib.sh
. "$here/lib.sh"
trap cleanup EXIT
trap 'exit 130' INT TERM

bench_settings bench
# Results of an earlier run (more rounds, or one that failed) must not join
# this comparison.
rm -f "$out"/popshim-group*.json "$out"/popshim-sync*.json "$out"/popshim-group*.svg "$out"/popshim-sync*.svg \
  "$out/heartbeat.json" "$out/raw-storage.json" "$out/compare.md" "$out/latency.svg" "$out"/curve-popshim-*.json
curve=${BENCH_CURVE-10 25 50 75 100}
curve_duration=${BENCH_CURVE_DURATION:-6s}

machine_note | tee "$out/machine.txt"
common=(--duration "$duration" --messages "$messages" --conns "$conns" --inflight "$inflight" --rate "$rate"
  --change-burst "$burst" --change-period "$period")

echo "bench: raw storage limit (data dir on the same disk as the servers')"
"$bin" bench raw-storage --data-dir "$work" --duration 5s --json "$out/raw-storage.json" --label storage-limit

# start_popshim MODE: a fresh popshim --pop-write-mode=MODE on free loopback
# ports with a fresh data dir; sets pid, port and mport.
start_popshim() {
  local mode=$1 nport
  port=$(free_port); nport=$(free_port); mport=$(free_port)
  rm -rf "$work/$mode"
  mkdir -p "$work/$mode"
  # shellcheck disable=SC2086
  pid=$(start_bg "popshim-$mode" "$work/$mode/popshim.log" "$bin" serve --grpc-listen= --pop-write-mode="$mode" \
    --listen "127.0.0.1:$port" --namesrv-listen "127.0.0.1:$nport" --metrics-listen "127.0.0.1:$mport" \
    --broker-ip 127.0.0.1 --data-dir "$work/$mode/data" --log-level warn ${BENCH_SERVE_ARGS:-})
  wait_port 127.0.0.1 "$port" 30
  wait_port 127.0.0.1 "$mport" 30
}

for round in $(seq 1 "$rounds"); do
for mode in group sync; do
  name="popshim-$mode"
  [ "$round" -gt 1 ] && name="popshim-$mode-r$round"
  start_popshim "$mode"
  echo "bench: round $round/$rounds: popshim --pop-write-mode=$mode (pid $pid) on 127.0.0.1:$port"
  # shellcheck disable=SC2086
  "$bin" bench --addr "127.0.0.1:$port" --broker-name popshim-a "${common[@]}" \
    --metrics-url "http://127.0.0.1:$mport/metrics" --server-pid "$pid" \
    --label "popshim-$mode" --round "$round" --json "$out/$name.json" --plot "$out/$name.svg" ${BENCH_ARGS:-}
  if [ "$mode" = group ] && [ "$round" = 1 ]; then
    echo "bench: network limit: HEART_BEAT round trips through popshim"
    "$bin" bench heartbeat --addr "127.0.0.1:$port" --duration 5s --conns "$conns" --inflight "$inflight" \
      --metrics-url "http://127.0.0.1:$mport/metrics" --server-pid "$pid" \
      --label network-limit --json "$out/heartbeat.json" --quiet
  fi
  stop_bg "popshim-$mode"
done
done

for pct in $curve; do
for mode in group sync; do
  max=$(ack_rate "$out/popshim-$mode.json" "$out"/popshim-"$mode"-r*.json)
  r=$(( max * pct / 100 ))
  [ "$r" -ge 1 ] || continue
  start_popshim "$mode"
  echo "bench: curve: popshim --pop-write-mode=$mode at $pct % of $max ACK/s = $r ACK/s"
  # shellcheck disable=SC2086
  "$bin" bench --addr "127.0.0.1:$port" --broker-name popshim-a --duration "$curve_duration" \
    --messages "$(curve_messages "$r" "$curve_duration")" --conns "$conns" --inflight "$inflight" --rate "$r" \
    --change-burst "$burst" --change-period "$period" --metrics-url "http://127.0.0.1:$mport/metrics" --server-pid "$pid" \
    --label "popshim-$mode" --json "$out/curve-popshim-$mode-$pct.json" --quiet ${BENCH_ARGS:-}
  stop_bg "popshim-$mode"
done
done

reports=()
while read -r f; do reports+=("$f"); done < <(popshim_reports "$out")
[ -e "$out/rocketmq-5.5.1.json" ] && reports+=("$out/rocketmq-5.5.1.json")
"$bin" bench compare "${reports[@]}" "$out/raw-storage.json" "$out/heartbeat.json" | tee "$out/compare.md"
plots=("$out/popshim-group.json" "$out/popshim-sync.json")
[ -e "$out/rocketmq-5.5.1.json" ] && plots+=("$out/rocketmq-5.5.1.json")
"$bin" bench plot -o "$out/latency.svg" "${plots[@]}"
curves=()
while read -r f; do curves+=("$f"); done < <(curve_reports "$out")
if [ "${#curves[@]}" -gt 0 ]; then
  "$bin" bench curve -o "$out/curve.svg" "${curves[@]}" | tee "$out/curve.md"
fi
echo "bench: results in $out (compare.md, *.json, *.svg)"

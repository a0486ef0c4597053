#!/usr/bin/env bash
# `make bench-tls`: the ACK/CHANGE workload over plaintext and over TLS
# against one popshim in --tls-mode=permissive (both kinds of client on one
# port), interleaved in one run, then the side-by-side ratio table.
#
#   1. a self-signed test certificate (openssl, EC P-256) in the work dir;
#      one popshim --tls-cert/--tls-key on free loopback ports
#   2. BENCH_ROUNDS times, for kind in plain tls (tls first in even rounds):
#      popshim bench --label popshim-KIND [--tls] (prepare its own topic,
#      then ACK stream with CHANGE bursts), then popshim bench heartbeat
#      --label heartbeat-KIND (HEART_BEAT round trips: the per-request
#      network cost without storage)
#   3. popshim bench compare of the ack runs → $out/tls-compare.md, and of
#      the heartbeat runs → $out/tls-heartbeat.md
#
# Env: as run.sh (BENCH_OUT, BENCH_DURATION, BENCH_MESSAGES, BENCH_CONNS,
# BENCH_INFLIGHT, BENCH_RATE, BENCH_CHANGE_BURST, BENCH_CHANGE_PERIOD,
# BENCH_ROUNDS, BENCH_ARGS, BENCH_SERVE_ARGS, BENCH_KEEP, POPSHIM_BIN).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/popshim-bench-tls.XXXXXX")
mkdir -p "$work/pids"
# shellcheck source=lib.sh
. "$here/lib.sh"
trap cleanup EXIT
trap 'exit 130' INT TERM

bench_settings bench-tls
rm -f "$out"/tls-*.json "$out/tls-compare.md" "$out/tls-heartbeat.md"

machine_note | tee "$out/tls-machine.txt"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
  -subj /CN=popshim-bench -addext subjectAltName=IP:127.0.0.1 \
  -keyout "$work/key.pem" -out "$work/cert.pem" 2>/dev/null

# --idle-timeout 0: a bench run's connections that only produced sit idle through the pops and the
# settle wait, which on a loaded machine took longer than the default 120 s idle timeout (the server
# then closed 8 of 16 connections before the measured phase began).
port=$(free_port); nport=$(free_port); mport=$(free_port)
# shellcheck disable=SC2086
pid=$(start_bg popshim-tls "$work/popshim.log" "$bin" serve --grpc-listen= --tls-cert "$work/cert.pem" --tls-key "$work/key.pem" \
  --tls-mode permissive --listen "127.0.0.1:$port" --namesrv-listen "127.0.0.1:$nport" \
  --metrics-listen "127.0.0.1:$mport" --broker-ip 127.0.0.1 --data-dir "$work/data" --log-level warn \
  --idle-timeout 0 ${BENCH_SERVE_ARGS:-})
wait_port 127.0.0.1 "$port" 30
wait_port 127.0.0.1 "$mport" 30
echo "bench-tls: popshim --tls-mode=permissive (pid $pid) on 127.0.0.1:$port"

common=(--addr "127.0.0.1:$port" --broker-name popshim-a --metrics-url "http://127.0.0.1:$mport/metrics" --server-pid "$pid")
acks=() beats=()
for round in $(seq 1 "$rounds"); do
  kinds="plain tls"
  [ $((round % 2)) = 0 ] && kinds="tls plain"
  for kind in $kinds; do
    flag=()
    [ "$kind" = tls ] && flag=(--tls)
    echo "bench-tls: round $round/$rounds: $kind"
    # shellcheck disable=SC2086
    "$bin" bench "${common[@]}" "${flag[@]}" --duration "$duration" --messages "$messages" --conns "$conns" \
      --inflight "$inflight" --rate "$rate" --change-burst "$burst" --change-period "$period" \
      --label "popshim-$kind" --round "$round" --json "$out/tls-ack-$kind-r$round.json" --quiet ${BENCH_ARGS:-}
    acks+=("$out/tls-ack-$kind-r$round.json")
    "$bin" bench heartbeat "${common[@]}" "${flag[@]}" --duration 5s --conns "$conns" --inflight "$inflight" \
      --settle-max 0 --label "heartbeat-$kind" --round "$round" --json "$out/tls-heartbeat-$kind-r$round.json" --quiet
    beats+=("$out/tls-heartbeat-$kind-r$round.json")
  done
done
stop_bg popshim-tls

"$bin" bench compare "${acks[@]}" | tee "$out/tls-compare.md"
"$bin" bench compare "${beats[@]}" | tee "$out/tls-heartbeat.md"
echo "bench-tls: results in $out (tls-compare.md, tls-heartbeat.md, tls-*.json)"

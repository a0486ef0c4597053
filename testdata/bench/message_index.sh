#!/usr/bin/env bash
# Cost of the key index on the SEND path: ROUNDS (default 5) rounds, each running `popshim bench produce`
# against a fresh popshim with --message-index-enable=true and then =false (the order alternates per round),
# same machine, same workload (SEND_MESSAGE_V2, 128-byte bodies, UNIQ_KEY plus KEYS=2 keys, i.e. three index
# entries per message). Prints one line per run and the per-round on/off ratios of SEND/s, p50, p99 and
# server CPU per SEND.
#
# Usage: testdata/bench/message_index.sh [OUTDIR]   env: POPSHIM_BIN (default bin/popshim), ROUNDS, DURATION
# (default 10s), CONNS (4), INFLIGHT (32), KEYS (2), RATE (0 = open loop)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
bin=${POPSHIM_BIN:-$here/../../bin/popshim}
out=${1:-$(mktemp -d "${TMPDIR:-/tmp}/msgindex.XXXXXX")}
mkdir -p "$out"
rounds=${ROUNDS:-5}
# shellcheck source=lib.sh
. "$here/lib.sh" # free_port
run() { # run ROUND MODE(true|false)
  local r=$1 mode=$2 bp mp dir pid
  bp=$(free_port); mp=$(free_port); dir=$out/data-$r-$mode
  "$bin" serve --grpc-listen= --listen "127.0.0.1:$bp" --namesrv-listen "" --metrics-listen "127.0.0.1:$mp" --broker-ip 127.0.0.1 \
    --data-dir "$dir" --message-index-enable="$mode" --log-level warn >"$out/serve-$r-$mode.log" 2>&1 &
  pid=$!
  for _ in $(seq 1 100); do (exec 3<>"/dev/tcp/127.0.0.1/$bp") 2>/dev/null && break; sleep 0.1; done
  "$bin" bench produce --addr "127.0.0.1:$bp" --create-topic --duration "${DURATION:-10s}" --conns "${CONNS:-4}" \
    --inflight "${INFLIGHT:-32}" --keys "${KEYS:-2}" --rate "${RATE:-0}" --quiet --server-pid "$pid" \
    --label "index-$mode" --round "$r" --json "$out/produce-$r-$mode.json" >"$out/bench-$r-$mode.txt" 2>&1
  kill "$pid"; wait "$pid" || true
  rm -rf "$dir"
}
for r in $(seq 1 "$rounds"); do
  if [ $((r % 2)) = 1 ]; then run "$r" true; run "$r" false; else run "$r" false; run "$r" true; fi
done
python3 - "$out" "$rounds" <<'PY'
import json, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
def load(r, m):
    d = json.load(open(f"{out}/produce-{r}-{m}.json"))
    s = d["series"][0]
    return {"ops": s["ops_per_sec"], "p50": s["latency_us"]["p50"] / 1000, "p99": s["latency_us"]["p99"] / 1000,
            "cpu_us": d["server_cpu"]["seconds"] * 1e6 / max(s["ok"], 1)}
print("round  index  SEND/s   p50 ms  p99 ms  server CPU µs/SEND")
ratios = {k: [] for k in ("ops", "p50", "p99", "cpu_us")}
for r in range(1, rounds + 1):
    on, off = load(r, "true"), load(r, "false")
    for m, v in (("on", on), ("off", off)):
        print(f"{r:5d}  {m:5s}  {v['ops']:7.0f}  {v['p50']:6.2f}  {v['p99']:6.2f}  {v['cpu_us']:8.1f}")
    for k in ratios:
        ratios[k].append(on[k] / off[k])
print("on/off ratios per round:")
for k, v in ratios.items():
    print(f"  {k:7s} " + " ".join(f"{x:.3f}" for x in v) + f"   median {statistics.median(v):.3f}")
PY

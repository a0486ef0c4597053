#!/usr/bin/env bash
# `make bench-memory`: popshim's resident memory (VmRSS from /proc) idle, with
# BENCH_MEM_CHECKPOINTS outstanding checkpoints (messages produced and
# popped, never ACKed: `popshim bench` prepares them, then ACKs at 1/s for
# 1 s) and with BENCH_MEM_CONNS idle TCP connections (opened by python3 and
# held), each on a fresh popshim with a fresh data dir. Writes
# $BENCH_OUT/memory.md.
#
# Env (defaults in brackets): POPSHIM_BIN, BENCH_OUT [<repo>/bin/bench],
#   BENCH_MEM_CHECKPOINTS [1000000]   BENCH_MEM_CONNS [10000]   BENCH_KEEP
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/popshim-mem.XXXXXX")
mkdir -p "$work/pids"
# shellcheck source=lib.sh
. "$here/lib.sh"
trap cleanup EXIT
trap 'exit 130' INT TERM
bench_settings memory
cks=${BENCH_MEM_CHECKPOINTS:-1000000}
nconns=${BENCH_MEM_CONNS:-10000}
ulimit -n $((nconns + 4096)) 2>/dev/null || { echo "memory: cannot raise the open-file limit to $((nconns + 4096))" >&2; exit 2; }

rss_mib() { awk '/VmRSS/ {printf "%.0f", $2/1024}' "/proc/$1/status"; }

start() {
  port=$(free_port); nport=$(free_port); mport=$(free_port)
  rm -rf "$work/data"
  pid=$(start_bg popshim "$work/popshim.log" "$bin" serve --grpc-listen= --listen "127.0.0.1:$port" \
    --namesrv-listen "127.0.0.1:$nport" --metrics-listen "127.0.0.1:$mport" --broker-ip 127.0.0.1 \
    --data-dir "$work/data" --log-level warn --max-conns $((nconns + 100)))
  wait_port 127.0.0.1 "$port" 30
  sleep 1
}

machine_note | tee "$out/machine-memory.txt"
start
idle=$(rss_mib "$pid")
echo "memory: idle $idle MiB; preparing $cks outstanding checkpoints"
"$bin" bench --addr "127.0.0.1:$port" --messages "$cks" --rate 1 --duration 1s --change-burst 0 \
  --server-pid "$pid" --quiet --json "$work/cks.json" >/dev/null
withcks=$(rss_mib "$pid")
stop_bg popshim

start
echo "memory: opening $nconns idle connections"
python3 - "$port" "$nconns" "$pid" >"$work/conns.txt" <<'EOF'
import socket, sys, time
port, n, pid = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
socks = []
for _ in range(n):
    socks.append(socket.create_connection(("127.0.0.1", port)))
time.sleep(3)
rss = [l for l in open("/proc/%s/status" % pid) if l.startswith("VmRSS")][0].split()[1]
print(int(rss) // 1024)
for s in socks:
    s.close()
EOF
withconns=$(cat "$work/conns.txt")
stop_bg popshim

{
  echo "| popshim state | RSS MiB |"
  echo "|---|---|"
  echo "| idle, empty store | $idle |"
  echo "| $cks outstanding checkpoints (popped, not ACKed) | $withcks |"
  echo "| $nconns idle connections | $withconns |"
} | tee "$out/memory.md"

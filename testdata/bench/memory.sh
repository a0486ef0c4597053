#!/usr/bin/env bash
# `make bench-memory`: popshim's resident memory (VmRSS from /proc) idle, with
# BENCH_MEM_CHECKPOINTS outstanding checkpoints (messages produced and
# popped, never ACKed: `popshim bench` prepares them, then ACKs at 1/s for
# 1 s) and with BENCH_MEM_CONNS idle TCP connections (opened by python3 and
# held), each on a fresh popshim with a fresh data dir. Then two floods of
# large frames, each reporting the peak RSS (VmHWM) of a fresh popshim:
#   send: BENCH_MEM_SEND_CONNS connections with one BENCH_MEM_SEND_BYTES
#     SEND_MESSAGE_V2 in flight each (`popshim bench produce`) for
#     BENCH_MEM_SEND_DURATION;
#   drip: BENCH_MEM_DRIP_CONNS connections each announcing a
#     BENCH_MEM_DRIP_BYTES frame and sending BENCH_MEM_DRIP_RATE bytes of it
#     per second for BENCH_MEM_DRIP_SECS seconds (python3);
#   unread: BENCH_MEM_UNREAD_MSGS messages of 1 MiB stored, then
#     BENCH_MEM_UNREAD_CONNS connections (4 KiB receive window) each send one
#     POP of 32 for a group of its own and never read the answer; peak over
#     BENCH_MEM_UNREAD_SECS seconds (python3; --reply-max-bytes bounds it).
# Writes $BENCH_OUT/memory.md.
#
# Env (defaults in brackets): POPSHIM_BIN, BENCH_OUT [<repo>/bin/bench],
#   BENCH_MEM_CASES ["checkpoints conns send drip unread"]: the rows to measure
#   BENCH_MEM_CHECKPOINTS [1000000]   BENCH_MEM_CONNS [10000]
#   BENCH_MEM_SEND_CONNS [800]   BENCH_MEM_SEND_BYTES [1048576]
#   BENCH_MEM_SEND_DURATION [15s]   BENCH_MEM_DRIP_CONNS [5000]
#   BENCH_MEM_DRIP_BYTES [4194304]   BENCH_MEM_DRIP_RATE [4]
#   BENCH_MEM_DRIP_SECS [30]   BENCH_MEM_UNREAD_MSGS [40]
#   BENCH_MEM_UNREAD_CONNS [400]   BENCH_MEM_UNREAD_SECS [20]
#   BENCH_MEM_SERVE_ARGS: extra `popshim serve` flags for every row, e.g.
#     "--read-max-bytes=-1" measures without the read budget
#   BENCH_KEEP
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
cases=${BENCH_MEM_CASES:-checkpoints conns send drip unread}
cks=${BENCH_MEM_CHECKPOINTS:-1000000}
nconns=${BENCH_MEM_CONNS:-10000}
sconns=${BENCH_MEM_SEND_CONNS:-800}
sbytes=${BENCH_MEM_SEND_BYTES:-1048576}
sdur=${BENCH_MEM_SEND_DURATION:-15s}
dconns=${BENCH_MEM_DRIP_CONNS:-5000}
dbytes=${BENCH_MEM_DRIP_BYTES:-4194304}
drate=${BENCH_MEM_DRIP_RATE:-4}
dsecs=${BENCH_MEM_DRIP_SECS:-30}
umsgs=${BENCH_MEM_UNREAD_MSGS:-40}
uconns=${BENCH_MEM_UNREAD_CONNS:-400}
usecs=${BENCH_MEM_UNREAD_SECS:-20}
# shellcheck disable=SC2206 # split on purpose: a list of flags
serve_args=(${BENCH_MEM_SERVE_ARGS:-})
maxconns=$nconns
for n in "$sconns" "$dconns" "$uconns"; do
  [ "$n" -gt "$maxconns" ] && maxconns=$n
done
ulimit -n $((maxconns + 4096)) 2>/dev/null || { echo "memory: cannot raise the open-file limit to $((maxconns + 4096))" >&2; exit 2; }

rss_mib() { awk '/VmRSS/ {printf "%.0f", $2/1024}' "/proc/$1/status"; }
hwm_mib() { awk '/VmHWM/ {printf "%.0f", $2/1024}' "/proc/$1/status"; }
want() { case " $cases " in *" $1 "*) return 0 ;; esac; return 1; }

start() {
  port=$(free_port); nport=$(free_port); mport=$(free_port)
  rm -rf "$work/data"
  pid=$(start_bg popshim "$work/popshim.log" "$bin" serve --grpc-listen= --listen "127.0.0.1:$port" \
    --namesrv-listen "127.0.0.1:$nport" --metrics-listen "127.0.0.1:$mport" --broker-ip 127.0.0.1 \
    --data-dir "$work/data" --log-level warn --max-conns $((maxconns + 100)) "${serve_args[@]}")
  wait_port 127.0.0.1 "$port" 30
  sleep 1
}

machine_note | tee "$out/machine-memory.txt"
echo "serve flags: ${serve_args[*]:-(defaults)}" | tee -a "$out/machine-memory.txt"
rows=()
if want checkpoints; then
  start
  idle=$(rss_mib "$pid")
  rows+=("| idle, empty store | $idle |")
  echo "memory: idle $idle MiB; preparing $cks outstanding checkpoints"
  "$bin" bench --addr "127.0.0.1:$port" --messages "$cks" --rate 1 --duration 1s --change-burst 0 \
    --server-pid "$pid" --quiet --json "$work/cks.json" >/dev/null
  rows+=("| $cks outstanding checkpoints (popped, not ACKed) | $(rss_mib "$pid") |")
  stop_bg popshim
fi

if want conns; then
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
  rows+=("| $nconns idle connections | $(cat "$work/conns.txt") |")
  stop_bg popshim
fi

if want send; then
  start
  echo "memory: $sconns connections × one $sbytes-byte SEND in flight for $sdur"
  if ! "$bin" bench produce --addr "127.0.0.1:$port" --conns "$sconns" --inflight 1 --body-size "$sbytes" \
    --duration "$sdur" --settle-max 0 --quiet --json "$work/send.json" >"$work/send.txt" 2>&1; then
    echo "memory: bench produce failed:" >&2
    tail -5 "$work/send.txt" >&2
    exit 1
  fi
  rows+=("| $sconns × $sbytes-byte SEND in flight for $sdur: peak | $(hwm_mib "$pid") |")
  stop_bg popshim
fi

if want drip; then
  start
  echo "memory: $dconns connections each dripping a $dbytes-byte frame at $drate bytes/s for ${dsecs}s"
  python3 - "$port" "$dconns" "$dbytes" "$dsecs" "$drate" <<'EOF'
import socket, struct, sys, time
port, n, size, secs, rate = (int(a) for a in sys.argv[1:6])
# The length word (frame size - 4) and the header word (JSON, 100-byte
# header), then rate bytes per connection per second.
head = struct.pack(">II", size - 4, 100)
socks = []
for _ in range(n):
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(head)
    s.setblocking(False)
    socks.append(s)
closed = set()
for _ in range(secs):
    t = time.monotonic()
    for i, s in enumerate(socks):
        if i in closed:
            continue
        try:
            s.send(b"{" * rate)
        except BlockingIOError:
            pass
        except OSError:
            # the server closes a connection whose admitted frame is too
            # slow while others wait for read budget (remoting/slowframe.go)
            closed.add(i)
    time.sleep(max(0.0, 1 - (time.monotonic() - t)))
for s in socks:
    s.close()
print(f"memory: {len(closed)} dripping connections closed by the server as too slow", flush=True)
EOF
  rows+=("| $dconns × $dbytes-byte frame dripped at $drate bytes/s for ${dsecs}s: peak | $(hwm_mib "$pid") |")
  stop_bg popshim
fi

if want unread; then
  start
  echo "memory: $umsgs messages of 1 MiB; $uconns connections each POP 32 of them and read nothing for ${usecs}s"
  python3 - "$port" "$umsgs" "$uconns" "$usecs" <<'EOF'
import json, os, socket, struct, sys, time
port, nmsg, nconn, secs = (int(a) for a in sys.argv[1:5])
opaque = 0
def frame(code, ext, body=b""):
    global opaque
    opaque += 1
    h = json.dumps({"code": code, "flag": 0, "language": "JAVA", "opaque": opaque, "serializeTypeCurrentRPC": "JSON",
                    "version": 479, "extFields": {k: str(v) for k, v in ext.items()}}).encode()
    return struct.pack(">ii", 4 + len(h) + len(body), len(h)) + h + body
def answer(s):
    buf = b""
    while len(buf) < 4 or len(buf) < 4 + struct.unpack(">i", buf[:4])[0]:
        chunk = s.recv(1 << 20)
        if not chunk:
            raise SystemExit("memory: the broker closed the producing connection")
        buf += chunk
    return json.loads(buf[8:8 + (struct.unpack(">i", buf[4:8])[0] & 0xFFFFFF)])
s = socket.create_connection(("127.0.0.1", port), timeout=30)
s.sendall(frame(17, {"topic": "MemUnread", "defaultTopic": "TBW102", "readQueueNums": 1, "writeQueueNums": 1, "perm": 6,
                     "topicFilterType": "SINGLE_TAG", "topicSysFlag": 0, "order": "false"}))
if answer(s).get("code") != 0:
    raise SystemExit("memory: cannot create the topic")
body = os.urandom(1 << 20)
for _ in range(nmsg):
    s.sendall(frame(10, {"producerGroup": "mem", "topic": "MemUnread", "defaultTopic": "TBW102", "defaultTopicQueueNums": 1,
                         "queueId": 0, "sysFlag": 0, "bornTimestamp": int(time.time() * 1000), "flag": 0,
                         "properties": "", "reconsumeTimes": 0}, body))
    if answer(s).get("code") != 0:
        raise SystemExit("memory: a SEND failed")
readers = []
for i in range(nconn):
    c = socket.socket()
    c.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    c.connect(("127.0.0.1", port))
    c.sendall(frame(200050, {"consumerGroup": "mem_unread_%d" % i, "topic": "MemUnread", "queueId": 0, "maxMsgNums": 32,
                             "invisibleTime": 60000, "pollTime": 0, "bornTime": int(time.time() * 1000), "initMode": 1,
                             "expType": "TAG", "exp": "*", "order": "false"}))
    readers.append(c)
time.sleep(secs)
for c in readers:
    c.close()
EOF
  rows+=("| $uconns connections × one POP of $umsgs × 1 MiB messages, answers never read, ${usecs}s: peak | $(hwm_mib "$pid") |")
  stop_bg popshim
fi

{
  echo "| popshim state | RSS MiB |"
  echo "|---|---|"
  printf '%s\n' "${rows[@]}"
} | tee "$out/memory.md"

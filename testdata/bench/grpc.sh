#!/usr/bin/env bash
# `make bench-grpc`: RocketMQ 5 gRPC (v5) send and receive+ack, side by side in one run, rounds
# interleaved, each system on fresh servers every round:
#
#   popshim-grpc          popshim's own gRPC endpoint (serve --grpc-listen), when the binary lists the
#                         flag and the port answers a v5 client; otherwise skipped with a line saying why
#   grpc-floor            `popshim bench grpc-floor-server` (label grpc-go-floor): grpc-go alone with popshim's
#                         endpoint's server options, answering the producer start-up and every SendMessage OK
#                         while storing nothing; send only (the warm-up send, then the open-loop grpc-send,
#                         fixed --topic): the share of popshim-grpc's server CPU per message that is grpc-go's
#                         own per-call floor. Not a broker. Skipped under GBENCH_TLS=1 (it serves plaintext)
#   proxy-popshim         rocketmq-proxy 5.5.0, cluster mode, on popshim's embedded name server
#   proxy-rocketmq-5.5.1  rocketmq-proxy 5.5.0, cluster mode, in front of Apache RocketMQ 5.5.1 (name
#                         server + broker, out of the box: anchor.sh's `default` broker.conf)
#   popshim-remoting      popshim's remoting path on the same popshim as popshim-grpc: `bench produce` and
#                         `bench pop`, the reference for server CPU per message
#
# Workloads (popshim bench, client on the same machine): grpc-send (SendMessage, GBENCH_CONNS
# connections × GBENCH_INFLIGHT calls, one 128-byte message per call) and grpc-receive (GBENCH_MESSAGES
# sent first, then ReceiveMessage batch 32 + AckMessage of the batch, GBENCH_CONNS × GBENCH_RECV_INFLIGHT
# slots); for the remoting reference, produce (same window) and pop (GBENCH_POP_MESSAGES, one POP per
# queue in flight). Every system gets the same unmeasured warm-up first (a GBENCH_WARMUP send run and a
# 20,000-message receive run: JIT for the JVMs). Server CPU is /proc of popshim, or of the proxy plus
# the broker behind it (the name servers are not counted).
#
# Output in $BENCH_OUT/grpc (default bin/bench/grpc): send-LABEL[-rK].json, consume-LABEL[-rK].json,
# compare-send.md and compare-consume.md (bench compare: medians, ratios per round), grpc-send.svg and
# grpc-receive.svg (bench plot of round 1: p99 of each system's main series over time), summary.md (the
# table below and the goals), machine.txt.
#
# Env (defaults in brackets): POPSHIM_BIN, BENCH_OUT [bin/bench], BENCH_ROUNDS [3], BENCH_KEEP,
#   GBENCH_CLIENT_BIN [POPSHIM_BIN]   the popshim whose `bench` drives the load (a server binary built
#                           before the gRPC modes existed can be measured with a newer client)
#   GBENCH_DURATION [10s]   measured phase of each run
#   GBENCH_CONNS [4]        connections (v5 clients) per run; also --conns of produce and pop
#   GBENCH_INFLIGHT [32]    calls in flight per connection
#   GBENCH_MESSAGES [300000] messages sent before each receive run
#   GBENCH_RECV_INFLIGHT [8] ReceiveMessage calls in flight per connection (each up to 32 messages)
#   GBENCH_POP_MESSAGES [400000] messages produced before the remoting pop run (it is fast)
#   GBENCH_WARMUP [5s]      warm-up send run (0: no warm-up)
#   GBENCH_CPU_RATE [3000 8000]  after the open-loop runs on popshim, grpc-send and produce paced at each of
#                           these messages/s (pacedRATE-LABEL[-rK].json, compare-pacedRATE.md): server CPU per
#                           message at equal load, where the open-loop runs compare it at different rates; 0: none
#   GBENCH_P99_RATE [2000]  after the open-loop runs on every system, grpc-send paced at this many messages/s
#                           and grpc-receive paced at this many / 32 ReceiveMessage calls/s (fixed-LABEL[-rK].json,
#                           fixedrecv-LABEL[-rK].json): p99 at a rate every system sustains (proxy + RocketMQ
#                           ~2,000 sends/s here), where the open-loop p99 also reflects each system's queueing at
#                           its own maximum; 0: none
#   GBENCH_SYSTEMS [popshim-grpc grpc-floor proxy-popshim proxy-rocketmq]   systems, in order (popshim-grpc
#                           also runs popshim-remoting)
#   GBENCH_TLS [0]          1: the v5 clients connect with TLS (popshim --tls-mode permissive with a
#                           throw-away certificate; the proxy's own self-signed default)
#   ANCHOR_CACHE [~/.cache/popshim-anchor]   RocketMQ 5.5.1 broker jars (fetched as anchor.sh does when
#                           missing); the proxy's jars come from testdata/interop/rmq.sh's cache
#   GBENCH_HEAP [1g]        -Xms/-Xmx of the broker and the proxy (name server: 256m)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/popshim-bench-grpc.XXXXXX")
mkdir -p "$work/pids"
# shellcheck source=lib.sh
. "$here/lib.sh"
trap cleanup EXIT
trap 'exit 130' INT TERM

bench_settings bench-grpc
out="$out/grpc"
mkdir -p "$out"
rm -f "$out"/send-*.json "$out"/consume-*.json "$out"/paced*-*.json "$out"/fixed*-*.json "$out"/compare-*.md "$out"/*.svg "$out/summary.md"
duration=${GBENCH_DURATION:-10s}
conns=${GBENCH_CONNS:-4}
inflight=${GBENCH_INFLIGHT:-32}
messages=${GBENCH_MESSAGES:-300000}
recv_inflight=${GBENCH_RECV_INFLIGHT:-8}
pop_messages=${GBENCH_POP_MESSAGES:-400000}
cpu_rates=${GBENCH_CPU_RATE:-3000 8000}
p99_rate=${GBENCH_P99_RATE:-2000}
warmup=${GBENCH_WARMUP:-5s}
systems=${GBENCH_SYSTEMS:-popshim-grpc grpc-floor proxy-popshim proxy-rocketmq}
heap=${GBENCH_HEAP:-1g}
rmqver=5.5.1
command -v java >/dev/null || { echo "bench-grpc: java not found (apt-get install openjdk-17-jre-headless)" >&2; exit 2; }

# Jars: the proxy (5.5.0, with 5.5.1 where Central has it) and the name server from rmq.sh's cache, the
# 5.5.1 broker from anchor.sh's (anchor.sh fetches it; rmq.sh's `broker` part is the same set).
rmq() { bash -c ". '$root/testdata/interop/rmq.sh'; $*"; }
proxylib=$(rmq rmq_lib proxy)
nslib=$(rmq rmq_lib namesrv)
brokerlib=${ANCHOR_CACHE:-$HOME/.cache/popshim-anchor}/$rmqver/lib
[ -e "$brokerlib/rocketmq-broker-$rmqver.jar" ] || brokerlib=$(rmq rmq_lib broker)
echo "bench-grpc: proxy jars $(cd "$proxylib" && ls rocketmq-proxy-*.jar), broker jars $(cd "$brokerlib" && ls rocketmq-broker-*.jar)"

tls=()
serve_tls=()
if [ "${GBENCH_TLS:-0}" = 1 ]; then
  tls=(--tls)
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 -subj /CN=popshim-bench \
    -addext subjectAltName=IP:127.0.0.1 -keyout "$work/key.pem" -out "$work/cert.pem" 2>/dev/null
  serve_tls=(--tls-mode permissive --tls-cert "$work/cert.pem" --tls-key "$work/key.pem")
fi
# Does this popshim have a gRPC endpoint? The flag first; whether it answers is probed per start.
cbin=${GBENCH_CLIENT_BIN:-$bin}
"$cbin" bench grpc-send --help >/dev/null 2>&1 || { echo "bench-grpc: $cbin has no \`bench grpc-send\` (set GBENCH_CLIENT_BIN)" >&2; exit 2; }
has_grpc_flag=0
"$bin" serve --help 2>&1 | grep -q -- '--grpc-listen' && has_grpc_flag=1
# The floor server: from the measured binary (its grpc-go), else from the client's; "" when neither has it.
fbin=$bin
"$fbin" bench grpc-floor-server --help >/dev/null 2>&1 || fbin=$cbin
"$fbin" bench grpc-floor-server --help >/dev/null 2>&1 || fbin=""

# java_run NAME LOG HOME LIB HEAP CLASS ARGS...: a RocketMQ JVM under start_bg; prints its pid.
java_run() {
  local name=$1 log=$2 home=$3 lib=$4 h=$5
  shift 5
  mkdir -p "$home"
  ROCKETMQ_HOME=$home RMQ_PROXY_HOME=$home start_bg "$name" "$log" java "-Xms$h" "-Xmx$h" -server -XX:+UseG1GC \
    "-Duser.home=$home" "-Drocketmq.home.dir=$home" -cp "$lib/*" "$@"
}

# start_popshim GRPC(0|1) NAME: a fresh popshim (embedded name server, plaintext remoting) in
# $work/popshim-NAME-rROUND; sets pdir, ppid, paddr, pns, pgrpc ("" when no endpoint was asked for or none
# answers) and grpc_note (why not).
start_popshim() {
  local port nport mport gport=""
  port=$(free_port); nport=$(free_port); mport=$(free_port)
  pdir="$work/popshim-$2-r$round"
  rm -rf "$pdir"; mkdir -p "$pdir"
  local g=()
  if [ "$has_grpc_flag" = 1 ]; then
    if [ "$1" = 1 ]; then gport=$(free_port); g=(--grpc-listen "127.0.0.1:$gport"); else g=(--grpc-listen=); fi
  fi
  ppid=$(start_bg popshim "$pdir/popshim.log" "$bin" serve --listen "127.0.0.1:$port" \
    --namesrv-listen "127.0.0.1:$nport" --metrics-listen "127.0.0.1:$mport" --broker-ip 127.0.0.1 \
    --data-dir "$pdir/data" --log-level warn --idle-timeout 0 "${g[@]}" "${serve_tls[@]}")
  wait_port 127.0.0.1 "$port" 30
  wait_port 127.0.0.1 "$nport" 30
  paddr=127.0.0.1:$port pns=127.0.0.1:$nport pgrpc="" grpc_note=""
  if [ "$1" = 1 ]; then
    if [ "$has_grpc_flag" = 0 ]; then
      grpc_note="\`popshim serve --help\` lists no --grpc-listen (binary $bin)"
    elif ! wait_port 127.0.0.1 "$gport" 10 2>/dev/null; then
      grpc_note="popshim serve --grpc-listen 127.0.0.1:$gport: nothing listens there (the endpoint is not wired into this build)"
    elif ! "$cbin" bench grpc-send --addr "127.0.0.1:$gport" --remoting-addr "$paddr" "${tls[@]}" --duration 1s \
        --conns 1 --inflight 1 --route-wait 10s --quiet >"$pdir/probe.log" 2>&1; then
      grpc_note="popshim's gRPC port 127.0.0.1:$gport does not serve a v5 send: $(grep -m1 -E 'bench:|Error|error' "$pdir/probe.log" | cut -c1-200)"
    else
      pgrpc=127.0.0.1:$gport
    fi
  fi
}

# start_proxy NAME NAMESRV: rocketmq-proxy 5.5.0 in cluster mode on NAMESRV with its defaults but for the ports
# (gRPC, remoting), the cluster name, localServeAddr and no periodic jstack; one more try when the first
# start fails (a proxy's first start creates a topic on the cluster and can time out on a loaded machine).
# Home $work/NAME[-2]. Sets xpid and xaddr.
start_proxy() {
  local ns=$2 try gp rp home
  for try in 1 2; do
    gp=$(free_port); rp=$(free_port)
    home="$work/$1"
    [ "$try" = 1 ] || home="$work/$1-$try"
    rm -rf "$home"; mkdir -p "$home/conf"
    cat >"$home/conf/rmq-proxy.json" <<EOF
{
  "rocketMQClusterName": "DefaultCluster",
  "proxyMode": "cluster",
  "namesrvAddr": "$ns",
  "grpcServerPort": $gp,
  "remotingListenPort": $rp,
  "localServeAddr": "127.0.0.1",
  "enablePrintJstack": false
}
EOF
    xpid=$(java_run proxy "$home/proxy.out" "$home" "$proxylib" "$heap" \
      org.apache.rocketmq.proxy.ProxyStartup -pc "$home/conf/rmq-proxy.json" -pm cluster)
    if wait_port 127.0.0.1 "$gp" 180 && wait_port 127.0.0.1 "$rp" 60; then
      xaddr=127.0.0.1:$gp
      return 0
    fi
    echo "bench-grpc: the proxy did not start (try $try; $home/proxy.out)" >&2
    stop_bg proxy 10
  done
  return 1
}

# start_rocketmq: a fresh Apache RocketMQ 5.5.1 name server and broker (anchor.sh's `default`
# broker.conf); sets bpid, baddr, bns.
start_rocketmq() {
  local home="$work/rocketmq-r$round" nport bport
  rm -rf "$home"; mkdir -p "$home/store"
  nport=$(free_port)
  printf 'listenPort=%s\nbindAddress=127.0.0.1\n' "$nport" >"$home/namesrv.conf"
  java_run namesrv "$home/namesrv.out" "$home" "$nslib" 256m org.apache.rocketmq.namesrv.NamesrvStartup -c "$home/namesrv.conf" >/dev/null
  wait_port 127.0.0.1 "$nport" 120
  bport=$(free_port_block 1)
  cat >"$home/broker.conf" <<EOF
brokerClusterName=DefaultCluster
brokerName=broker-a
brokerId=0
brokerIP1=127.0.0.1
bindAddress=127.0.0.1
listenPort=$bport
namesrvAddr=127.0.0.1:$nport
storePathRootDir=$home/store
storePathCommitLog=$home/store/commitlog
autoCreateTopicEnable=true
autoCreateSubscriptionGroup=true
EOF
  cp "$home/broker.conf" "$out/rocketmq-broker.conf"
  bpid=$(java_run broker "$home/broker.out" "$home" "$brokerlib" "$heap" org.apache.rocketmq.broker.BrokerStartup -c "$home/broker.conf")
  for _ in $(seq 1 300); do
    grep -q "boot success" "$home/broker.out" 2>/dev/null && break
    kill -0 "$bpid" 2>/dev/null || { tail -30 "$home/broker.out" >&2; exit 1; }
    sleep 1
  done
  grep -q "boot success" "$home/broker.out" || { echo "bench-grpc: the broker did not boot" >&2; exit 1; }
  rmq wait_brokers "$nport" 1 120
  baddr=127.0.0.1:$bport bns=127.0.0.1:$nport
}

# run_grpc LABEL ROUND SUFFIX ADDR REMOTING PIDS: warm-up, then the measured send and receive runs.
run_grpc() {
  local label=$1 round=$2 sfx=$3 addr=$4 remoting=$5 pids=$6
  local common=(--addr "$addr" --remoting-addr "$remoting" "${tls[@]}" --conns "$conns" --quiet)
  if [ "$warmup" != 0 ]; then
    echo "bench-grpc: round $round: $label: warm-up (not measured)"
    "$cbin" bench grpc-send "${common[@]}" --inflight "$inflight" --duration "$warmup" >"$work/warmup.log" 2>&1 \
      || { cat "$work/warmup.log" >&2; return 1; }
    "$cbin" bench grpc-receive "${common[@]}" --inflight "$recv_inflight" --duration "$warmup" --messages 20000 --settle-max 0 >>"$work/warmup.log" 2>&1 \
      || { cat "$work/warmup.log" >&2; return 1; }
  fi
  echo "bench-grpc: round $round/$rounds: $label: grpc-send"
  "$cbin" bench grpc-send "${common[@]}" --inflight "$inflight" --duration "$duration" --server-pid "$pids" --label "$label" --round "$round" \
    --json "$out/send-$label$sfx.json"
  echo "bench-grpc: round $round/$rounds: $label: grpc-receive"
  "$cbin" bench grpc-receive "${common[@]}" --inflight "$recv_inflight" --duration "$duration" --messages "$messages" --settle-max 20s \
    --server-pid "$pids" --label "$label" --round "$round" --json "$out/consume-$label$sfx.json"
  [ "$p99_rate" != 0 ] || return 0
  echo "bench-grpc: round $round/$rounds: $label: grpc-send at $p99_rate/s"
  "$cbin" bench grpc-send "${common[@]}" --inflight "$inflight" --rate "$p99_rate" --duration "$duration" --server-pid "$pids" \
    --label "$label" --round "$round" --json "$out/fixed-$label$sfx.json"
  # receive: batches of 32, so rate/32 calls/s; messages for the run and a fifth more (the run stops when
  # they are all acked).
  local calls=$(( (p99_rate + 31) / 32 )) secs=${duration%s}
  [[ "$secs" =~ ^[0-9]+$ ]] || secs=10
  echo "bench-grpc: round $round/$rounds: $label: grpc-receive at $calls calls/s"
  "$cbin" bench grpc-receive "${common[@]}" --inflight "$recv_inflight" --rate "$calls" --duration "$duration" \
    --messages $(( p99_rate * secs * 6 / 5 )) --settle-max 20s --server-pid "$pids" --label "$label" --round "$round" \
    --json "$out/fixedrecv-$label$sfx.json"
}

# run_floor ROUND SUFFIX ADDR PID: against the floor server, the warm-up send, then the open-loop grpc-send only
# (it creates and stores nothing: fixed topic, no --remoting-addr).
run_floor() {
  local label=grpc-go-floor round=$1 sfx=$2 addr=$3 pid=$4
  local common=(--addr "$addr" --topic t1 --conns "$conns" --inflight "$inflight" --quiet)
  if [ "$warmup" != 0 ]; then
    echo "bench-grpc: round $round: $label: warm-up (not measured)"
    "$cbin" bench grpc-send "${common[@]}" --duration "$warmup" >"$work/warmup.log" 2>&1 \
      || { cat "$work/warmup.log" >&2; return 1; }
  fi
  echo "bench-grpc: round $round/$rounds: $label: grpc-send"
  "$cbin" bench grpc-send "${common[@]}" --duration "$duration" --server-pid "$pid" --label "$label" --round "$round" \
    --json "$out/send-$label$sfx.json"
}

# run_paced ROUND SUFFIX: grpc-send (when the endpoint answers) and produce at each of cpu_rates messages/s.
run_paced() {
  local round=$1 sfx=$2 rate
  for rate in $cpu_rates; do
    [ "$rate" != 0 ] || continue
    local common=(--conns "$conns" --inflight "$inflight" --rate "$rate" --duration "$duration" --server-pid "$ppid"
      --round "$round" --quiet)
    if [ -n "$pgrpc" ]; then
      echo "bench-grpc: round $round/$rounds: popshim-grpc: grpc-send at $rate/s"
      "$cbin" bench grpc-send "${common[@]}" --addr "$pgrpc" --remoting-addr "$paddr" "${tls[@]}" --label popshim-grpc \
        --json "$out/paced$rate-popshim-grpc$sfx.json"
    fi
    echo "bench-grpc: round $round/$rounds: popshim-remoting: produce at $rate/s"
    "$cbin" bench produce "${common[@]}" --addr "$paddr" --label popshim-remoting --json "$out/paced$rate-popshim-remoting$sfx.json"
  done
}

# run_remoting ROUND SUFFIX: popshim's remoting path on the running popshim (produce, then pop+ack).
run_remoting() {
  local round=$1 sfx=$2 label=popshim-remoting
  local common=(--addr "$paddr" --conns "$conns" --server-pid "$ppid" --label "$label" --round "$round" --duration "$duration" --quiet)
  echo "bench-grpc: round $round/$rounds: $label: produce"
  "$cbin" bench produce "${common[@]}" --inflight "$inflight" --json "$out/send-$label$sfx.json"
  echo "bench-grpc: round $round/$rounds: $label: pop"
  "$cbin" bench pop "${common[@]}" --messages "$pop_messages" --settle-max 20s --json "$out/consume-$label$sfx.json"
}

machine_note | tee "$out/machine.txt"
skipped=""
for round in $(seq 1 "$rounds"); do
  sfx=""
  [ "$round" -gt 1 ] && sfx="-r$round"
  for s in $systems; do
    case $s in
      popshim-grpc)
        start_popshim 1 direct
        if [ -n "$pgrpc" ]; then
          run_grpc popshim-grpc "$round" "$sfx" "$pgrpc" "$paddr" "$ppid"
        else
          echo "bench-grpc: round $round: popshim-grpc SKIPPED: $grpc_note"
          skipped=$grpc_note
        fi
        run_remoting "$round" "$sfx"
        run_paced "$round" "$sfx"
        stop_bg popshim
        ;;
      grpc-floor)
        if [ -z "$fbin" ]; then
          echo "bench-grpc: round $round: grpc-floor SKIPPED: neither $bin nor $cbin has \`bench grpc-floor-server\`"
          continue
        elif [ "${GBENCH_TLS:-0}" = 1 ]; then
          echo "bench-grpc: round $round: grpc-floor SKIPPED: the floor server is plaintext (GBENCH_TLS=1)"
          continue
        fi
        fport=$(free_port)
        fpid=$(start_bg grpc-floor "$work/grpc-floor-r$round.log" "$fbin" bench grpc-floor-server --listen "127.0.0.1:$fport")
        wait_port 127.0.0.1 "$fport" 30
        echo "bench-grpc: round $round: grpc-go floor server (pid $fpid) on 127.0.0.1:$fport"
        run_floor "$round" "$sfx" "127.0.0.1:$fport" "$fpid"
        stop_bg grpc-floor
        ;;
      proxy-popshim)
        start_popshim 0 behind-proxy
        start_proxy "proxy-popshim-r$round" "$pns"
        echo "bench-grpc: round $round: proxy (pid $xpid) on $xaddr in front of popshim (pid $ppid)"
        run_grpc proxy-popshim "$round" "$sfx" "$xaddr" "$paddr" "$xpid,$ppid"
        stop_bg proxy 30
        stop_bg popshim
        ;;
      proxy-rocketmq)
        start_rocketmq
        start_proxy "proxy-rocketmq-r$round" "$bns"
        echo "bench-grpc: round $round: proxy (pid $xpid) on $xaddr in front of RocketMQ $rmqver (broker pid $bpid)"
        run_grpc "proxy-rocketmq-$rmqver" "$round" "$sfx" "$xaddr" "$baddr" "$xpid,$bpid"
        stop_bg proxy 30
        stop_bg broker 60
        stop_bg namesrv 30
        ;;
      *) echo "bench-grpc: unknown system '$s' (popshim-grpc, grpc-floor, proxy-popshim, proxy-rocketmq)" >&2; exit 2 ;;
    esac
  done
done

# reports KIND: the JSON reports of one workload, system by system (the order of GBENCH_SYSTEMS, the
# direct endpoint first), every round.
reports() {
  local l f
  for l in popshim-grpc grpc-go-floor proxy-popshim "proxy-rocketmq-$rmqver" popshim-remoting; do
    for f in "$out/$1-$l.json" "$out/$1-$l"-r*.json; do
      [ -e "$f" ] && echo "$f"
    done
  done
}
paced_kinds=()
for rate in $cpu_rates; do [ "$rate" = 0 ] || paced_kinds+=("paced$rate"); done
for kind in send consume fixed fixedrecv "${paced_kinds[@]}"; do
  mapfile -t rs < <(reports "$kind")
  [ "${#rs[@]}" -gt 0 ] || continue
  echo "## $kind" | tee "$out/compare-$kind.md"
  "$cbin" bench compare "${rs[@]}" | tee -a "$out/compare-$kind.md"
  mapfile -t first < <(printf '%s\n' "${rs[@]}" | grep -v -- '-r[0-9]*\.json$')
  case $kind in send | consume) ;; *) continue ;; esac
  plot=grpc-send.svg
  [ "$kind" = consume ] && plot=grpc-receive.svg
  "$cbin" bench plot -o "$out/$plot" "${first[@]}" || true
done
python3 "$here/grpc_summary.py" "$out" "$rmqver" "$skipped" | tee "$out/summary.md"
echo "bench-grpc: results in $out (summary.md, compare-*.md, *.svg, *.json)"

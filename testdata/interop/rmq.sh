# Apache RocketMQ parts for the interop suites (sourced by run.sh and mqadmin.sh, not run).
#
# Nothing of RocketMQ is committed: the jars come from Maven Central into $RMQ_CACHE on first use and
# are reused after that (Maven's own ~/.m2 cache too). Each part gets its own lib directory, so a part
# runs on exactly the classpath its pom resolves:
#
#   proxy    org.apache.rocketmq:rocketmq-proxy 5.5.0 (the newest on Central), with the modules that
#            exist at 5.5.1 (broker, store, common, remoting, controller, tiered-store) taken at 5.5.1
#   namesrv  org.apache.rocketmq:rocketmq-namesrv 5.5.0 (5.5.1 is not on Central)
#   tools    org.apache.rocketmq:rocketmq-tools 5.5.0 (mqadmin; 5.5.1 is not on Central)
#   broker   org.apache.rocketmq:rocketmq-broker 5.5.1 with 5.5.0 for the modules 5.5.1 lacks (as
#            testdata/bench/anchor.sh); only used to check a suite against a Java broker by hand
#
# Processes are started with start_bg (setsid: each leads its own process group; pid in
# $work/pids/NAME.pid), so that run.sh's EXIT trap kills them whatever happens. The caller sets $work.

RMQ_CACHE=${RMQ_CACHE:-$HOME/.cache/popshim-interop/rocketmq}
RMQ_VERSION=5.5.0
RMQ_NEWER=5.5.1
# modules of the proxy's and the broker's dependency tree that are on Central at $RMQ_NEWER
RMQ_NEWER_MODULES="rocketmq-broker rocketmq-store rocketmq-common rocketmq-remoting rocketmq-controller rocketmq-tiered-store"
# the sibling modules 5.5.1 depends on that are not on Central at 5.5.1
RMQ_OLDER_MODULES="rocketmq-client rocketmq-srvutil rocketmq-filter rocketmq-auth rocketmq-acl rocketmq-tools rocketmq-namesrv rocketmq-proxy"

# rmq_pom PART: a throwaway pom whose runtime dependencies are the jars of PART.
rmq_pom() {
  local part=$1 deps="" mgmt="" a
  # 5.5.1's poms ask for 5.5.1 of every sibling module; the ones not on Central are pinned to 5.5.0
  for a in $RMQ_NEWER_MODULES; do
    mgmt="$mgmt<dependency><groupId>org.apache.rocketmq</groupId><artifactId>$a</artifactId><version>$RMQ_NEWER</version></dependency>"
  done
  for a in $RMQ_OLDER_MODULES; do
    mgmt="$mgmt<dependency><groupId>org.apache.rocketmq</groupId><artifactId>$a</artifactId><version>$RMQ_VERSION</version></dependency>"
  done
  case "$part" in
    proxy)   deps="<dependency><groupId>org.apache.rocketmq</groupId><artifactId>rocketmq-proxy</artifactId><version>$RMQ_VERSION</version></dependency>" ;;
    namesrv) deps="<dependency><groupId>org.apache.rocketmq</groupId><artifactId>rocketmq-namesrv</artifactId><version>$RMQ_VERSION</version></dependency>"; mgmt="" ;;
    tools)   deps="<dependency><groupId>org.apache.rocketmq</groupId><artifactId>rocketmq-tools</artifactId><version>$RMQ_VERSION</version></dependency>"; mgmt="" ;;
    broker)  deps="<dependency><groupId>org.apache.rocketmq</groupId><artifactId>rocketmq-broker</artifactId><version>$RMQ_NEWER</version></dependency>" ;;
    *) echo "rmq_pom: unknown part $part" >&2; return 2 ;;
  esac
  cat <<EOF
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>org.popshim.interop</groupId>
  <artifactId>rocketmq-$part</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencyManagement><dependencies>$mgmt</dependencies></dependencyManagement>
  <dependencies>$deps</dependencies>
</project>
EOF
}

# rmq_lib PART: makes sure the jars of PART are in the cache and prints their directory.
rmq_lib() {
  local part=$1 dir=$RMQ_CACHE/$1
  if [ ! -e "$dir/lib/.complete" ]; then
    mkdir -p "$dir"
    rm -rf "$dir/lib.tmp"
    rmq_pom "$part" >"$dir/pom.xml" || return 2
    echo "rmq: fetching the $part jars with Maven into $dir" >&2
    if ! mvn -B -q -f "$dir/pom.xml" dependency:copy-dependencies -DincludeScope=runtime \
        -DoutputDirectory="$dir/lib.tmp" >"$dir/mvn.log" 2>&1; then
      echo "rmq: Maven could not resolve the $part jars:" >&2
      tail -30 "$dir/mvn.log" >&2
      return 1
    fi
    touch "$dir/lib.tmp/.complete"
    rm -rf "$dir/lib"
    mv "$dir/lib.tmp" "$dir/lib"
  fi
  echo "$dir/lib"
}

# rmq_jars PART: the rocketmq-* jars a part runs, for the log.
rmq_jars() {
  (cd "$RMQ_CACHE/$1/lib" && ls rocketmq-*.jar | tr '\n' ' ')
}

# free_port: testdata/ports.sh.
# shellcheck source=../ports.sh
. "$(dirname "${BASH_SOURCE[0]}")/../ports.sh"

# start_bg NAME LOG CMD...: CMD under setsid (so its pid is its process group id), output to LOG,
# pid in $work/pids/NAME.pid; prints the pid.
start_bg() {
  local name=$1 log=$2
  shift 2
  setsid "$@" >"$log" 2>&1 </dev/null &
  local pid=$!
  echo "$pid" >"$work/pids/$name.pid"
  echo "$pid"
}

# stop_bg NAME [SECONDS]: SIGTERM the process group of NAME, SIGKILL after SECONDS (default 20).
stop_bg() {
  local name=$1 secs=${2:-20} f="$work/pids/$1.pid" pid
  [ -e "$f" ] || return 0
  pid=$(cat "$f")
  kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 1 $((secs * 10))); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true
  rm -f "$f"
}

# wait_port [HOST:]PORT SECONDS PIDNAME: wait until HOST:PORT (default host 127.0.0.1) accepts; fail
# early when PIDNAME died.
wait_port() {
  local port=$1 secs=$2 name=${3:-} pid="" host=127.0.0.1
  case "$port" in *:*) host=${port%:*}; port=${port##*:} ;; esac
  [ -n "$name" ] && [ -e "$work/pids/$name.pid" ] && pid=$(cat "$work/pids/$name.pid")
  for _ in $(seq 1 $((secs * 10))); do
    if (exec 3<>"/dev/tcp/$host/$port") 2>/dev/null; then return 0; fi
    if [ -n "$pid" ] && ! kill -0 "$pid" 2>/dev/null; then
      echo "rmq: $name (pid $pid) exited before listening on $host:$port" >&2
      return 1
    fi
    sleep 0.1
  done
  echo "rmq: nothing listens on $host:$port after ${secs}s ($name)" >&2
  return 1
}

# java_cmd HOME LIB HEAP: sets the array JAVA_CMD to the java command line shared by the RocketMQ parts.
# HOME becomes user.home and ROCKETMQ_HOME (logs go to HOME/logs/rocketmqlogs), so nothing is written
# outside the work directory.
java_cmd() {
  local home=$1 lib=$2 heap=$3
  JAVA_CMD=(java "-Xms$heap" "-Xmx$heap" -XX:+UseG1GC -XX:ActiveProcessorCount=2
    "-Duser.home=$home" "-Drocketmq.home.dir=$home")
  # RMQ_JAVA_OPTS: extra JVM flags, whitespace-separated (run.sh gives the proxy -Dtls.enable=true)
  # shellcheck disable=SC2206
  [ -n "${RMQ_JAVA_OPTS:-}" ] && JAVA_CMD+=($RMQ_JAVA_OPTS)
  JAVA_CMD+=(-cp "$lib/*")
}

# rmq_namesrv NAME PORT: an Apache name server on 127.0.0.1:PORT, home $work/NAME.
rmq_namesrv() {
  local name=$1 port=$2 home=$work/$1 lib
  lib=$(rmq_lib namesrv) || return 1
  mkdir -p "$home"
  printf 'listenPort=%s\nbindAddress=127.0.0.1\n' "$port" >"$home/namesrv.conf"
  java_cmd "$home" "$lib" 192m
  ROCKETMQ_HOME=$home start_bg "$name" "$home/namesrv.out" "${JAVA_CMD[@]}" \
    org.apache.rocketmq.namesrv.NamesrvStartup -c "$home/namesrv.conf" >/dev/null
  wait_port "$port" 90 "$name"
}

# rmq_proxy NAME NAMESRV GRPC_PORT REMOTING_PORT: rocketmq-proxy in cluster mode on the name server
# NAMESRV (host:port[;host:port]), gRPC on GRPC_PORT and remoting on REMOTING_PORT (all interfaces: the
# proxy has no bind-address setting; clients are given 127.0.0.1), home $work/NAME.
rmq_proxy() {
  local name=$1 ns=$2 grpc=$3 remoting=$4 home=$work/$1 lib
  lib=$(rmq_lib proxy) || return 1
  mkdir -p "$home/conf"
  cat >"$home/conf/rmq-proxy.json" <<EOF
{
  "rocketMQClusterName": "DefaultCluster",
  "proxyMode": "cluster",
  "namesrvAddr": "$ns",
  "grpcServerPort": $grpc,
  "remotingListenPort": $remoting,
  "localServeAddr": "127.0.0.1",
  "proxyName": "$name",
  "enablePrintJstack": false,
  "grpcThreadPoolNums": 8,
  "grpcBossLoopNum": 1,
  "grpcWorkerLoopNum": 2
}
EOF
  java_cmd "$home" "$lib" 384m
  RMQ_PROXY_HOME=$home ROCKETMQ_HOME=$home start_bg "$name" "$home/proxy.out" "${JAVA_CMD[@]}" \
    org.apache.rocketmq.proxy.ProxyStartup -pc "$home/conf/rmq-proxy.json" -pm cluster >/dev/null
  wait_port "$grpc" 120 "$name" && wait_port "$remoting" 30 "$name"
}

# rmq_broker NAME NAMESRV PORT [KEY=VALUE...]: an Apache RocketMQ 5.5.1 broker (POP on the RocksDB KV
# path as anchor.sh), for checking a suite against Java by hand. Binds PORT-2 and PORT+1 too.
rmq_broker() {
  local name=$1 ns=$2 port=$3 home=$work/$1 lib kv
  shift 3
  lib=$(rmq_lib broker) || return 1
  mkdir -p "$home/store"
  cat >"$home/broker.conf" <<EOF
brokerClusterName=DefaultCluster
brokerName=$name
brokerId=0
brokerIP1=127.0.0.1
bindAddress=127.0.0.1
listenPort=$port
namesrvAddr=$ns
storePathRootDir=$home/store
storePathCommitLog=$home/store/commitlog
autoCreateTopicEnable=true
autoCreateSubscriptionGroup=true
popConsumerKVServiceInit=true
popConsumerKVServiceEnable=true
enablePopBufferMerge=false
EOF
  for kv in "$@"; do echo "$kv" >>"$home/broker.conf"; done
  java_cmd "$home" "$lib" 768m
  ROCKETMQ_HOME=$home start_bg "$name" "$home/broker.out" "${JAVA_CMD[@]}" \
    org.apache.rocketmq.broker.BrokerStartup -c "$home/broker.conf" >/dev/null
  for _ in $(seq 1 180); do
    grep -q "boot success" "$home/broker.out" 2>/dev/null && return 0
    kill -0 "$(cat "$work/pids/$name.pid")" 2>/dev/null || { tail -30 "$home/broker.out" >&2; return 1; }
    sleep 1
  done
  echo "rmq: broker $name did not boot" >&2
  return 1
}

# wait_brokers NS_PORT N SECONDS: wait until the name server on 127.0.0.1:NS_PORT lists N brokers in
# GET_BROKER_CLUSTER_INFO (106). A proxy started before any broker registered fails to start (it
# creates its DefaultHeartBeatSyncerTopic on the cluster's brokers).
wait_brokers() {
  python3 - "$@" <<'PY'
import json, socket, struct, sys, time
port, n, secs = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
deadline = time.time() + secs
seen = -1
while time.time() < deadline:
    try:
        s = socket.create_connection(("127.0.0.1", port), timeout=2)
        h = json.dumps({"code": 106, "flag": 0, "language": "JAVA", "opaque": 1,
                        "serializeTypeCurrentRPC": "JSON", "version": 479}).encode()
        s.sendall(struct.pack(">ii", 4 + len(h), len(h)) + h)
        buf = b""
        while len(buf) < 4 or len(buf) < 4 + struct.unpack(">i", buf[:4])[0]:
            chunk = s.recv(65536)
            if not chunk:
                break
            buf += chunk
        s.close()
        hl = struct.unpack(">i", buf[4:8])[0] & 0xFFFFFF
        body = buf[8 + hl:].decode("utf-8", "replace")
        seen = body.count('"brokerName"')
        if seen >= n:
            sys.exit(0)
    except (OSError, struct.error, ValueError):
        pass
    time.sleep(0.3)
sys.exit(f"rmq: the name server on 127.0.0.1:{port} lists {seen} broker(s) after {secs:.0f}s, want {n}")
PY
}

#!/usr/bin/env bash
# Real-client interop suite: the Apache RocketMQ Java client (Maven, JUnit 5) and rocketmq-client-go v2
# against a freshly built popshim; rocketmq-proxy 5.5.0 in cluster mode in front of popshim with the v5
# gRPC clients (Java and Go); a cluster of two popshim brokers under an Apache name server; mqadmin.
#
# Usage: testdata/interop/run.sh [java|go|proxy|cluster|mqadmin|grpc|all]     (default all)
#   java     Java remoting client 5.5.0 against popshim (testdata/interop/java)
#   go       rocketmq-client-go v2 against popshim (testdata/interop/go)
#   proxy    popshim (embedded name server) + rocketmq-proxy: rocketmq-client-java 5.x (testdata/interop/proxy,
#            P*Test) and the Go v5 client (testdata/interop/gov5, its own Go module)
#   cluster  Apache name server 5.5.0 + two popshim brokers (--namesrv-addr) + rocketmq-proxy on that name
#            server: POP push consumer and v5 SimpleConsumer on both brokers, SIGKILL of one (C*Test)
#   grpc     the v5 SDKs straight to popshim's own gRPC endpoint (--grpc-listen), no proxy: the proxy
#            suite's Java scenarios (P*Test, rocketmq-client-java; P7's transactions too) with their
#            endpoint pointed at popshim, and the grpcdirect clients (Go v5.1.4 module with its
#            transactional producer and recall, Python rocketmq-python-client, Node rocketmq-client-nodejs;
#            installed under ~/.cache/popshim-v5 when missing), each over plaintext and over TLS on the same
#            port (--tls-mode permissive); then two brokers on an Apache name server, the Go v5 client
#            sending to and receiving from both through the first one's route
#   mqadmin  rocketmq-tools 5.5.0 (mqadmin) against popshim: users and ACLs (--auth-enabled), subscription groups, deleteTopic, topicStatus, consumerProgress, consumer/producerConnection, producer -b, getBrokerConfig, resetOffsetByTime, exportMetadata -c, clusterList, brokerStatus, queryMsgByKey/UniqueKey/Id, statsAll, consumerStatus, queryMsgById -g -d, queryMsgByUniqueKey -g -d and queryMsgById -s true against a live Java consumer (mqadmin_test.sh)
# `all` runs four lanes at once (java+go, proxy+cluster, mqadmin, grpc), each printed whole when it ends.
# Env:   INTEROP_SERIAL=1         run the suites one after another instead
#        INTEROP_JAVA_TESTS=S2*   run only matching Java test classes (surefire -Dtest)
#        INTEROP_PROXY_TESTS=P1*  the same for the proxy suite (INTEROP_CLUSTER_TESTS for the cluster suite,
#                                 INTEROP_GRPC_TESTS for the grpc suite's Java part)
#        INTEROP_KEEP=1           keep the work directory (popshim logs, data, client logs)
#        POPSHIM_BIN=path         use this popshim binary instead of building one (make interop does)
#        POPSHIM_EXTRA_ARGS="…"   extra flags for every `popshim serve` the Java suite starts
#
# Each suite starts and stops its own popshim processes from the binary built here (the Java restart
# scenario has to), on free loopback ports, each with its own data directory under one work directory.
# Every popshim writes its pid to $work/pids; the EXIT trap kills whatever is still listed there, so no
# broker outlives this script, whatever happens.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
what=${1:-all}
case "$what" in java|go|proxy|cluster|mqadmin|grpc|all) ;; *) echo "usage: $0 [java|go|proxy|cluster|mqadmin|grpc|all]" >&2; exit 2 ;; esac

work=$(mktemp -d "${TMPDIR:-/tmp}/popshim-interop.XXXXXX")
mkdir -p "$work/pids"

cleanup() {
  local rc=$?
  local f pid
  for f in "$work"/pids/*.pid; do
    [ -e "$f" ] || continue
    pid=$(cat "$f")
    # each popshim is its own process group leader (setsid / Setpgid): kill the group, then the pid
    kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
  done
  sleep 1
  for f in "$work"/pids/*.pid; do
    [ -e "$f" ] || continue
    pid=$(cat "$f")
    kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true
  done
  if [ "$rc" -ne 0 ] || [ -n "${INTEROP_KEEP:-}" ]; then
    echo "interop: work directory kept: $work (popshim logs under */popshim-*.log)" >&2
  else
    rm -rf "$work"
  fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
# Apache RocketMQ parts (jar cache, free ports, start_bg/stop_bg with pid files in $work/pids)
# shellcheck source=rmq.sh
. "$here/rmq.sh"

# surefire_summary DIR LABEL: one plain line from surefire's XML reports (mvn -q hides its own summary)
surefire_summary() {
  python3 - "$1" "$2" <<'PY' || true
import glob, sys, xml.etree.ElementTree as ET
t = f = e = s = 0
for p in glob.glob(sys.argv[1] + "/TEST-*.xml"):
    r = ET.parse(p).getroot()
    t += int(r.get("tests", 0)); f += int(r.get("failures", 0)); e += int(r.get("errors", 0)); s += int(r.get("skipped", 0))
print(f"{sys.argv[2]}: {t - f - e - s} passed, {f + e} failed, {s} skipped")
PY
}

# popshim_script NAME [HOST:]PORT ARGS...: writes $work/NAME/start.sh, which starts popshim NAME on
# HOST:PORT (default host 127.0.0.1, also its --broker-ip) with its data in $work/NAME/data (kept across starts), a new log file per start, pid in
# $work/pids/NAME.pid, and waits until it listens; prints the script's path. The cluster suite runs it
# again to restart a killed broker. The gRPC endpoint is off (the default :8081 may be taken by anything on
# the machine); a suite that wants it passes --grpc-listen among ARGS (the last value wins).
popshim_script() {
  local name=$1 port=$2 dir=$work/$1 q host=127.0.0.1
  case "$port" in *:*) host=${port%:*}; port=${port##*:} ;; esac
  shift 2
  mkdir -p "$dir/data"
  # shellcheck disable=SC2086
  q=$(printf '%q ' "$bin" serve --listen "$host:$port" --broker-ip "$host" --grpc-listen= \
    --metrics-listen "127.0.0.1:$(free_port)" --data-dir "$dir/data" --log-format console ${POPSHIM_EXTRA_ARGS:-} "$@")
  {
    echo '#!/usr/bin/env bash'
    echo 'set -euo pipefail'
    echo "work=$(printf '%q' "$work")"
    echo ". $(printf '%q' "$here/rmq.sh")"
    echo "n=\$(find $(printf '%q' "$dir") -maxdepth 1 -name 'popshim-*.log' | wc -l)"
    echo "start_bg $name $(printf '%q' "$dir")/popshim-\$n.log $q >/dev/null"
    echo "wait_port $host:$port 30 $name"
  } >"$dir/start.sh"
  echo "$dir/start.sh"
}

start=$(date +%s)
if [ -n "${POPSHIM_BIN:-}" ]; then
  [ -x "$POPSHIM_BIN" ] || { echo "interop: POPSHIM_BIN=$POPSHIM_BIN is not executable" >&2; exit 2; }
  bin=$(cd "$(dirname "$POPSHIM_BIN")" && pwd)/$(basename "$POPSHIM_BIN")
  echo "interop: using $bin"
else
  echo "interop: building popshim"
  bin="$work/popshim"
  (cd "$root" && go build -o "$bin" .)
fi


suite_java() {
  local ok=1 t0
  t0=$(date +%s)
  echo "interop: Java suite (org.apache.rocketmq:rocketmq-client, JUnit 5)"
  mvn_args=(-B -q -f "$here/java/pom.xml"
    "-Dpopshim.bin=$bin" "-Dpopshim.workdir=$work/java"
    "-Dpopshim.extraArgs=${POPSHIM_EXTRA_ARGS:-}")
  if [ -n "${INTEROP_JAVA_TESTS:-}" ]; then
    mvn_args+=("-Dtest=${INTEROP_JAVA_TESTS}" -Dsurefire.failIfNoSpecifiedTests=false)
  fi
  mkdir -p "$work/java"
  rm -rf "$here/java/target/surefire-reports"
  if ! mvn "${mvn_args[@]}" test; then
    ok=0
    echo "interop: Java suite failed; per-class output: $here/java/target/surefire-reports/" >&2
  fi
  surefire_summary "$here/java/target/surefire-reports" java-interop
  echo "interop: Java suite took $(( $(date +%s) - t0 )) s"
  [ "$ok" = 1 ]
}

suite_go() {
  echo "interop: Go suite (github.com/apache/rocketmq-client-go/v2)"
  mkdir -p "$work/go"
  # testdata/interop/go is its own Go module (go mod tidy of the root skips testdata/)
  if ! (cd "$here/go" && POPSHIM_BIN="$bin" POPSHIM_WORKDIR="$work/go" \
      go test -count=1 -tags interop -timeout 10m -v -run 'TestGoClient' .); then
    echo "interop: Go suite failed" >&2
    return 1
  fi
}

# proxy_tls_up NAMESRV GRPC_PORT REMOTING_PORT: starts proxy-p with -Dtls.enable=true; one more try when
# the first start fails. Seen at load average ~20 with three lanes running: the proxy's first remoting
# call over TLS (its route look-up of the cluster, 3 s timeout, JCA and SslContext set-up included) timed
# out, popshim logged the client closing mid-handshake, and the proxy gave up creating
# DefaultHeartBeatSyncerTopic. The retry is printed, so a run that needed it is visible in the log.
proxy_tls_up() {
  RMQ_JAVA_OPTS=-Dtls.enable=true rmq_proxy proxy-p "$@" && return 0
  echo "interop: proxy-p did not start (first try, over TLS): $(grep -m1 -E 'ProxyException|Exception:' "$work/proxy-p/proxy.out" 2>/dev/null); trying once more" >&2
  stop_bg proxy-p 10
  mv "$work/proxy-p" "$work/proxy-p.first"
  sleep 2
  RMQ_JAVA_OPTS=-Dtls.enable=true rmq_proxy proxy-p "$@"
}

suite_proxy() {
  local ok=1 t0 bp np gp rp gotopic
  t0=$(date +%s)
  echo "interop: proxy suite (rocketmq-proxy $RMQ_VERSION in cluster mode on popshim; rocketmq-client-java, Go v5 client)"
  bp=$(free_port); np=$(free_port); gp=$(free_port); rp=$(free_port)
  rm -rf "$here/proxy/target/surefire-reports"
  # The proxy reaches popshim over TLS: popshim refuses plaintext on both ports (--tls-mode enforcing,
  # a throw-away self-signed certificate), and the proxy's remoting client, the suite's own remoting
  # clients and mqadmin run with -Dtls.enable=true. The cluster suite keeps plaintext proxy → popshim.
  mkdir -p "$work/tls"
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 -subj /CN=popshim-interop \
    -addext subjectAltName=IP:127.0.0.1 -keyout "$work/tls/key.pem" -out "$work/tls/cert.pem" 2>"$work/tls/openssl.log"
  # --transaction-check-interval 2s: P7TransactionTest's orphaned transactions are checked soon after the
  # proxy's producer-group heartbeat (every 20 s) instead of up to 30 s later.
  if bash "$(popshim_script popshim-p "$bp" --namesrv-listen "127.0.0.1:$np" --tls-mode enforcing \
        --tls-cert "$work/tls/cert.pem" --tls-key "$work/tls/key.pem" --transaction-check-interval 2s)" && wait_port "$np" 30 popshim-p \
      && proxy_tls_up "127.0.0.1:$np" "$gp" "$rp"; then
    echo "interop: proxy on 127.0.0.1:$gp (jars: $(rmq_jars proxy)), popshim on 127.0.0.1:$bp, name server 127.0.0.1:$np"
    mvn_args=(-B -q -f "$here/proxy/pom.xml" "-Dtest=${INTEROP_PROXY_TESTS:-P*Test}" -Dsurefire.failIfNoSpecifiedTests=false
      -Dtls.enable=true "-Dinterop.proxy=127.0.0.1:$gp" "-Dinterop.namesrv=127.0.0.1:$np"
      "-Dinterop.logs=$work/popshim-p/popshim-0.log:$work/proxy-p/proxy.out:$work/proxy-p/logs/rocketmqlogs/proxy.log")
    mvn "${mvn_args[@]}" test || { ok=0; echo "interop: proxy Java suite failed; per-class output: $here/proxy/target/surefire-reports/" >&2; }
    surefire_summary "$here/proxy/target/surefire-reports" proxy-java-interop
    # The Go test needs an existing topic (through an Apache name server a v5 producer cannot create one).
    gotopic=gov5_$(date +%s)
    if MQADMIN_JAVA_OPTS=-Dtls.enable=true "$here/mqadmin.sh" -n "127.0.0.1:$np" updateTopic -c DefaultCluster -t "$gotopic" -r 4 -w 4 >"$work/gov5-topic.log" 2>&1 \
        && (cd "$here/gov5" && INTEROP_PROXY="127.0.0.1:$gp" INTEROP_TOPIC="$gotopic" \
          go test -count=1 -timeout 5m -v -run 'TestV5' . >"$work/gov5-test.log" 2>&1); then
      grep -E '^(--- |ok|FAIL)' "$work/gov5-test.log" || true
      echo "proxy-go-interop: 1 passed, 0 failed"
    else
      ok=0
      grep -E '^(--- |ok|FAIL)|_test.go:[0-9]+:' "$work/gov5-test.log" 2>/dev/null | head -20 || true
      echo "proxy-go-interop: 0 passed, 1 failed (go test log: $work/gov5-test.log, topic creation: $work/gov5-topic.log)"
    fi
  else
    ok=0
    echo "interop: could not start popshim and the proxy (logs under $work/popshim-p, $work/proxy-p)" >&2
  fi
  stop_bg proxy-p 20
  stop_bg popshim-p 20
  echo "interop: proxy suite took $(( $(date +%s) - t0 )) s"
  [ "$ok" = 1 ]
}

suite_cluster() {
  local ok=1 t0 cns pa pb gp rp sa sb
  t0=$(date +%s)
  echo "interop: cluster suite (Apache name server $RMQ_VERSION, two popshim brokers, rocketmq-proxy on that name server)"
  cns=$(free_port); pa=$(free_port); pb=$(free_port); gp=$(free_port); rp=$(free_port)
  rm -rf "$here/proxy/target/surefire-reports"
  sa=$(popshim_script popshim-a "$pa" --namesrv-addr "127.0.0.1:$cns" --broker-name popshim-a --namesrv-listen '')
  sb=$(popshim_script popshim-b "$pb" --namesrv-addr "127.0.0.1:$cns" --broker-name popshim-b --namesrv-listen '')
  proxy_up() {
    rmq_proxy proxy-c "127.0.0.1:$cns" "$gp" "$rp" && return 0
    # A proxy's first start creates DefaultHeartBeatSyncerTopic with UPDATE_AND_CREATE_TOPIC and checks the
    # name server for its route right away, three times without a pause; a Java broker registers the topic
    # before it answers, so that check passes. Counted as a failure, then retried once so that the rest of
    # the suite still runs (the topic is registered by then).
    ok=0
    echo "cluster-interop: FAIL the proxy did not start on the cluster (first start; see $work/proxy-c/proxy.out):" >&2
    grep -m1 -E 'ProxyException|Exception:' "$work/proxy-c/proxy.out" >&2 || true
    stop_bg proxy-c 10
    mv "$work/proxy-c" "$work/proxy-c.first"
    sleep 2
    rmq_proxy proxy-c "127.0.0.1:$cns" "$gp" "$rp"
  }
  if rmq_namesrv namesrv-c "$cns" && bash "$sa" && bash "$sb" && wait_brokers "$cns" 2 60 && proxy_up; then
    # C2 first: after C1's kill -9 the proxy did not POP the restarted broker in time (pom.xml, interop.runOrder)
    mvn_args=(-B -q -f "$here/proxy/pom.xml" "-Dtest=${INTEROP_CLUSTER_TESTS:-C*Test}" -Dsurefire.failIfNoSpecifiedTests=false
      -Dinterop.runOrder=reversealphabetical
      "-Dinterop.proxy=127.0.0.1:$gp" "-Dinterop.namesrv=127.0.0.1:$cns"
      "-Dinterop.brokers=popshim-a=127.0.0.1:$pa,popshim-b=127.0.0.1:$pb" "-Dinterop.pids=$work/pids"
      "-Dinterop.start.popshim-a=$sa" "-Dinterop.start.popshim-b=$sb"
      "-Dinterop.logs=$work/popshim-a/popshim-0.log:$work/popshim-b/popshim-0.log:$work/proxy-c/proxy.out")
    mvn "${mvn_args[@]}" test || { ok=0; echo "interop: cluster suite failed; per-class output: $here/proxy/target/surefire-reports/" >&2; }
    surefire_summary "$here/proxy/target/surefire-reports" cluster-interop
  else
    ok=0
    echo "interop: could not start the name server, the brokers and the proxy (logs under $work)" >&2
  fi
  stop_bg proxy-c 20
  stop_bg popshim-a 20
  stop_bg popshim-b 20
  stop_bg namesrv-c 20
  echo "interop: cluster suite took $(( $(date +%s) - t0 )) s"
  [ "$ok" = 1 ]
}

suite_mqadmin() {
  local ok=1 t0 bp np abp anp apw attempt
  t0=$(date +%s)
  echo "interop: mqadmin suite (org.apache.rocketmq:rocketmq-tools $RMQ_VERSION)"
  bp=$(free_port); np=$(free_port)
  if bash "$(popshim_script popshim-m "$bp" --namesrv-listen "127.0.0.1:$np")" && wait_port "$np" 30 popshim-m \
      && rmq_lib tools >/dev/null; then
    # A second popshim with ACL 2.0 on for M18–M20; its super user's password comes from the environment.
    # Ports are picked at random and the lanes run at once, so a start that fails is tried once more
    # on fresh ports; a second failure fails the suite (M18–M20 must not be skipped in silence).
    apw=mq-root-$RANDOM$RANDOM
    for attempt in 1 2; do
      abp=$(free_port); anp=$(free_port)
      if POPSHIM_AUTH_ADMIN_PASSWORD=$apw bash "$(popshim_script popshim-ma "$abp" --namesrv-listen "127.0.0.1:$anp" \
          --auth-enabled --auth-admin-user mqadmin-root)" && wait_port "$anp" 30 popshim-ma; then
        export MQADMIN_AUTH_NS="127.0.0.1:$anp" MQADMIN_AUTH_BROKER="127.0.0.1:$abp"
        export MQADMIN_AUTH_USER=mqadmin-root MQADMIN_AUTH_PASSWORD=$apw
        break
      fi
      echo "mqadmin-interop: the ACL popshim did not start (attempt $attempt); its log:" >&2
      tail -20 "$(ls -t "$work"/popshim-ma/popshim-*.log 2>/dev/null | head -1)" >&2 2>/dev/null || true
      stop_bg popshim-ma 20
    done
    if [ -z "${MQADMIN_AUTH_NS:-}" ]; then
      ok=0
      echo "mqadmin-interop: M18–M20 cannot run without the ACL popshim" >&2
    fi
    MQADMIN_DATA_DIR="$work/popshim-m/data" POPSHIM_BIN="$bin" bash "$here/mqadmin_test.sh" "127.0.0.1:$np" "127.0.0.1:$bp" || ok=0
    stop_bg popshim-ma 20
    if grep -q -- "$apw" "$work"/popshim-ma/popshim-*.log 2>/dev/null; then
      echo "mqadmin-interop: the admin password is in popshim's log" >&2
      ok=0
    fi
  else
    ok=0
    echo "mqadmin-interop: could not start popshim or fetch rocketmq-tools" >&2
  fi
  stop_bg popshim-m 20
  echo "interop: mqadmin suite took $(( $(date +%s) - t0 )) s"
  [ "$ok" = 1 ]
}

# grpc_client NAME LOG ENV...: one grpcdirect client run (grpcdirect/run.sh NAME with ENV set), its log
# kept in LOG; prints a one-line result (for Go, its tests' counts; else the script as one test), returns
# its status.
grpc_client() {
  local name=$1 log=$2 p f s
  shift 2
  if env "$@" bash "$here/grpcdirect/run.sh" "${name%%-*}" >"$log" 2>&1; then
    if [ "${name%%-*}" = go ]; then
      p=$(grep -c -- '^--- PASS' "$log" || true); s=$(grep -c -- '^--- SKIP' "$log" || true)
      echo "grpc-$name: $p passed, 0 failed, $s skipped"
    else
      echo "grpc-$name: 1 passed, 0 failed"
    fi
    return 0
  fi
  tail -15 "$log" | sed "s/^/  grpc-$name: /"
  if [ "${name%%-*}" = go ] && grep -q -- '^--- ' "$log"; then
    p=$(grep -c -- '^--- PASS' "$log" || true); f=$(grep -c -- '^--- FAIL' "$log" || true)
    echo "grpc-$name: $p passed, $f failed (log: $log)"
  else
    echo "grpc-$name: 0 passed, 1 failed (log: $log)"
  fi
  return 1
}

# grpc_two_brokers: an Apache name server and two popshim brokers registered with it, each serving gRPC
# on the same port of its own loopback address (127.0.0.1 and 127.0.0.2: popshim's route rule gives
# every other broker its own host with this endpoint's port); the Go v5 client, configured with the
# first one only, sends to and receives from both (grpcdirect TestTwoBrokers).
grpc_two_brokers() {
  local cns pa pb gp topic rc=0
  cns=$(free_port); pa=$(free_port); pb=$(free_port); gp=$(free_port)
  topic=grpc2b_$(date +%s)
  if rmq_namesrv namesrv-g "$cns" \
      && bash "$(popshim_script popshim-ga "$pa" --namesrv-addr "127.0.0.1:$cns" --broker-name popshim-ga \
        --namesrv-listen '' --grpc-listen "127.0.0.1:$gp")" \
      && bash "$(popshim_script popshim-gb "127.0.0.2:$pb" --namesrv-addr "127.0.0.1:$cns" --broker-name popshim-gb \
        --namesrv-listen '' --grpc-listen "127.0.0.2:$gp")" \
      && wait_brokers "$cns" 2 60 \
      && "$here/mqadmin.sh" -n "127.0.0.1:$cns" updateTopic -c DefaultCluster -t "$topic" -r 4 -w 4 >"$work/grpc-2b-topic.log" 2>&1; then
    if (cd "$here/grpcdirect" && POPSHIM_GRPC_ENDPOINT="127.0.0.1:$gp" POPSHIM_GRPC_TOPIC="$topic" POPSHIM_GRPC_TWO_BROKERS=true \
        go test -count=1 -timeout 5m -v -run TestTwoBrokers . >"$work/grpc-2b.log" 2>&1); then
      echo "grpc-go-two-brokers: 1 passed, 0 failed"
    else
      rc=1
      grep -E '^(--- |ok|FAIL)|_test.go:[0-9]+:' "$work/grpc-2b.log" | head -20 || true
      echo "grpc-go-two-brokers: 0 passed, 1 failed (log: $work/grpc-2b.log)"
    fi
  else
    rc=1
    echo "grpc-go-two-brokers: 0 passed, 1 failed (could not start the name server and two brokers, or create $topic; logs under $work)"
  fi
  stop_bg popshim-ga 20
  stop_bg popshim-gb 20
  stop_bg namesrv-g 20
  return "$rc"
}

suite_grpc() {
  local ok=1 t0 bp np gp ep c txtopic dltopic
  t0=$(date +%s)
  echo "interop: grpc suite (v5 SDKs straight to popshim's gRPC endpoint: rocketmq-client-java P*Test, Go, Python, Node)"
  bp=$(free_port); np=$(free_port); gp=$(free_port)
  mkdir -p "$work/tls-g"
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 -subj /CN=popshim-grpc \
    -addext subjectAltName=IP:127.0.0.1 -keyout "$work/tls-g/key.pem" -out "$work/tls-g/cert.pem" 2>"$work/tls-g/openssl.log"
  # --transaction-check-interval 2s: the orphaned transactions of P7 and of the Go transactional producer
  # are checked (RecoverOrphanedTransactionCommand on the producer's Telemetry stream) soon after the 6 s
  # --transaction-timeout; --recall-message-enable for the Go client's Recall.
  if bash "$(popshim_script popshim-g "$bp" --namesrv-listen "127.0.0.1:$np" --grpc-listen "127.0.0.1:$gp" \
        --tls-mode permissive --tls-cert "$work/tls-g/cert.pem" --tls-key "$work/tls-g/key.pem" \
        --transaction-check-interval 2s --recall-message-enable)" \
      && wait_port "$gp" 30 popshim-g && wait_port "$np" 30 popshim-g; then
    ep=127.0.0.1:$gp
    echo "interop: popshim gRPC on $ep (TLS and plaintext), remoting on 127.0.0.1:$bp, name server 127.0.0.1:$np"
    # The proxy suite's Java scenarios, their endpoint pointed at popshim (plaintext, as there). A copy of
    # the Maven module: the proxy lane may build the original at the same time.
    rm -rf "$work/grpc-java"
    cp -r "$here/proxy" "$work/grpc-java"
    rm -rf "$work/grpc-java/target"
    mvn -B -q -f "$work/grpc-java/pom.xml" "-Dtest=${INTEROP_GRPC_TESTS:-P*Test}" -Dsurefire.failIfNoSpecifiedTests=false \
      "-Dinterop.proxy=$ep" "-Dinterop.namesrv=127.0.0.1:$np" "-Dinterop.logs=$work/popshim-g/popshim-0.log" test \
      || { ok=0; echo "interop: grpc Java scenarios failed; per-class output: $work/grpc-java/target/surefire-reports/" >&2; }
    surefire_summary "$work/grpc-java/target/surefire-reports" grpc-java-direct
    # The Go client's transactional producer and recall need topics of their message type (popshim, as the
    # proxy, checks a message's type against its topic; a v5 producer's route query creates NORMAL ones).
    txtopic=grpctxn_$(date +%s); dltopic=grpcdelay_$(date +%s)
    if ! { "$here/mqadmin.sh" -n "127.0.0.1:$np" updateTopic -c DefaultCluster -t "$txtopic" -r 4 -w 4 -a +message.type=TRANSACTION \
        && "$here/mqadmin.sh" -n "127.0.0.1:$np" updateTopic -c DefaultCluster -t "$dltopic" -r 4 -w 4 -a +message.type=DELAY; } \
        >"$work/grpc-topics.log" 2>&1; then
      ok=0
      echo "interop: could not create the Go client's TRANSACTION and DELAY topics (log: $work/grpc-topics.log); its transaction and recall tests skip" >&2
      txtopic=""; dltopic=""
    fi
    # grpcdirect: Go, Python and Node over plaintext, then over TLS (Python and Node verify the certificate).
    for c in go python node; do
      grpc_client "$c-plain" "$work/grpc-$c-plain.log" POPSHIM_GRPC_ENDPOINT="$ep" \
        POPSHIM_GRPC_TXN_TOPIC="$txtopic" POPSHIM_GRPC_DELAY_TOPIC="$dltopic" || ok=0
      grpc_client "$c-tls" "$work/grpc-$c-tls.log" POPSHIM_GRPC_ENDPOINT="$ep" POPSHIM_GRPC_TLS=true \
        GRPC_DEFAULT_SSL_ROOTS_FILE_PATH="$work/tls-g/cert.pem" \
        POPSHIM_GRPC_TXN_TOPIC="$txtopic" POPSHIM_GRPC_DELAY_TOPIC="$dltopic" || ok=0
    done
  else
    ok=0
    echo "interop: could not start popshim with its gRPC endpoint (logs under $work/popshim-g)" >&2
  fi
  stop_bg popshim-g 20
  grpc_two_brokers || ok=0
  if grep -E ' (ERR|WRN) ' "$work"/popshim-g*/popshim-*.log >"$work/grpc-popshim-warnings.log"; then
    echo "interop: popshim logged warnings or errors during the grpc suite (not a failure): $work/grpc-popshim-warnings.log"
  fi
  echo "interop: grpc suite took $(( $(date +%s) - t0 )) s"
  [ "$ok" = 1 ]
}

# run_lane NAME...: runs the named suites one after another (those `what` selects), recording each
# failed suite's name in $work/failed.
want() { [ "$what" = "$1" ] || [ "$what" = all ]; }
run_lane() {
  local s
  for s in "$@"; do
    if want "$s"; then
      "suite_$s" || echo "$s" >>"$work/failed"
    fi
  done
}

# The suites spend most of their time waiting on invisible times and revive (a serial run used about a
# quarter of two cores), so `all` runs four lanes at once, each with its own processes and free ports:
# java+go, proxy+cluster (one Maven module, so one after the other), mqadmin, grpc. With three lanes
# (mqadmin+grpc together, 2026-12-05: 258 + 408 s) that lane alone held `make test` for 11 minutes while the
# others had ended after 5. Each lane writes its own log, printed whole when all have ended.
# INTEROP_SERIAL=1 runs everything in one lane.
: >"$work/failed"
if [ "$what" = all ] && [ -z "${INTEROP_SERIAL:-}" ]; then
  echo "interop: four lanes at once (java+go, proxy+cluster, mqadmin, grpc); each lane's log follows when all have ended"
  lane_pids=()
  for lane in "java go" "proxy cluster" "mqadmin" "grpc"; do
    # shellcheck disable=SC2086
    run_lane $lane >"$work/lane-${lane%% *}.log" 2>&1 &
    lane_pids+=($!)
  done
  for i in "${!lane_pids[@]}"; do
    wait "${lane_pids[$i]}" || true
  done
  for lane in java proxy mqadmin grpc; do
    echo "===== interop lane $lane ====="
    cat "$work/lane-$lane.log"
  done
else
  run_lane java go proxy cluster mqadmin grpc
fi
mapfile -t failed <"$work/failed"

if [ ${#failed[@]} -gt 0 ]; then
  echo "interop: FAILED (${failed[*]}) after $(( $(date +%s) - start )) s" >&2
  exit 1
fi
echo "interop: done in $(( $(date +%s) - start )) s"

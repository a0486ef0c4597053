#!/usr/bin/env bash
# `make bench-anchor`: the same ACK/CHANGE workload as run.sh against Apache
# RocketMQ 5.5.1 (name server + broker on loopback, POP on the RocksDB KV
# path: popConsumerKVServiceInit=true, popConsumerKVServiceEnable=true,
# enablePopBufferMerge=false). Nothing of RocketMQ is committed: the jars
# come from Maven Central into $ANCHOR_CACHE on first use.
#
# Artifacts: org.apache.rocketmq:rocketmq-broker:5.5.1 with its runtime
# dependencies, and rocketmq-namesrv. When a module of 5.5.1 cannot be
# resolved (some mirrors carry only part of the release), the modules that
# are missing are taken at 5.5.0 (the broker, store, remoting, common and
# tiered-store jars stay 5.5.1); the script prints which jars it runs.
#
# Env (defaults in brackets): as run.sh (POPSHIM_BIN, BENCH_OUT, BENCH_DURATION,
# BENCH_MESSAGES, BENCH_CONNS, BENCH_INFLIGHT, BENCH_RATE, BENCH_CHANGE_BURST,
# BENCH_CHANGE_PERIOD, BENCH_ARGS, BENCH_KEEP) and
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

version=5.5.1
fallback=5.5.0
cache=${ANCHOR_CACHE:-$HOME/.cache/popshim-anchor}/$version
heap=${ANCHOR_HEAP:-1g}
bench_settings anchor
command -v java >/dev/null || { echo "anchor: java not found (apt-get install openjdk-17-jre-headless)" >&2; exit 2; }
command -v mvn >/dev/null || { echo "anchor: mvn not found (apt-get install maven)" >&2; exit 2; }

# pom DEP_MGMT: a throwaway pom depending on broker + namesrv $version; DEP_MGMT
# pins modules to another version.
pom() {
  cat <<EOF
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>popshim.bench</groupId>
  <artifactId>rocketmq-anchor</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencyManagement><dependencies>$1</dependencies></dependencyManagement>
  <dependencies>
    <dependency><groupId>org.apache.rocketmq</groupId><artifactId>rocketmq-broker</artifactId><version>$version</version></dependency>
    <dependency><groupId>org.apache.rocketmq</groupId><artifactId>rocketmq-namesrv</artifactId><version>$2</version></dependency>
  </dependencies>
</project>
EOF
}

fetch_jars() {
  local dir=$cache/pom
  mkdir -p "$dir"
  rm -rf "$cache/lib.tmp"
  pom "" "$version" >"$dir/pom.xml"
  echo "anchor: fetching rocketmq-broker and rocketmq-namesrv $version with Maven into $cache"
  if ! mvn -B -q -U -f "$dir/pom.xml" dependency:copy-dependencies -DincludeScope=runtime \
      -DoutputDirectory="$cache/lib.tmp" >"$cache/mvn.log" 2>&1; then
    local m="" a
    for a in rocketmq-client rocketmq-srvutil rocketmq-filter rocketmq-auth rocketmq-acl rocketmq-tools rocketmq-controller rocketmq-proxy; do
      m="$m<dependency><groupId>org.apache.rocketmq</groupId><artifactId>$a</artifactId><version>$fallback</version></dependency>"
    done
    echo "anchor: some $version modules did not resolve (see $cache/mvn.log); taking client/srvutil/filter/auth/tools/controller/namesrv at $fallback"
    pom "$m" "$fallback" >"$dir/pom.xml"
    rm -rf "$cache/lib.tmp"
    mvn -B -q -U -f "$dir/pom.xml" dependency:copy-dependencies -DincludeScope=runtime \
      -DoutputDirectory="$cache/lib.tmp" >"$cache/mvn.log" 2>&1 || { cat "$cache/mvn.log" >&2; exit 1; }
  fi
  mv "$cache/lib.tmp" "$cache/lib"
}
[ -e "$cache/lib/rocketmq-broker-$version.jar" ] || fetch_jars
echo "anchor: RocketMQ jars: $(cd "$cache/lib" && ls rocketmq-*.jar | tr '\n' ' ')"

home="$work/rmq"
mkdir -p "$home/store"
nsport=$(free_port_block 0)
bport=$(free_port_block 1)
cat >"$home/namesrv.conf" <<EOF
listenPort=$nsport
bindAddress=127.0.0.1
EOF
cat >"$home/broker.conf" <<EOF
brokerClusterName=DefaultCluster
brokerName=broker-a
brokerId=0
brokerIP1=127.0.0.1
bindAddress=127.0.0.1
listenPort=$bport
namesrvAddr=127.0.0.1:$nsport
storePathRootDir=$home/store
storePathCommitLog=$home/store/commitlog
autoCreateTopicEnable=true
autoCreateSubscriptionGroup=true
popConsumerKVServiceInit=true
popConsumerKVServiceEnable=true
enablePopBufferMerge=false
EOF
jvm=(-server -XX:+UseG1GC -Duser.home="$home" -Drocketmq.home.dir="$home" -cp "$cache/lib/*")
export ROCKETMQ_HOME="$home"
start_bg namesrv "$home/namesrv.out" java -Xms256m -Xmx256m "${jvm[@]}" \
  org.apache.rocketmq.namesrv.NamesrvStartup -c "$home/namesrv.conf" >/dev/null
wait_port 127.0.0.1 "$nsport" 120
bpid=$(start_bg broker "$home/broker.out" java "-Xms$heap" "-Xmx$heap" "${jvm[@]}" \
  org.apache.rocketmq.broker.BrokerStartup -c "$home/broker.conf")
echo "anchor: waiting for the broker (pid $bpid) on 127.0.0.1:$bport"
for _ in $(seq 1 300); do
  grep -q "boot success" "$home/broker.out" 2>/dev/null && break
  kill -0 "$bpid" 2>/dev/null || { cat "$home/broker.out" >&2; exit 1; }
  sleep 1
done
grep -q "boot success" "$home/broker.out" || { echo "anchor: broker did not boot" >&2; cat "$home/broker.out" >&2; exit 1; }
wait_port 127.0.0.1 "$bport" 30

machine_note | tee "$out/machine-anchor.txt"
# shellcheck disable=SC2086
"$bin" bench --addr "127.0.0.1:$bport" --broker-name broker-a --duration "$duration" --messages "$messages" \
  --conns "$conns" --inflight "$inflight" --rate "$rate" --change-burst "$burst" --change-period "$period" \
  --server-pid "$bpid" --label "rocketmq-$version" --json "$out/rocketmq-$version.json" --plot "$out/rocketmq-$version.svg" ${BENCH_ARGS:-}
stop_bg broker 60
stop_bg namesrv 30

reports=()
while read -r f; do reports+=("$f"); done < <(popshim_reports "$out")
[ -e "$out/rocketmq-$version.json" ] && reports+=("$out/rocketmq-$version.json")
for f in raw-storage heartbeat; do
  [ -e "$out/$f.json" ] && reports+=("$out/$f.json")
done
"$bin" bench compare "${reports[@]}" | tee "$out/compare.md"
echo "anchor: results in $out"

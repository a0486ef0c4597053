# Apache RocketMQ 5.5.1 from Maven jars, for testdata/bench/anchor.sh and
# cost.sh (sourced after lib.sh, not run). Nothing of RocketMQ is committed:
# the jars come from Maven Central into $ANCHOR_CACHE on first use:
# org.apache.rocketmq:rocketmq-broker:5.5.1 with its runtime dependencies,
# and rocketmq-namesrv. When a module of 5.5.1 cannot be resolved (some
# mirrors carry only part of the release), the modules that are missing are
# taken at 5.5.0 (the broker, store, remoting, common and tiered-store jars
# stay 5.5.1); rmq_setup prints which jars it runs.
#
# Common broker.conf: brokerIP1/bindAddress 127.0.0.1, auto-created topics
# and groups, -Xms/-Xmx $ANCHOR_HEAP (default 1g), G1. Env: ANCHOR_CACHE
# [~/.cache/popshim-anchor], ANCHOR_HEAP [1g]. Needs $work (with pids/) and
# $out.

version=5.5.1
fallback=5.5.0
cache=${ANCHOR_CACHE:-$HOME/.cache/popshim-anchor}/$version
heap=${ANCHOR_HEAP:-1g}

# pom DEP_MGMT NAMESRV_VERSION: a throwaway pom depending on broker $version
# and namesrv NAMESRV_VERSION; DEP_MGMT pins modules to another version.
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
  echo "rocketmq: fetching rocketmq-broker and rocketmq-namesrv $version with Maven into $cache"
  if ! mvn -B -q -U -f "$dir/pom.xml" dependency:copy-dependencies -DincludeScope=runtime \
      -DoutputDirectory="$cache/lib.tmp" >"$cache/mvn.log" 2>&1; then
    local m="" a
    for a in rocketmq-client rocketmq-srvutil rocketmq-filter rocketmq-auth rocketmq-acl rocketmq-tools rocketmq-controller rocketmq-proxy; do
      m="$m<dependency><groupId>org.apache.rocketmq</groupId><artifactId>$a</artifactId><version>$fallback</version></dependency>"
    done
    echo "rocketmq: some $version modules did not resolve (see $cache/mvn.log); taking client/srvutil/filter/auth/tools/controller/namesrv at $fallback"
    pom "$m" "$fallback" >"$dir/pom.xml"
    rm -rf "$cache/lib.tmp"
    mvn -B -q -U -f "$dir/pom.xml" dependency:copy-dependencies -DincludeScope=runtime \
      -DoutputDirectory="$cache/lib.tmp" >"$cache/mvn.log" 2>&1 || { cat "$cache/mvn.log" >&2; exit 1; }
  fi
  mv "$cache/lib.tmp" "$cache/lib"
}

# rmq_setup: check java and mvn, fetch the jars when missing, start the
# name server (sets home, jvm, nsport).
rmq_setup() {
  command -v java >/dev/null || { echo "rocketmq: java not found (apt-get install openjdk-17-jre-headless)" >&2; exit 2; }
  command -v mvn >/dev/null || { echo "rocketmq: mvn not found (apt-get install maven)" >&2; exit 2; }
  [ -e "$cache/lib/rocketmq-broker-$version.jar" ] || fetch_jars
  echo "rocketmq: jars: $(cd "$cache/lib" && ls rocketmq-*.jar | tr '\n' ' ')"
  home="$work/rmq"
  mkdir -p "$home"
  nsport=$(free_port_block 0)
  printf 'listenPort=%s\nbindAddress=127.0.0.1\n' "$nsport" >"$home/namesrv.conf"
  jvm=(-server -XX:+UseG1GC -Duser.home="$home" -Drocketmq.home.dir="$home" -cp "$cache/lib/*")
  export ROCKETMQ_HOME="$home"
  start_bg namesrv "$home/namesrv.out" java -Xms256m -Xmx256m "${jvm[@]}" \
    org.apache.rocketmq.namesrv.NamesrvStartup -c "$home/namesrv.conf" >/dev/null
  wait_port 127.0.0.1 "$nsport" 120
}

# broker_conf CONFIG: the broker.conf of one configuration (bport, store dir
# and namesrv filled in).
broker_conf() {
  cat <<EOF
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
EOF
  case $1 in
    kv) printf 'popConsumerKVServiceInit=true\npopConsumerKVServiceEnable=true\nenablePopBufferMerge=false\n' ;;
    default) ;;
    syncflush) printf 'flushDiskType=SYNC_FLUSH\n' ;;
    *) echo "rocketmq: unknown configuration '$1' (kv, default, syncflush)" >&2; exit 2 ;;
  esac
}

# rmq_start CONFIG: a fresh broker of that configuration (kv, default,
# syncflush; broker.conf copied to $out/rocketmq-CONFIG.conf) on a fresh
# store; sets addr, bname, spid (the JVM's pid) and murl ("").
rmq_start() {
  local t=$1
  bport=$(free_port_block 1)
  rm -rf "$home/store"; mkdir -p "$home/store"
  broker_conf "$t" >"$home/broker.conf"
  cp "$home/broker.conf" "$out/rocketmq-$t.conf"
  spid=$(start_bg broker "$home/broker-$t.out" java "-Xms$heap" "-Xmx$heap" "${jvm[@]}" \
    org.apache.rocketmq.broker.BrokerStartup -c "$home/broker.conf")
  echo "rocketmq: waiting for the broker ($t, pid $spid) on 127.0.0.1:$bport"
  for _ in $(seq 1 300); do
    grep -q "boot success" "$home/broker-$t.out" 2>/dev/null && break
    kill -0 "$spid" 2>/dev/null || { cat "$home/broker-$t.out" >&2; exit 1; }
    sleep 1
  done
  grep -q "boot success" "$home/broker-$t.out" || { echo "rocketmq: broker did not boot" >&2; exit 1; }
  wait_port 127.0.0.1 "$bport" 30
  addr=127.0.0.1:$bport bname=broker-a murl=""
}

rmq_stop() { stop_bg broker 60; }

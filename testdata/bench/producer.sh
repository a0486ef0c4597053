#!/usr/bin/env bash
# `make bench-producer`: what a produced message costs the server when the
# load is Apache RocketMQ's own benchmark Producer
# (org.apache.rocketmq.example.benchmark.Producer from rocketmq-example
# 5.5.0: PRODUCER_THREADS threads, each a synchronous send of a
# PRODUCER_SIZE-byte body at a time, all over the client's one connection),
# popshim against Apache RocketMQ 5.5.1 out of the box (rocketmq.sh's
# `default`), in interleaved rounds on fresh brokers (the order alternates
# from round to round). `make bench-cost` loads the server with `popshim
# bench produce` (16 connections × 32 pipelined SENDs); this load instead
# sends few frames per read and few messages per synced write, so the
# costs per read and per write weigh more.
#
# A round: a fresh broker, the Producer for PRODUCER_WARMUP seconds
# unmeasured, then PRODUCER_SECONDS measured between two of the
# Producer's own ten-second "Send TPS" lines: server CPU
# (/proc/<pid>/stat utime+stime) and write_bytes (/proc/<pid>/io) read as
# each line appears; messages are the lines' TPS × 10 s (sends answered
# SUCCESS; the last column counts the sends that failed meanwhile).
# Results in $BENCH_OUT/producer.md, each run's Producer output beside it.
#
# Env (defaults in brackets): POPSHIM_BIN, BENCH_OUT [bin/bench],
# BENCH_ROUNDS [3], PRODUCER_POPSHIM ["popshim=$POPSHIM_BIN"] (LABEL=PATH
# each), PRODUCER_ROCKETMQ [1] (0: no RocketMQ runs), PRODUCER_THREADS
# [64], PRODUCER_SIZE [1024], PRODUCER_WARMUP [60], PRODUCER_SECONDS [30]
# (a multiple of 10), ANCHOR_CACHE and ANCHOR_HEAP as rocketmq.sh.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/popshim-producer.XXXXXX")
mkdir -p "$work/pids"
# shellcheck source=lib.sh
. "$here/lib.sh"
trap cleanup EXIT
trap 'exit 130' INT TERM
bin=${POPSHIM_BIN:-$root/bin/popshim}
out=${BENCH_OUT:-$root/bin/bench}
mkdir -p "$out"
rounds=${BENCH_ROUNDS:-3}
threads=${PRODUCER_THREADS:-64}
size=${PRODUCER_SIZE:-1024}
warm=${PRODUCER_WARMUP:-60}
secs=${PRODUCER_SECONDS:-30}
lines=$((secs / 10))
[ "$lines" -ge 1 ] && [ $((lines * 10)) = "$secs" ] || { echo "producer: PRODUCER_SECONDS must be a multiple of 10" >&2; exit 2; }
popshims=${PRODUCER_POPSHIM:-popshim=$bin}
targets=""
for p in $popshims; do
  [ -x "${p#*=}" ] || { echo "producer: ${p%%=*}: ${p#*=} is not an executable" >&2; exit 2; }
  targets="$targets ${p%%=*}"
done
# shellcheck source=rocketmq.sh
. "$here/rocketmq.sh"
if [ "${PRODUCER_ROCKETMQ:-1}" = 1 ]; then
  rmq_setup
  targets="$targets rocketmq-$version-default"
fi

# The Producer's classpath: rocketmq-example 5.5.0 and its dependencies
# from Maven Central, resolved once into the anchor cache.
excp=${ANCHOR_CACHE:-$HOME/.cache/popshim-anchor}/example-5.5.0/cp.txt
if [ ! -s "$excp" ]; then
  mkdir -p "$(dirname "$excp")"
  cat >"$(dirname "$excp")/pom.xml" <<'EOF'
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>popshim.bench</groupId>
  <artifactId>rocketmq-producer</artifactId>
  <version>1</version>
  <dependencies>
    <dependency><groupId>org.apache.rocketmq</groupId><artifactId>rocketmq-example</artifactId><version>5.5.0</version></dependency>
  </dependencies>
</project>
EOF
  (cd "$(dirname "$excp")" && mvn -q -B dependency:build-classpath -Dmdep.outputFile="$excp" >mvn.log 2>&1) ||
    { cat "$(dirname "$excp")/mvn.log" >&2; echo "producer: cannot resolve rocketmq-example 5.5.0" >&2; exit 1; }
fi

# start LABEL: a fresh broker; sets spid and ns (its name server).
start() {
  local p
  for p in $popshims; do
    [ "${p%%=*}" = "$1" ] || continue
    local port mport
    port=$(free_port); mport=$(free_port); ns=127.0.0.1:$(free_port)
    rm -rf "$work/popshim"; mkdir -p "$work/popshim"
    spid=$(start_bg popshim "$work/popshim/popshim.log" "${p#*=}" serve --listen "127.0.0.1:$port" \
      --namesrv-listen "$ns" --grpc-listen= --metrics-listen "127.0.0.1:$mport" --broker-ip 127.0.0.1 \
      --data-dir "$work/popshim/data" --log-level warn)
    wait_port 127.0.0.1 "$port" 30
    return
  done
  rmq_start default >/dev/null
  ns=127.0.0.1:$nsport
}

stop() { stop_bg producer 10; if [ -e "$work/pids/popshim.pid" ]; then stop_bg popshim; else rmq_stop; fi; }

# tps_lines LOG: how many "Send TPS" lines LOG holds.
tps_lines() { grep -c 'Send TPS' "$1" || true; }

# wait_line LOG N: wait until LOG holds N "Send TPS" lines (at most 60 s
# past the time they are due).
wait_line() {
  local i
  for i in $(seq 1 $((($2 * 10 + 60) * 10))); do
    [ "$(tps_lines "$1")" -ge "$2" ] && return 0
    sleep 0.1
  done
  echo "producer: no Send TPS line $2 in $1" >&2
  tail -5 "$1" >&2
  exit 1
}

cpu() { awk '{print $14 + $15}' "/proc/$1/stat"; }
wbytes() { awk '/^write_bytes/ {print $2}' "/proc/$1/io"; }

results=$out/producer-runs.txt
: >"$results"
machine_note | tee "$out/machine-producer.txt"
for r in $(seq 1 "$rounds"); do
  order=$targets
  [ $((r % 2)) = 0 ] && order=$(echo "$targets" | tr ' ' '\n' | tac | tr '\n' ' ')
  for t in $order; do
    start "$t"
    log=$work/producer-$t-r$r.log
    start_bg producer "$log" java -Xms512m -Xmx512m -cp "$(cat "$excp")" \
      org.apache.rocketmq.example.benchmark.Producer -n "$ns" -t BenchmarkTest -w "$threads" -s "$size" >/dev/null
    first=$(((warm + 9) / 10))
    wait_line "$log" "$first"
    c0=$(cpu "$spid"); w0=$(wbytes "$spid")
    wait_line "$log" $((first + lines))
    c1=$(cpu "$spid"); w1=$(wbytes "$spid")
    msgs=$(grep 'Send TPS' "$log" | sed -n "$((first + 1)),$((first + lines))p" |
      grep -oE 'Send TPS: [0-9]+' | awk '{s += $3 * 10} END {print s + 0}')
    failed=$(grep 'Send TPS' "$log" | sed -n "$((first + 1)),$((first + lines))p" |
      grep -oE 'Send Failed: [0-9]+' | awk '{s += $3} END {print s + 0}')
    stop "$t"
    cp "$log" "$out/"
    [ "$msgs" -gt 0 ] || { echo "producer: $t sent nothing" >&2; tail -5 "$log" >&2; exit 1; }
    awk -v t="$t" -v r="$r" -v c=$((c1 - c0)) -v hz="$(getconf CLK_TCK)" -v m="$msgs" -v w=$((w1 - w0)) \
      -v s="$size" -v f="$failed" -v secs="$secs" 'BEGIN {
        printf "%s %d %.0f %.2f %.3f %d\n", t, r, m / secs, c / hz * 1e6 / m, w / (m * s), f }' | tee -a "$results"
  done
done

# The table: per target the median over rounds of msgs/s, server CPU µs per
# message and disk bytes per payload byte, and the CPU ratio to RocketMQ.
anchor=rocketmq-$version-default
{
  echo "RocketMQ's benchmark Producer (rocketmq-example 5.5.0), $threads threads, $size-byte bodies, ${secs} s measured after ${warm} s; $rounds rounds; medians (per round):"
  echo
  echo "| system | msgs/s | server CPU µs per message | disk bytes per payload byte | CPU ÷ RocketMQ's | sends failed |"
  echo "|---|--:|--:|--:|--:|--:|"
  for t in $targets; do
    awk -v t="$t" -v a="$anchor" -v rounds="$rounds" '
      function median(v, n,   i, j, x) {
        for (i = 2; i <= n; i++) { x = v[i]; for (j = i - 1; j >= 1 && v[j] > x; j--) v[j + 1] = v[j]; v[j + 1] = x }
        return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
      }
      $1 == t { n++; tps[n] = $3; us[n] = $4; by[n] = $5; list = list (list ? ", " : "") $4; ur[$2] = $4; failed += $6 }
      $1 == a { ar[$2] = $4; an++; av[an] = $4 }
      END {
        ratio = "n/a"; per = ""
        if (an > 0 && t != a) {
          for (r = 1; r <= rounds; r++) if ((r in ur) && (r in ar)) { k++; rr[k] = ur[r] / ar[r]; per = per (per ? ", " : "") sprintf("%.2f", ur[r] / ar[r]) }
          if (k > 0) ratio = sprintf("**%.2f** (%s)", median(rr, k), per)
        }
        printf "| %s | %.0f | %.1f (%s) | %.2f | %s | %d |\n", t, median(tps, n), median(us, n), list, median(by, n), ratio, failed
      }' "$results"
  done
} | tee "$out/producer.md"

#!/usr/bin/env bash
# Runs Apache RocketMQ's mqadmin (org.apache.rocketmq:rocketmq-tools 5.5.0, fetched from Maven Central
# into the cache of rmq.sh on first use) with the given arguments, against the name server NAMESRV_ADDR
# unless the arguments name one with -n.
#
#   testdata/interop/mqadmin.sh -n 127.0.0.1:9876 clusterList
#   NAMESRV_ADDR=127.0.0.1:9876 testdata/interop/mqadmin.sh topicRoute -t TopicTest
#   testdata/interop/mqadmin.sh updateSubGroup -n 127.0.0.1:9876 -c DefaultCluster -g G -r 3
#
# The command name may come before or after -n. stdout and stderr are mqadmin's; the exit code is 1
# when the command failed (mqadmin then prints "... command failed" and the cause to stderr, e.g.
# "CODE: 17  DESC: No topic route info in name server for the topic: T"), else 0.
# Env: MQADMIN_HOME  user.home of the JVM (mqadmin logs under it); default a fresh temp directory.
#      MQADMIN_JAVA_OPTS  extra JVM flags, e.g. -Dtls.enable=true for a popshim with --tls-mode enforcing.
#      MQADMIN_ACCESS_KEY, MQADMIN_SECRET_KEY  sign every request as that ACL user: mqadmin reads them from
#      $ROCKETMQ_HOME/conf/tools.yml (accessKey/secretKey, MQAdminStartup → AclUtils.getAclRPCHook), so a
#      fresh home with that file is used for this call.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=rmq.sh
. "$here/rmq.sh"
lib=$(rmq_lib tools)
home=${MQADMIN_HOME:-}
if [ -n "${MQADMIN_ACCESS_KEY:-}" ]; then
  home=""
fi
if [ -z "$home" ]; then
  home=$(mktemp -d "${TMPDIR:-/tmp}/mqadmin.XXXXXX")
  trap 'rm -rf "$home"' EXIT
fi
if [ -n "${MQADMIN_ACCESS_KEY:-}" ]; then
  mkdir -p "$home/conf"
  printf 'accessKey: %s\nsecretKey: %s\n' "$MQADMIN_ACCESS_KEY" "${MQADMIN_SECRET_KEY:-}" >"$home/conf/tools.yml"
fi
args=("$@")
cmd=""
for ((i = 0; i < ${#args[@]}; i++)); do
  case "${args[$i]}" in
    -n) i=$((i + 1)) ;;
    -*) ;;
    *) cmd=${args[$i]}; unset 'args[i]'; break ;;
  esac
done
[ -n "$cmd" ] || { echo "usage: $0 [-n host:port] COMMAND [ARGS...]" >&2; exit 2; }
has_n=0
for a in "${args[@]}"; do [ "$a" = -n ] && has_n=1; done
if [ "$has_n" = 0 ] && [ -n "${NAMESRV_ADDR:-}" ]; then
  args+=(-n "$NAMESRV_ADDR")
fi
# MQAdminStartup exits 0 even when the command failed: it prints the SubCommandException's stack trace
# ("<Command> command failed" and the cause) to stderr. That is turned into exit code 1 here.
err="$home/.mqadmin-stderr"
rc=0
# shellcheck disable=SC2086
ROCKETMQ_HOME=$home java -Xms64m -Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 ${MQADMIN_JAVA_OPTS:-} \
  "-Duser.home=$home" "-Drocketmq.home.dir=$home" -cp "$lib/*" \
  org.apache.rocketmq.tools.command.MQAdminStartup "$cmd" "${args[@]}" 2>"$err" || rc=$?
cat "$err" >&2
if [ "$rc" = 0 ] && grep -q -E 'command failed|SubCommandException|MQClientException|RemotingException' "$err"; then
  rc=1
fi
rm -f "$err"
exit "$rc"

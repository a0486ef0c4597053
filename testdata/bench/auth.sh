#!/usr/bin/env bash
# Cost of authentication and authorization: the `make bench`
# ACK/CHANGE workload against popshim with --auth-enabled (the bench client
# signs every request as AclClientRPCHook does: --access-key/--secret-key)
# and against popshim without it (unsigned client), interleaved round by
# round on fresh servers, then `popshim bench compare` (auth-on first, so
# its ratios read "auth-on ÷ auth-off" for throughput, "off ÷ on" for p99).
#
# The signing user is the initial super user (--auth-admin-user): each
# request pays the signature check (HMAC-SHA1 of its extFields), the user
# look-up and the resource derivation; a super user skips the policy match
# (BenchmarkCheckAck in auth measures a normal user's).
#
# Env: as run.sh (BENCH_OUT [bin/bench-auth], BENCH_ROUNDS [3],
# BENCH_DURATION, BENCH_MESSAGES, BENCH_CONNS, BENCH_INFLIGHT,
# BENCH_CHANGE_BURST, BENCH_CHANGE_PERIOD, BENCH_ARGS, BENCH_SERVE_ARGS,
# POPSHIM_BIN).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/popshim-bench-auth.XXXXXX")
mkdir -p "$work/pids"
# shellcheck source=lib.sh
. "$here/lib.sh"
trap cleanup EXIT
trap 'exit 130' INT TERM

BENCH_OUT=${BENCH_OUT:-$root/bin/bench-auth}
bench_settings bench-auth
rm -f "$out"/auth-*.json "$out/compare.md"
machine_note | tee "$out/machine.txt"
common=(--duration "$duration" --messages "$messages" --conns "$conns" --inflight "$inflight" --rate "$rate"
  --change-burst "$burst" --change-period "$period" --topic "bench_auth_t" --group "bench_auth_g")
secret=bench-$RANDOM$RANDOM$RANDOM
# The bench client reads the secret from the environment; the server gets
# it the same way (only the auth-on one: a password without a user is refused).
export POPSHIM_BENCH_SECRET_KEY=$secret

for round in $(seq 1 "$rounds"); do
for label in auth-on auth-off; do
  port=$(free_port); nport=$(free_port); mport=$(free_port)
  rm -rf "$work/$label"
  mkdir -p "$work/$label"
  pre=(env); serve=(); client=()
  if [ "$label" = auth-on ]; then
    pre=(env "POPSHIM_AUTH_ADMIN_PASSWORD=$secret")
    serve=(--auth-enabled --auth-admin-user bench-root)
    client=(--access-key bench-root)
  fi
  # shellcheck disable=SC2086
  pid=$(start_bg "$label" "$work/$label/popshim.log" "${pre[@]}" "$bin" serve --grpc-listen= \
    --listen "127.0.0.1:$port" --namesrv-listen "127.0.0.1:$nport" --metrics-listen "127.0.0.1:$mport" \
    --broker-ip 127.0.0.1 --data-dir "$work/$label/data" --log-level warn "${serve[@]}" ${BENCH_SERVE_ARGS:-})
  wait_port 127.0.0.1 "$port" 30
  wait_port 127.0.0.1 "$mport" 30
  echo "bench-auth: round $round/$rounds: $label (pid $pid) on 127.0.0.1:$port"
  # shellcheck disable=SC2086
  "$bin" bench --addr "127.0.0.1:$port" --broker-name popshim-a "${common[@]}" "${client[@]}" \
    --metrics-url "http://127.0.0.1:$mport/metrics" --server-pid "$pid" \
    --label "$label" --round "$round" --json "$out/$label-r$round.json" --quiet ${BENCH_ARGS:-}
  stop_bg "$label"
done
done

reports=()
for round in $(seq 1 "$rounds"); do reports+=("$out/auth-on-r$round.json" "$out/auth-off-r$round.json"); done
"$bin" bench compare "${reports[@]}" | tee "$out/compare.md"

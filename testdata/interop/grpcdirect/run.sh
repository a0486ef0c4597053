#!/usr/bin/env bash
# Runs the RocketMQ 5 SDKs (Go, Python, Node.js) straight against popshim's
# gRPC endpoint (--grpc-listen), no rocketmq-proxy. popshim must already be
# running; this script only installs the SDKs and runs the clients.
#
#   POPSHIM_GRPC_ENDPOINT=127.0.0.1:8081 testdata/interop/grpcdirect/run.sh [go|python|node|all]
#
# POPSHIM_GRPC_TLS=true switches every client to TLS (Python and Node verify
# the certificate: set GRPC_DEFAULT_SSL_ROOTS_FILE_PATH to its PEM);
# POPSHIM_GRPC_TOPIC picks the topic. The Go transactional producer and
# recall tests run when POPSHIM_GRPC_TXN_TOPIC and POPSHIM_GRPC_DELAY_TOPIC
# name topics with +message.type=TRANSACTION and DELAY (../run.sh grpc
# creates them with mqadmin; popshim there runs with
# --transaction-check-interval 2s --recall-message-enable). The Python venv and the npm packages go
# to POPSHIM_V5_CACHE (default ~/.cache/popshim-v5) and are reused.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cache=${POPSHIM_V5_CACHE:-$HOME/.cache/popshim-v5}
what=${1:-all}
: "${POPSHIM_GRPC_ENDPOINT:?set POPSHIM_GRPC_ENDPOINT to the gRPC host:port of popshim}"

run_go() {
	(cd "$here" && go test -count=1 -v .)
}

run_python() {
	if [ ! -x "$cache/py/bin/python" ]; then
		python3 -m venv "$cache/py"
	fi
	"$cache/py/bin/pip" install -q -r "$here/python/requirements.txt"
	"$cache/py/bin/python" "$here/python/simple.py"
}

run_node() {
	mkdir -p "$cache/node"
	cp "$here/node/package.json" "$cache/node/package.json"
	(cd "$cache/node" && npm install --no-audit --no-fund --silent)
	NODE_PATH="$cache/node/node_modules" node "$here/node/simple.js"
}

case "$what" in
go) run_go ;;
python) run_python ;;
node) run_node ;;
all) run_go; run_python; run_node ;;
*) echo "usage: $0 [go|python|node|all]" >&2; exit 2 ;;
esac

// Package stack is the popshim process: it turns the configuration into
// running components (the RocksDB store, the group-commit writer, the core
// broker.Broker behind its remoting adapter handler.Broker, the broker and
// name-server listeners, name-server registration) in start-up order, stops
// them in the reverse order, and serves /metrics and pprof over HTTP.
// Serve is what `popshim serve` runs, and it alone sets process-wide
// runtime knobs: the GC target and the soft memory limit, which it keeps
// following the live heap (memlimit.go); tests start a Stack through
// stack/stacktest.
//
// It owns wiring and lifecycle only. It must not hold broker logic (the
// core's), decode a request (the adapters'), or be imported by anything but
// main and test fixtures.
package stack

// Package stacktest is the one fixture of whole-stack tests: it starts an
// in-process popshim (stack.Stack: a real RocksDB in a temporary
// directory, the writer, the core, the broker, name-server and metrics
// listeners on 127.0.0.1 with ports picked by the kernel) and stops it when
// the test ends. The handler tests and the packages that drive a broker
// from outside (bench, tools, deploy) start their stacks through it; core
// operations are tested without sockets through broker/brokertest.
//
// It owns only that fixture. It must not be imported by non-test code, and
// it holds no assertions of its own beyond "the stack started and stopped".
package stacktest

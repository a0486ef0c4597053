// Package stacktest starts a whole in-process popshim (handler.Stack: a real
// RocksDB in a temporary directory, the writer, the broker, name-server and
// metrics listeners on 127.0.0.1 with ports picked by the kernel) for tests
// of the packages that drive a broker from outside: bench, tools, deploy.
//
// It owns only that fixture. It must not be imported by non-test code, and
// it holds no assertions of its own beyond "the stack started and stopped".
package stacktest

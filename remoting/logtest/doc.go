// Package logtest holds a log sink for tests whose logger is written by
// server goroutines while the test reads it: Buffer. Imported by tests only
// (remoting, grpcserver, stack, handler). It must not import any popshim package,
// so that remoting's own tests can use it.
package logtest

package stack

import (
	"github.com/popshim/popshim/handler"
	"github.com/popshim/popshim/popstore"
)

// Option adjusts StartStack for tests (the command line never sets one).
type Option func(*stackOptions)

// stackOptions are what Options set.
type stackOptions struct {
	writeHook    popstore.WriteHook
	beforeListen func(*handler.Broker)
	scribble     bool
}

// WithWriteHook wraps every synced store write in h
// (popstore.Options.WriteHook): tests slow the store down
// (popstore.DelayHook) or inject write faults with it.
func WithWriteHook(h popstore.WriteHook) Option {
	return func(o *stackOptions) { o.writeHook = h }
}

// WithBeforeListen calls f with the broker state after it is built and
// started and before any listener accepts a connection: tests replace a
// clock (clients.ClientTable.SetClock) there.
func WithBeforeListen(f func(*handler.Broker)) Option {
	return func(o *stackOptions) { o.beforeListen = f }
}

// WithScribbledBodies makes the broker listener overwrite every body it
// lends to a produce handler as soon as the handler returns
// (remoting.ServerOptions.ScribbleBorrowedBodies): a handler that keeps a
// borrowed body then stores garbage, and tests that read messages back
// fail. stacktest.Start always sets it.
func WithScribbledBodies() Option {
	return func(o *stackOptions) { o.scribble = true }
}

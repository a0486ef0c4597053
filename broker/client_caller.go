package broker

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/popshim/popshim/broker/clients"
)

// Routing of a forwarded call (GET_CONSUMER_RUNNING_INFO, 307;
// CONSUME_MESSAGE_DIRECTLY, 309; client_call.go) to a client that is not
// connected over the listener the admin used. A protocol adapter that
// owns client connections of its own (the gRPC endpoint: a v5 consumer's
// Telemetry stream) installs a ClientCaller; the remoting adapter asks
// CallClient first and forwards over its own connections when no caller
// owns the client's channel. Nothing here knows a protocol: the call and
// the answer are in the remoting form the admin sent and expects.

// ClientCall is one request forwarded to a client: the admin's request
// code (307 or 309), the client's group, id and channel (as
// ConsumerChannel found it), the fields to forward (the admin's, plus the
// ones consumeMessageDirectly adds) and the body (309: the stored message
// record, MessageDecoder layout; 307: none).
type ClientCall struct {
	Code     int32
	Group    string
	ClientID string
	Channel  clients.ClientChannel
	Fields   map[string]string
	Body     []byte
	// Timeout is how long to wait for the answer (ClientCallTimeout).
	Timeout time.Duration
}

// ClientAnswer is a client's answer to a ClientCall in the form of a
// remoting response: code, remark, language and version (zero: the
// listener's own), fields and body (307: a ConsumerRunningInfo JSON; 309:
// a ConsumeMessageDirectlyResult JSON).
type ClientAnswer struct {
	Code     int32
	Remark   string
	Language string
	Version  int32
	Fields   map[string]string
	Body     []byte
}

// ClientCaller sends a ClientCall to a client over a protocol adapter's
// own connection.
type ClientCaller interface {
	// CallClient reports false, doing nothing, when c.Channel is not a
	// connection of this adapter. Otherwise it sends c and arranges for
	// done to be called exactly once, without blocking: with the answer,
	// or with an *Error: CallTimeoutError (CONSUME_MSG_TIMEOUT, 207) when
	// none came within c.Timeout, CallFailedError (SYSTEM_ERROR, 1) when
	// the connection is gone or the call could not be sent. done may run
	// on the caller's goroutine (a call that could not be sent) or on
	// another. Must not block; any goroutine.
	CallClient(c ClientCall, done func(ClientAnswer, error)) bool
}

// clientCallers is the set of installed ClientCallers; the slice behind
// the pointer is never modified, AddClientCaller replaces it.
type clientCallers struct {
	mu  sync.Mutex // serialises replacements
	set atomic.Pointer[[]ClientCaller]
}

// AddClientCaller installs c, next to those installed before; remove
// takes it out again. c must be comparable (a pointer). Any goroutine,
// any time; the next CallClient sees the new set.
func (b *Broker) AddClientCaller(c ClientCaller) (remove func()) {
	b.callers.replace(func(cur []ClientCaller) []ClientCaller { return append(cur, c) })
	return func() {
		b.callers.replace(func(cur []ClientCaller) []ClientCaller {
			out := cur[:0]
			for _, x := range cur {
				if x != c {
					out = append(out, x)
				}
			}
			return out
		})
	}
}

// replace sets the caller set to f applied to a copy of the current one.
func (cc *clientCallers) replace(f func([]ClientCaller) []ClientCaller) {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	var cur []ClientCaller
	if p := cc.set.Load(); p != nil {
		cur = append(cur, *p...)
	}
	next := f(cur)
	cc.set.Store(&next)
}

// CallClient offers c to the installed ClientCallers in turn and reports
// whether one took it (then done is called exactly once, as
// ClientCaller.CallClient says); false: no caller owns c.Channel, done is
// not called and the caller forwards over its own connections. Any
// goroutine; never blocks.
func (b *Broker) CallClient(c ClientCall, done func(ClientAnswer, error)) bool {
	p := b.callers.set.Load()
	if p == nil {
		return false
	}
	for _, x := range *p {
		if x.CallClient(c, done) {
			return true
		}
	}
	return false
}

package remoting

import (
	"fmt"
	"net"

	"github.com/popshim/popshim/codec"
)

// Conn is the reply side of one client connection, handed to every handler.
// Any goroutine may call Reply, at any time, any number of times (a long
// poll replies long after the handler returned). After the connection closed,
// Reply returns net.ErrClosed and drops the frame.
type Conn interface {
	// Reply encodes resp as a JSON frame and queues it for writing on this
	// connection without blocking. Encoding happens on the caller's
	// goroutine; the bytes handed to gnet are not touched again until gnet's
	// write callback has run. The Conn a Server hands to a handler is a
	// per-request view: for a oneway request (flag bit 1) Reply sends
	// nothing and returns nil, so handlers need not check req.IsOneway().
	// Reply writes any Command, so a server-to-client request (flag 0) can
	// be sent through it too. A GO_AWAY (1500) response to a request whose
	// version is V5_3_1 or older leaves as SYSTEM_BUSY (2), same remark:
	// handlers answer GO_AWAY for "shutting down, nothing done" and need
	// not know the client's version. The first response to a request
	// settles it: a connection that sent a malformed frame closes once
	// every request before that frame was answered, and a large request
	// returns its read budget (ServerOptions.MaxReadBytes). Errors: net.ErrClosed
	// (connection gone), or gnet's error when the engine is shutting down.
	Reply(resp *codec.Command) error
	// RemoteAddr is the peer address.
	RemoteAddr() net.Addr
	// ID is unique per connection for the life of the process.
	ID() uint64
}

// HandlerFunc serves one request. It runs on the gnet event loop goroutine
// that decoded the frame, so it must never block: no RocksDB, no waiting on
// the writer, no sleeping. It answers through c.Reply, now or later, from any
// goroutine. req is owned by the handler (nothing aliases gnet's buffers),
// except the Body of a request whose handler was registered with
// Router.HandleBorrowing. A large request (over LargeFrameBytes) holds read budget until its first
// response or until its connection closes.
type HandlerFunc func(c Conn, req *codec.Command)

// Router is the dispatch table keyed by request code. Build it before the
// server starts; it is read-only afterwards and safe for concurrent reads.
type Router struct {
	handlers map[int32]HandlerFunc
	borrow   map[int32]bool // codes registered with HandleBorrowing
}

// NewRouter returns an empty table.
func NewRouter() *Router {
	return &Router{handlers: make(map[int32]HandlerFunc), borrow: make(map[int32]bool)}
}

// Handle registers h for code. Registering a code twice is a programming
// error and panics, so two files cannot silently claim one code.
func (r *Router) Handle(code int32, h HandlerFunc) {
	if _, dup := r.handlers[code]; dup {
		panic(fmt.Sprintf("remoting: request code %d registered twice", code))
	}
	r.handlers[code] = h
}

// HandleBorrowing registers h for code, as Handle, and lets the server
// hand h the request's Body without copying it out of the event loop's
// read buffer: req.Body is valid only until h returns, and h (with
// everything it calls before returning) must copy whatever part of it
// outlives the call. A request over LargeFrameBytes and a response frame
// own their Body as always. Used for the produce codes, whose handler
// encodes the stored record from the body before it returns (one copy of
// each body instead of two).
func (r *Router) HandleBorrowing(code int32, h HandlerFunc) {
	r.Handle(code, h)
	r.borrow[code] = true
}

// borrows reports whether code's handler takes a borrowed Body
// (HandleBorrowing).
func (r *Router) borrows(code int32) bool { return r.borrow[code] }

// Lookup returns the handler for code, or nil when none is registered (the
// server then answers REQUEST_CODE_NOT_SUPPORTED).
func (r *Router) Lookup(code int32) HandlerFunc { return r.handlers[code] }

// Codes lists the registered request codes, in no particular order.
func (r *Router) Codes() []int32 {
	out := make([]int32, 0, len(r.handlers))
	for c := range r.handlers {
		out = append(out, c)
	}
	return out
}

// MarkLongPolling labels the request behind c as long-polling
// (is_long_polling="true" in rocketmq_rpc_latency), so a parked POP does not
// pollute the latency of immediate answers. Call it from the handler, on any
// goroutine, before the Reply. It does nothing for a Conn that did not come
// from a Server dispatch.
func MarkLongPolling(c Conn) {
	if r, ok := c.(*request); ok {
		r.longPoll.Store(true)
	}
}

package grpcserver

import (
	"context"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"

	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/stats"
)

// Connection ids. The core releases what a connection holds (its parked
// long polls, its client registrations) by an id that must be unique
// across protocols (broker.Broker.ConnClosed). Remoting numbers its
// connections 1, 2, 3, … from one process-wide counter; the gRPC endpoint
// takes its ids from a second counter with the top bit set, so the two
// ranges never meet. Every gRPC connection gets one id (its client
// registrations and the polls of its unary calls), and every
// ReceiveMessage stream one more of its own: a stream the client abandons
// releases its parked POP at once while the connection stays up.
const grpcConnIDBit = 1 << 63

var nextConnID atomic.Uint64

// newConnID returns a fresh id in the gRPC range. Any goroutine.
func newConnID() uint64 { return grpcConnIDBit | nextConnID.Add(1) }

// connInfo is what the endpoint knows of one HTTP/2 connection: its id,
// the peer, and the client ids seen on it (a client instance normally uses
// one connection per endpoint).
type connInfo struct {
	id   uint64
	peer netip.AddrPort

	mu      sync.Mutex
	clients map[string]struct{} // REQUIRES: mu held
	closed  bool                // REQUIRES: mu held
}

// maxClientsPerConn bounds the client ids one connection is tracked for
// (a client instance uses one; a caller inventing ids must not grow the
// tables without bound). Calls with further ids are served; their leases
// are released by ClientExpiry or NotifyClientTermination, not by the
// connection's close.
const maxClientsPerConn = 64

// sawClient records client id on the connection and reports whether it
// is new there; false when the connection has already closed or tracks
// maxClientsPerConn ids.
func (c *connInfo) sawClient(id string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return false
	}
	if _, ok := c.clients[id]; ok {
		return false
	}
	if len(c.clients) >= maxClientsPerConn {
		return false
	}
	if c.clients == nil {
		c.clients = make(map[string]struct{}, 1)
	}
	c.clients[id] = struct{}{}
	return true
}

// close marks the connection closed and returns the client ids seen on it.
func (c *connInfo) close() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	ids := make([]string, 0, len(c.clients))
	for id := range c.clients {
		ids = append(ids, id)
	}
	return ids
}

type connKey struct{}

// connOf returns the connection of an incoming call's context; nil outside
// a server call (tests calling handlers directly).
func connOf(ctx context.Context) *connInfo {
	c, _ := ctx.Value(connKey{}).(*connInfo)
	return c
}

// connTracker is the grpc-go stats handler that gives each connection a
// connInfo (TagConn: the value reaches every call's context) and reports
// its end (HandleConn ConnEnd) to onClose, on grpc-go's goroutine of that
// connection. RPC-level stats are not used.
type connTracker struct {
	onOpen  func(*connInfo)
	onClose func(*connInfo)
}

// TagConn implements stats.Handler.
func (t *connTracker) TagConn(ctx context.Context, info *stats.ConnTagInfo) context.Context {
	c := &connInfo{id: newConnID(), peer: addrPortOf(info.RemoteAddr)}
	return context.WithValue(ctx, connKey{}, c)
}

// HandleConn implements stats.Handler.
func (t *connTracker) HandleConn(ctx context.Context, s stats.ConnStats) {
	c := connOf(ctx)
	if c == nil {
		return
	}
	switch s.(type) {
	case *stats.ConnBegin:
		if t.onOpen != nil {
			t.onOpen(c)
		}
	case *stats.ConnEnd:
		if t.onClose != nil {
			t.onClose(c)
		}
	}
}

// TagRPC implements stats.Handler.
func (t *connTracker) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context { return ctx }

// HandleRPC implements stats.Handler.
func (t *connTracker) HandleRPC(context.Context, stats.RPCStats) {}

// addrPortOf converts a peer's net.Addr to an AddrPort; the zero value
// when it is not a TCP address.
func addrPortOf(a net.Addr) netip.AddrPort {
	if tcp, ok := a.(*net.TCPAddr); ok {
		return tcp.AddrPort()
	}
	if a != nil {
		if ap, err := netip.ParseAddrPort(a.String()); err == nil {
			return ap
		}
	}
	return netip.AddrPort{}
}

// peerOf returns the caller's address: the connection's, else grpc-go's
// peer of the call, else the zero value.
func peerOf(ctx context.Context) netip.AddrPort {
	if c := connOf(ctx); c != nil && c.peer.IsValid() {
		return c.peer
	}
	if p, ok := peer.FromContext(ctx); ok {
		return addrPortOf(p.Addr)
	}
	return netip.AddrPort{}
}

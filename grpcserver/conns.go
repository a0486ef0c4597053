package grpcserver

import (
	"context"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"

	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/peer"
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

	// closeConn closes the connection (receive_room.go: a stream that
	// takes none of its messages); nil when there is none to close. Set
	// before the connection serves calls.
	closeConn func()

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

// connOf returns the connection of an incoming call's context; nil outside
// a server call (tests calling handlers directly). The connection travels
// in the call's peer: its AuthInfo is the connAuth the handshake returned.
func connOf(ctx context.Context) *connInfo {
	if p, ok := peer.FromContext(ctx); ok {
		if a, ok := p.AuthInfo.(connAuth); ok {
			return a.conn
		}
	}
	return nil
}

// Connection tracking. Each connection that completes sniffCreds'
// handshake is wrapped in a trackedConn with a fresh connInfo, which every
// call finds through its peer's AuthInfo (connAuth); the wrapper reports
// the connection's first read (grpc-go reads the client preface: the
// connection is open, onOpen) and its first Close after that (onClose). A
// grpc-go stats handler could do the same, but grpc-go does work for every
// call once one is installed (it copies the call's metadata and builds
// each RPC event); this costs nothing per call.

// trackedConn is a handshaken connection whose open and close are
// reported once each. grpc-go closes it from whichever of its goroutines
// ends the transport (reader, writer, keepalive), so onClose runs there.
type trackedConn struct {
	net.Conn
	info    *connInfo
	onOpen  func(*connInfo) // nil: nothing to report
	onClose func(*connInfo) // nil: nothing to report
	opened  atomic.Bool     // onOpen ran (the first Read)
	closed  atomic.Bool     // Close ran once
}

// Read implements net.Conn; the first call reports the connection open.
// grpc-go reads the client preface only after it has arranged to Close
// the transport on every later failure, so an opened connection is always
// closed through this wrapper.
func (c *trackedConn) Read(b []byte) (int, error) {
	if !c.opened.Load() {
		c.markOpen()
	}
	return c.Conn.Read(b)
}

func (c *trackedConn) markOpen() {
	if c.opened.CompareAndSwap(false, true) && c.onOpen != nil {
		c.onOpen(c.info)
	}
}

// Close implements net.Conn: the connection is closed, then, the first
// time and when it was reported open, onClose runs.
func (c *trackedConn) Close() error {
	err := c.Conn.Close()
	if c.closed.CompareAndSwap(false, true) && c.opened.Load() && c.onClose != nil {
		c.onClose(c.info)
	}
	return err
}

// connAuth is the AuthInfo of a tracked connection: the handshake's own
// (plainInfo or credentials.TLSInfo) and the connection.
type connAuth struct {
	credentials.AuthInfo
	conn *connInfo
}

// GetCommonAuthInfo returns the security level of the handshake's
// AuthInfo (what credentials.CheckSecurityLevel reads).
func (a connAuth) GetCommonAuthInfo() credentials.CommonAuthInfo {
	if c, ok := a.AuthInfo.(interface {
		GetCommonAuthInfo() credentials.CommonAuthInfo
	}); ok {
		return c.GetCommonAuthInfo()
	}
	return credentials.CommonAuthInfo{}
}

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

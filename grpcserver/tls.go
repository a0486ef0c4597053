package grpcserver

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"slices"
	"time"

	"google.golang.org/grpc/credentials"

	"github.com/popshim/popshim/conf"
)

// TLSMode is the TLS policy of the gRPC port: conf's --tls-mode, one enum
// for every listener (remoting and gRPC).
type TLSMode = conf.TLSMode

// The modes, as conf defines them.
const (
	// TLSDisabled serves plaintext HTTP/2 (h2c) only.
	TLSDisabled = conf.TLSDisabled
	// TLSPermissive serves TLS and plaintext on one port: a connection
	// whose first byte is 0x16 (a TLS handshake record) gets TLS, any other
	// plaintext, as rocketmq-proxy's ProxyAndTlsProtocolNegotiator does by
	// default. The v5 clients differ in their default (Java, Go, C++, C#:
	// TLS; Node, Python, Rust: plaintext), so this mode serves all of them.
	TLSPermissive = conf.TLSPermissive
	// TLSEnforcing serves TLS only and closes a plaintext connection after
	// its first byte.
	TLSEnforcing = conf.TLSEnforcing
)

// tlsHandshakeByte is the first byte of a TLS record carrying a handshake.
const tlsHandshakeByte = 0x16

// errPlaintextRefused: a plaintext connection on a TLSEnforcing port.
var errPlaintextRefused = errors.New("grpcserver: plaintext connection refused: TLS mode is enforcing")

// errTLSRefused: a TLS ClientHello on a TLSDisabled port.
var errTLSRefused = errors.New("grpcserver: TLS connection refused: TLS mode is disabled")

// sniffCreds are grpc-go transport credentials that decide per connection,
// from its first byte, between TLS and plaintext. grpc-go runs
// ServerHandshake on the connection's own goroutine, so a slow client
// delays only itself; the read of the first byte and the TLS handshake
// are bounded by timeout.
type sniffCreds struct {
	mode    TLSMode
	tls     *tls.Config // NextProtos includes "h2"; nil when mode is TLSDisabled
	timeout time.Duration
	// onOpen and onClose are told of each connection's open and close
	// (trackedConn); nil: not told.
	onOpen, onClose func(*connInfo)
	// mismatch logs a connection that speaks TLS to a plaintext port or
	// plaintext to an enforcing one (at most one line a second, see
	// mismatchLog); nil: not logged.
	mismatch *mismatchLog
}

// newSniffCreds checks the combination and completes the TLS config:
// grpc-go clients refuse a server that does not negotiate ALPN "h2".
func newSniffCreds(mode TLSMode, cfg *tls.Config, timeout time.Duration) (*sniffCreds, error) {
	c := &sniffCreds{mode: mode, timeout: timeout}
	if mode == TLSDisabled {
		return c, nil
	}
	if cfg == nil {
		return nil, fmt.Errorf("grpcserver: TLS mode %s needs a TLS config", mode)
	}
	c.tls = cfg.Clone()
	if !slices.Contains(c.tls.NextProtos, "h2") {
		c.tls.NextProtos = append([]string{"h2"}, c.tls.NextProtos...)
	}
	if c.tls.MinVersion == 0 {
		c.tls.MinVersion = tls.VersionTLS12
	}
	return c, nil
}

// ServerHandshake implements credentials.TransportCredentials: the
// connection after the first-byte sniff and any TLS handshake, wrapped in
// a trackedConn, with its connAuth.
func (c *sniffCreds) ServerHandshake(raw net.Conn) (net.Conn, credentials.AuthInfo, error) {
	conn, info, err := c.handshake(raw)
	if err != nil {
		return nil, nil, err
	}
	ci := &connInfo{id: newConnID(), peer: addrPortOf(raw.RemoteAddr())}
	tc := &trackedConn{Conn: conn, info: ci, onOpen: c.onOpen, onClose: c.onClose}
	ci.closeConn = func() { _ = tc.Close() }
	return tc, connAuth{AuthInfo: info, conn: ci}, nil
}

// handshake sniffs the first byte and runs the TLS handshake when the mode
// and the byte ask for it. A disabled port sniffs too, so a TLS client
// gets a log line instead of grpc-go's silent close.
func (c *sniffCreds) handshake(raw net.Conn) (net.Conn, credentials.AuthInfo, error) {
	plain := credentials.CommonAuthInfo{SecurityLevel: credentials.NoSecurity}
	if c.timeout > 0 {
		_ = raw.SetDeadline(time.Now().Add(c.timeout))
	}
	var first [1]byte
	if _, err := raw.Read(first[:]); err != nil {
		return nil, nil, fmt.Errorf("grpcserver: reading the first byte: %w", err)
	}
	conn := &prefixConn{Conn: raw, prefix: first[:]}
	if c.mode == TLSDisabled && first[0] == tlsHandshakeByte {
		c.mismatch.warn(raw.RemoteAddr(), "a client spoke TLS to the plaintext gRPC port; serve TLS with --tls-mode=permissive or enforcing (and --tls-cert, --tls-key), or connect without TLS")
		return nil, nil, errTLSRefused
	}
	if first[0] != tlsHandshakeByte {
		if c.mode == TLSEnforcing {
			c.mismatch.warn(raw.RemoteAddr(), "a client spoke plaintext to the gRPC port while --tls-mode is enforcing; connect with TLS, or set --tls-mode=permissive")
			return nil, nil, errPlaintextRefused
		}
		_ = raw.SetDeadline(time.Time{})
		return conn, plainInfo{plain}, nil
	}
	tc := tls.Server(conn, c.tls)
	ctx := context.Background()
	if c.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.timeout)
		defer cancel()
	}
	if err := tc.HandshakeContext(ctx); err != nil {
		return nil, nil, fmt.Errorf("grpcserver: TLS handshake: %w", err)
	}
	_ = raw.SetDeadline(time.Time{})
	return tc, credentials.TLSInfo{
		State:          tc.ConnectionState(),
		CommonAuthInfo: credentials.CommonAuthInfo{SecurityLevel: credentials.PrivacyAndIntegrity},
	}, nil
}

// ClientHandshake implements credentials.TransportCredentials; the server
// never dials.
func (c *sniffCreds) ClientHandshake(context.Context, string, net.Conn) (net.Conn, credentials.AuthInfo, error) {
	return nil, nil, errors.New("grpcserver: server-side credentials cannot dial")
}

// Info implements credentials.TransportCredentials.
func (c *sniffCreds) Info() credentials.ProtocolInfo {
	return credentials.ProtocolInfo{SecurityProtocol: "tls-or-plaintext"}
}

// Clone implements credentials.TransportCredentials.
func (c *sniffCreds) Clone() credentials.TransportCredentials {
	n := *c
	if c.tls != nil {
		n.tls = c.tls.Clone()
	}
	return &n
}

// OverrideServerName implements credentials.TransportCredentials (deprecated there; a no-op).
func (c *sniffCreds) OverrideServerName(string) error { return nil }

// plainInfo is the AuthInfo of a plaintext connection.
type plainInfo struct{ credentials.CommonAuthInfo }

// AuthType implements credentials.AuthInfo.
func (plainInfo) AuthType() string { return "insecure" }

// prefixConn replays bytes already read from Conn before reading on.
type prefixConn struct {
	net.Conn
	prefix []byte
}

// Read implements net.Conn.
func (p *prefixConn) Read(b []byte) (int, error) {
	if len(p.prefix) > 0 {
		n := copy(b, p.prefix)
		p.prefix = p.prefix[n:]
		return n, nil
	}
	return p.Conn.Read(b)
}

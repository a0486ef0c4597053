package remoting

import (
	"crypto/tls"
	"net"

	"github.com/popshim/popshim/conf"

	"github.com/panjf2000/gnet/v2"
)

// TLSMode is Java's tls.server.mode, as conf defines it: TLSDisabled
// serves plaintext only (a TLS ClientHello is read as a frame and refused
// as malformed), TLSPermissive serves TLS and plaintext clients on one
// port, TLSEnforcing serves TLS clients only and closes a plaintext
// connection after its first byte, as NettyRemotingServer's TlsModeHandler
// does.
type TLSMode = conf.TLSMode

// The modes, conf's constants.
const (
	TLSDisabled   = conf.TLSDisabled
	TLSPermissive = conf.TLSPermissive
	TLSEnforcing  = conf.TLSEnforcing
)

// tlsHandshakeByte is the first byte of a TLS handshake record
// (content type 22), NettyRemotingServer.TlsModeHandler's HANDSHAKE_MAGIC_CODE.
const tlsHandshakeByte = 0x16

// tlsPeer travels from a TLS session to OnOpen of its plaintext side (as
// the gnet connection context given to Enroll): the client's real address
// and the negotiated TLS state.
type tlsPeer struct {
	remote net.Addr
	state  tls.ConnectionState
}

// TLSState returns the TLS state of the connection behind c (version,
// cipher suite, the verified client certificates) and true, or false when
// c is plaintext or did not come from a Server dispatch. Any goroutine.
func TLSState(c Conn) (*tls.ConnectionState, bool) {
	r, ok := c.(*request)
	if !ok || r.c.tls == nil {
		return nil, false
	}
	return &r.c.tls.state, true
}

// sniff looks at the first byte of a connection on a TLS-enabled port, as
// NettyRemotingServer's TlsModeHandler does: 0x16 hands the connection to a
// TLS session (handOff); other bytes are plaintext remoting, served under
// TLSPermissive and closed under TLSEnforcing. It reports decided=true with
// the action OnTraffic must return when the connection leaves the
// plaintext path. Loop goroutine only; it never blocks.
func (s *Server) sniff(c *conn, gc gnet.Conn) (gnet.Action, bool) {
	first, err := gc.Peek(1)
	if err != nil || len(first) == 0 {
		return gnet.None, true // nothing buffered yet
	}
	c.sniffed = true
	if first[0] == tlsHandshakeByte {
		return s.handOff(c, gc), true
	}
	if s.opts.TLSMode == TLSEnforcing {
		s.opts.Metrics.tlsConn(s.opts.Name, tlsPlaintextRefused)
		s.protoLog.Warn().Uint64("conn", c.id).Stringer("remote", c.remote).
			Msg("plaintext connection refused: TLS mode is enforcing")
		return gnet.Close, true
	}
	return gnet.None, false
}

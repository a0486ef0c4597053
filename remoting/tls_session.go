package remoting

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"time"

	"github.com/panjf2000/gnet/v2"
	"golang.org/x/sys/unix"
)

// How a TLS connection reaches the handlers (docs/DESIGN.md, "TLS"):
//
//	client ─TLS─▶ raw TCP socket ─ session goroutines (handshake, decrypt, encrypt)
//	        ─plaintext─▶ one end of a unix socketpair ─▶ other end enrolled in gnet
//
// Every accepted connection is enrolled into gnet (accept.go). The first
// OnTraffic of a connection looks at its first byte (sniff, on the event
// loop, no waiting): 0x16 hands the socket over to a session (handOff) and
// gnet closes its own descriptor of it; the session's goroutines do the
// handshake and all crypto. The plaintext side is an ordinary gnet
// connection on the same event loop, so decode, dispatch, replies, buffer
// ownership, idle timeout, malformed frames, GO_AWAY and MaxConns work for
// it exactly as for a plaintext client. The event loop never waits on a
// handshake or on crypto.

// tlsPumpBuf is the size of each session pump's copy buffer: four TLS
// records of plaintext, so a coalesced writev of replies is encrypted and
// written in one pass.
const tlsPumpBuf = 64 << 10

// tlsWriteStall closes a TLS session whose client has not taken a reply's
// bytes for this long: the session's writer would otherwise hold the
// connection forever, since gnet's own bound (maxOutboundBytes) closes only
// the plaintext side.
const tlsWriteStall = 60 * time.Second

// tlsSession is one TLS client connection handed over by the event loop.
// raw is the client's socket (the bytes gnet read before the hand-over are
// replayed first), tc the TLS layer on it, and pair the session's end of
// the socketpair whose other end gnet serves.
type tlsSession struct {
	srv  *Server
	raw  net.Conn
	tc   *tls.Conn
	pair *net.UnixConn
	el   gnet.EventLoop
}

// prefixConn replays bytes already read from a socket before reading on.
type prefixConn struct {
	net.Conn
	prefix *bytes.Reader
}

func (p *prefixConn) Read(b []byte) (int, error) {
	if p.prefix.Len() > 0 {
		return p.prefix.Read(b)
	}
	return p.Conn.Read(b)
}

// handOff moves a connection whose first byte is 0x16 out of gnet: it
// copies what gnet buffered, duplicates the socket and starts the session
// goroutine. The caller returns gnet.Close, which closes only gnet's own
// descriptor; the socket lives on in the duplicate. Everything here is a
// non-blocking syscall (dup, fcntl, epoll_ctl). Loop goroutine only.
func (s *Server) handOff(c *conn, gc gnet.Conn) gnet.Action {
	buffered, _ := gc.Peek(gc.InboundBuffered())
	prefix := bytes.Clone(buffered)
	_, _ = gc.Discard(len(buffered))
	raw, err := dupConn(gc)
	if err != nil {
		s.protoLog.Warn().Uint64("conn", c.id).Stringer("remote", c.remote).Err(err).Msg("tls: cannot take over the connection")
		return gnet.Close
	}
	sess := &tlsSession{srv: s, raw: &prefixConn{Conn: raw, prefix: bytes.NewReader(prefix)}, el: gc.EventLoop()}
	if !s.addSession(sess) {
		_ = raw.Close()
		return gnet.Close
	}
	c.handedOff = true
	go sess.run()
	return gnet.Close
}

// dupConn returns a net.Conn on a duplicate of gc's socket, registered with
// the Go runtime's poller.
func dupConn(gc gnet.Conn) (net.Conn, error) {
	fd, err := gc.Dup()
	if err != nil {
		return nil, fmt.Errorf("dup: %w", err)
	}
	f := os.NewFile(uintptr(fd), "tls-client")
	defer func() { _ = f.Close() }() // net.FileConn holds its own duplicate
	return net.FileConn(f)
}

// addSession records a session so Stop can end it, unless the server is
// stopping. Any goroutine.
func (s *Server) addSession(sess *tlsSession) bool {
	s.tlsMu.Lock()
	defer s.tlsMu.Unlock()
	if s.tlsStopped {
		return false
	}
	s.tlsSessions[sess] = struct{}{}
	s.tlsWG.Add(1)
	return true
}

// removeSession forgets a session whose goroutines are ending.
func (s *Server) removeSession(sess *tlsSession) {
	s.tlsMu.Lock()
	delete(s.tlsSessions, sess)
	s.tlsMu.Unlock()
}

// stopSessions closes every session's client socket and socketpair end
// (their goroutines then end) and waits for them until ctx is done. Called
// by Stop after gnet stopped.
func (s *Server) stopSessions(ctx context.Context) error {
	s.tlsMu.Lock()
	s.tlsStopped = true
	for sess := range s.tlsSessions {
		_ = sess.raw.Close()
		if sess.pair != nil {
			_ = sess.pair.Close()
		}
	}
	s.tlsMu.Unlock()
	done := make(chan struct{})
	go func() {
		s.tlsWG.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// run is the session goroutine: handshake within TLSHandshakeTimeout, enroll
// the plaintext side into the event loop that accepted the client, then
// copy client→gnet here and gnet→client on a second goroutine, and return
// when both copies ended.
func (sess *tlsSession) run() {
	s := sess.srv
	defer s.tlsWG.Done()
	defer s.removeSession(sess)
	sess.tc = tls.Server(sess.raw, s.opts.TLS)
	_ = sess.raw.SetDeadline(time.Now().Add(s.opts.TLSHandshakeTimeout))
	if err := sess.tc.Handshake(); err != nil {
		s.opts.Metrics.tlsConn(s.opts.Name, tlsHandshakeFailed)
		s.protoLog.Warn().Stringer("remote", sess.raw.RemoteAddr()).Err(err).Msg("tls handshake failed; closing connection")
		_ = sess.raw.Close()
		return
	}
	_ = sess.raw.SetDeadline(time.Time{})
	s.opts.Metrics.tlsConn(s.opts.Name, tlsHandshakeOK)
	if err := sess.enroll(); err != nil {
		s.log.Warn().Stringer("remote", sess.raw.RemoteAddr()).Err(err).Msg("tls: cannot hand the connection to the event loop; closing it")
		_ = sess.tc.Close()
		return
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		sess.toClient()
	}()
	sess.fromClient()
	<-done
}

// enroll makes a socketpair, keeps one end as sess.pair and enrolls the
// other into sess.el with a tlsPeer context (OnOpen takes the client's
// address and TLS state from it). It returns once OnOpen ran.
func (sess *tlsSession) enroll() error {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("socketpair: %w", err)
	}
	mine, err := fileUnixConn(fds[0], "tls-pump")
	if err != nil {
		_ = unix.Close(fds[1])
		return err
	}
	theirs, err := fileUnixConn(fds[1], "tls-loop")
	if err != nil {
		_ = mine.Close()
		return err
	}
	peer := &tlsPeer{remote: sess.raw.RemoteAddr(), state: sess.tc.ConnectionState()}
	ch, err := sess.el.Enroll(gnet.NewContext(context.Background(), peer), theirs)
	if err != nil {
		_ = theirs.Close()
		_ = mine.Close()
		return fmt.Errorf("enroll: %w", err)
	}
	// Enroll duplicates theirs and closes it once registered or failed.
	if res := <-ch; res.Err != nil {
		_ = mine.Close()
		return fmt.Errorf("enroll: %w", res.Err)
	}
	sess.srv.tlsMu.Lock()
	stopped := sess.srv.tlsStopped
	sess.pair = mine
	sess.srv.tlsMu.Unlock()
	if stopped { // stopSessions ran during the enroll: it could not close mine
		_ = mine.Close()
	}
	return nil
}

// fileUnixConn turns a socket descriptor into a *net.UnixConn; the
// descriptor is closed (the conn holds a duplicate).
func fileUnixConn(fd int, name string) (*net.UnixConn, error) {
	f := os.NewFile(uintptr(fd), name)
	defer func() { _ = f.Close() }() // net.FileConn holds its own duplicate
	nc, err := net.FileConn(f)
	if err != nil {
		return nil, fmt.Errorf("socketpair conn: %w", err)
	}
	uc, ok := nc.(*net.UnixConn)
	if !ok {
		_ = nc.Close()
		return nil, fmt.Errorf("socketpair conn is %T", nc)
	}
	return uc, nil
}

// fromClient copies decrypted client bytes into the socketpair until the
// client or the socketpair ends, then half-closes the socketpair: gnet reads
// EOF and closes its side, which ends toClient.
func (sess *tlsSession) fromClient() {
	buf := make([]byte, tlsPumpBuf)
	_, err := io.CopyBuffer(onlyWriter{sess.pair}, onlyReader{sess.tc}, buf)
	if err != nil && !errors.Is(err, net.ErrClosed) {
		sess.srv.log.Debug().Stringer("remote", sess.raw.RemoteAddr()).Err(err).Msg("tls session read ended")
	}
	_ = sess.pair.CloseWrite()
}

// toClient copies replies from the socketpair to the client, encrypting
// them, until gnet closes its side; then it closes the client connection
// (close_notify first) and the socketpair.
func (sess *tlsSession) toClient() {
	buf := make([]byte, tlsPumpBuf)
	for {
		n, err := sess.pair.Read(buf)
		if n > 0 {
			_ = sess.raw.SetWriteDeadline(time.Now().Add(tlsWriteStall))
			if _, werr := sess.tc.Write(buf[:n]); werr != nil {
				break
			}
		}
		if err != nil {
			break
		}
	}
	_ = sess.raw.SetWriteDeadline(time.Now().Add(time.Second))
	_ = sess.tc.Close()
	_ = sess.pair.Close()
}

// onlyWriter and onlyReader hide ReadFrom/WriteTo so io.CopyBuffer uses the
// given buffer.
type onlyWriter struct{ io.Writer }

type onlyReader struct{ io.Reader }

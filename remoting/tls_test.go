package remoting

import (
	"bytes"
	"context"
	"crypto/tls"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/client"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/conf"
	"github.com/popshim/popshim/remoting/tlstest"
)

// codeWhoAmI answers with "tls|<remote>" or "plain|<remote>" and, for a TLS
// client with a certificate, "|<client CN>".
const codeWhoAmI int32 = 9010

func whoAmIHandler(c Conn, req *codec.Command) {
	body := "plain|" + c.RemoteAddr().String()
	if st, ok := TLSState(c); ok {
		body = "tls|" + c.RemoteAddr().String()
		if len(st.PeerCertificates) > 0 {
			body += "|" + st.PeerCertificates[0].Subject.CommonName
		}
	}
	resp := codec.NewResponse(req, 0, "")
	resp.Body = []byte(body)
	_ = c.Reply(resp)
}

// startTLSServer runs an echo/whoami server with TLS material m.
func startTLSServer(t testing.TB, m *tlstest.Material, mode TLSMode, auth tls.ClientAuthType, opts ServerOptions) *Server {
	t.Helper()
	r := NewRouter()
	r.Handle(codeEcho, echoHandler)
	r.Handle(codeWhoAmI, whoAmIHandler)
	r.Handle(codeDeferred, func(c Conn, req *codec.Command) {
		go func() {
			resp := codec.NewResponse(req, 0, "")
			resp.Body = req.Body
			_ = c.Reply(resp)
		}()
	})
	opts.TLS, opts.TLSMode = m.ServerConfig(auth), mode
	return startServer(t, r, opts)
}

func dialTLS(t testing.TB, s *Server, cfg *tls.Config) (*client.Conn, error) {
	t.Helper()
	c, err := client.DialContext(context.Background(), s.Addr().String(), client.Options{TLS: cfg})
	if err == nil {
		t.Cleanup(func() { _ = c.Close() })
	}
	return c, err
}

func whoAmI(t testing.TB, c *client.Conn) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	resp, err := c.Invoke(ctx, codec.NewRequest(codeWhoAmI, 0, nil, nil))
	if err != nil {
		return "", err
	}
	return string(resp.Body), nil
}

// Permissive: a TLS client and a plaintext client on one port both reach
// the handlers; the TLS one is seen with its real TCP address and its TLS
// state, the plaintext one without.
func TestTLSPermissiveServesBothOnOnePort(t *testing.T) {
	m := tlstest.New(t)
	reg := prometheus.NewRegistry()
	metrics, err := NewMetrics(reg, nil)
	require.NoError(t, err)
	s := startTLSServer(t, m, TLSPermissive, tls.NoClientCert, ServerOptions{Metrics: metrics})

	tc, err := dialTLS(t, s, m.ClientConfig(false))
	require.NoError(t, err)
	pc := dialClient(t, s)
	for i := 0; i < 20; i++ {
		echoOnce(t, tc, strings.Repeat("t", i*1000))
		echoOnce(t, pc, strings.Repeat("p", i*1000))
	}
	got, err := whoAmI(t, tc)
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(got, "tls|127.0.0.1:"), got)
	got, err = whoAmI(t, pc)
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(got, "plain|127.0.0.1:"), got)

	require.Equal(t, 1.0, testutil.ToFloat64(metrics.tlsConns.WithLabelValues("broker", tlsHandshakeOK)))
	require.Equal(t, 2.0, testutil.ToFloat64(metrics.opened.WithLabelValues("broker")), "a TLS client counts as one accepted connection")
	require.Equal(t, 2, s.openConns())
}

// Enforcing: a plaintext client is closed after its first byte and gets no
// reply; a TLS client is served.
func TestTLSEnforcingRefusesPlaintext(t *testing.T) {
	m := tlstest.New(t)
	reg := prometheus.NewRegistry()
	metrics, err := NewMetrics(reg, nil)
	require.NoError(t, err)
	s := startTLSServer(t, m, TLSEnforcing, tls.NoClientCert, ServerOptions{Metrics: metrics})

	nc := dialRaw(t, s)
	_, err = nc.Write(codec.AppendFrame(nil, codec.NewRequest(codeEcho, 0, nil, []byte("hi"))))
	require.NoError(t, err)
	refused, err := refusedByServer(nc)
	require.NoError(t, err)
	require.True(t, refused, "a plaintext request under enforcing must get no reply")
	require.Equal(t, 1.0, testutil.ToFloat64(metrics.tlsConns.WithLabelValues("broker", tlsPlaintextRefused)))

	tc, err := dialTLS(t, s, m.ClientConfig(false))
	require.NoError(t, err)
	echoOnce(t, tc, "over tls")
}

// Disabled (no TLS options): a TLS ClientHello is a malformed frame, as it
// was before TLS support.
func TestTLSDisabledRefusesHandshake(t *testing.T) {
	r := NewRouter()
	r.Handle(codeEcho, echoHandler)
	s := startServer(t, r, ServerOptions{})
	m := tlstest.New(t)
	_, err := dialTLS(t, s, m.ClientConfig(false))
	require.Error(t, err)
	echoOnce(t, dialClient(t, s), "plaintext still works")
}

// Client certificates: required → a client without one is refused and one
// with a CA-signed certificate is served (its CN is visible to handlers);
// optional → both are served; none → a certificate is not asked for.
func TestTLSClientCertVerification(t *testing.T) {
	m := tlstest.New(t)
	other := tlstest.New(t) // a client certificate from another CA
	for _, tc := range []struct {
		name                    string
		auth                    tls.ClientAuthType
		noCert, cert, wrongCert bool // served?
		wantCN                  string
	}{
		{"require", tls.RequireAndVerifyClientCert, false, true, false, "popshim test client"},
		{"optional", tls.VerifyClientCertIfGiven, true, true, false, "popshim test client"},
		{"none", tls.NoClientCert, true, true, true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := startTLSServer(t, m, TLSPermissive, tc.auth, ServerOptions{})
			try := func(cfg *tls.Config) (string, bool) {
				c, err := dialTLS(t, s, cfg)
				if err != nil {
					return "", false
				}
				// TLS 1.3: the server's verdict on a client certificate
				// arrives after the client's handshake returned.
				got, err := whoAmI(t, c)
				return got, err == nil
			}
			_, ok := try(m.ClientConfig(false))
			require.Equal(t, tc.noCert, ok, "client without certificate")
			got, ok := try(m.ClientConfig(true))
			require.Equal(t, tc.cert, ok, "client with a CA-signed certificate")
			if tc.wantCN != "" {
				require.True(t, strings.HasSuffix(got, "|"+tc.wantCN), got)
			} else {
				require.Equal(t, 1, strings.Count(got, "|"), "no client certificate asked for: %s", got)
			}
			wrong := m.ClientConfig(false)
			wrong.Certificates = []tls.Certificate{other.Client}
			_, ok = try(wrong)
			require.Equal(t, tc.wrongCert, ok, "client certificate of another CA")
		})
	}
}

// A client that stalls mid-handshake and one that sends garbage after the
// 0x16 byte, on a one-loop server, do not delay other clients: plaintext
// and TLS echoes complete while the stalled handshake is still open, and
// the stalled client is closed by the handshake timeout.
func TestTLSSlowAndMalformedHandshakesDoNotDisturbOthers(t *testing.T) {
	m := tlstest.New(t)
	reg := prometheus.NewRegistry()
	metrics, err := NewMetrics(reg, nil)
	require.NoError(t, err)
	const timeout = 300 * time.Millisecond
	s := startTLSServer(t, m, TLSPermissive, tls.NoClientCert,
		ServerOptions{EventLoops: 1, TLSHandshakeTimeout: timeout, Metrics: metrics})

	stalled := dialRaw(t, s)
	_, err = stalled.Write([]byte{0x16, 0x03, 0x01, 0x02, 0x00, 0x01}) // a record header promising 512 bytes, then silence
	require.NoError(t, err)
	garbage := dialRaw(t, s)
	_, err = garbage.Write(append([]byte{0x16, 0x03, 0x03, 0x00, 0x10}, bytes.Repeat([]byte{0xEE}, 16)...))
	require.NoError(t, err)
	expectClosed(t, garbage)

	start := time.Now()
	tc, err := dialTLS(t, s, m.ClientConfig(false))
	require.NoError(t, err)
	pc := dialClient(t, s)
	for i := 0; i < 50; i++ {
		echoOnce(t, tc, "tls")
		echoOnce(t, pc, "plain")
	}
	if time.Since(start) < timeout {
		// The stalled handshake is still in progress: check it has not
		// been closed yet, which proves the echoes above ran beside it.
		require.NoError(t, stalled.SetReadDeadline(time.Now().Add(time.Millisecond)))
		_, err := stalled.Read(make([]byte, 1))
		var ne net.Error
		require.ErrorAs(t, err, &ne)
		require.True(t, ne.Timeout(), "the stalled handshake must still be open: %v", err)
		require.NoError(t, stalled.SetReadDeadline(time.Now().Add(20*time.Second)))
	}
	_, err = io.Copy(io.Discard, stalled)
	require.NoError(t, err, "the handshake timeout must close the stalled client")
	require.Equal(t, 2.0, testutil.ToFloat64(metrics.tlsConns.WithLabelValues("broker", tlsHandshakeFailed)))
}

// Pipelined requests answered from other goroutines, with bodies up to
// 1 MiB, come back complete and in the right order over TLS (replies
// coalesced by gnet's writev cross the session's encrypting copy).
func TestTLSPipelinedLargeReplies(t *testing.T) {
	m := tlstest.New(t)
	s := startTLSServer(t, m, TLSEnforcing, tls.NoClientCert, ServerOptions{})
	tc, err := dialTLS(t, s, m.ClientConfig(false))
	require.NoError(t, err)
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for i := 0; i < 64; i++ {
		body := bytes.Repeat([]byte{byte(i)}, (i%8)*(128<<10)+i)
		wg.Add(1)
		require.NoError(t, tc.InvokeAsync(codec.NewRequest(codeDeferred, 0, nil, body), func(resp *codec.Command, err error) {
			defer wg.Done()
			if err == nil && !bytes.Equal(resp.Body, body) {
				err = io.ErrUnexpectedEOF
			}
			if err != nil {
				errs <- err
			}
		}))
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}

// A malformed frame inside TLS closes that client only, after the replies
// owed before it, as for a plaintext client.
func TestTLSMalformedFrameInsideTLS(t *testing.T) {
	m := tlstest.New(t)
	s := startTLSServer(t, m, TLSPermissive, tls.NoClientCert, ServerOptions{})
	raw, err := tls.Dial("tcp", s.Addr().String(), m.ClientConfig(false))
	require.NoError(t, err)
	defer raw.Close()
	require.NoError(t, raw.SetDeadline(time.Now().Add(20*time.Second)))
	req := codec.AppendFrame(nil, codec.NewRequest(codeEcho, 0, nil, []byte("before")))
	_, err = raw.Write(append(req, 0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0))
	require.NoError(t, err)
	resp := readFrame(t, raw)
	require.Equal(t, "before", string(resp.Body))
	_, err = io.Copy(io.Discard, raw)
	require.NoError(t, err, "the server must close the TLS connection after the malformed frame")

	other, err := dialTLS(t, s, m.ClientConfig(false))
	require.NoError(t, err)
	echoOnce(t, other, "unaffected")
}

// Stop ends live TLS sessions and a handshake in progress; TestMain's
// goleak check fails if a session goroutine outlives its server.
func TestTLSStopEndsSessions(t *testing.T) {
	m := tlstest.New(t)
	r := NewRouter()
	r.Handle(codeEcho, echoHandler)
	s := NewServer(ServerOptions{Addr: "127.0.0.1:0", EventLoops: 2, TLS: m.ServerConfig(tls.NoClientCert), TLSMode: TLSPermissive}, r, testLogger(t))
	require.NoError(t, s.Start())
	c, err := client.DialContext(context.Background(), s.Addr().String(), client.Options{TLS: m.ClientConfig(false)})
	require.NoError(t, err)
	defer c.Close()
	echoOnce(t, c, "x")
	half, err := net.Dial("tcp", s.Addr().String())
	require.NoError(t, err)
	defer half.Close()
	_, err = half.Write([]byte{0x16})
	require.NoError(t, err)
	// The handshake session starts once the loop has seen the byte.
	for i := 0; i < 2000 && sessionCount(s) < 2; i++ {
		time.Sleep(5 * time.Millisecond)
	}
	require.Equal(t, 2, sessionCount(s))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, s.Stop(ctx))
	require.Zero(t, sessionCount(s))
	_, err = c.Invoke(ctx, codec.NewRequest(codeEcho, 0, nil, nil))
	require.Error(t, err)
}

func sessionCount(s *Server) int {
	s.tlsMu.Lock()
	defer s.tlsMu.Unlock()
	return len(s.tlsSessions)
}

func TestTLSOptionsValidate(t *testing.T) {
	m := tlstest.New(t)
	r := NewRouter()
	for _, o := range []ServerOptions{
		{TLSMode: TLSPermissive},
		{TLSMode: TLSEnforcing},
		{TLS: m.ServerConfig(tls.NoClientCert)},
		{TLS: m.ServerConfig(tls.NoClientCert), TLSMode: 7},
	} {
		o.Addr = "127.0.0.1:0"
		require.Error(t, NewServer(o, r, testLogger(t)).Start(), "%+v", o.TLSMode)
	}
	for _, name := range []string{"disabled", "permissive", "enforcing"} {
		mode, err := conf.ParseTLSMode(name)
		require.NoError(t, err)
		require.Equal(t, name, mode.String())
	}
	_, err := conf.ParseTLSMode("PERMISSIVE")
	require.Error(t, err)
}

// A TLS client's reply that settles the last request its connection is
// owed is sent directly too (to the socketpair end gnet serves); replies
// larger than the socketpair takes at once are finished by gnet, intact.
func TestTLSReplyWithNothingOwedIsSentDirect(t *testing.T) {
	m := tlstest.New(t)
	s := startTLSServer(t, m, TLSEnforcing, tls.NoClientCert, ServerOptions{})
	tc, err := dialTLS(t, s, m.ClientConfig(false))
	require.NoError(t, err)
	for i := range 8 {
		echoOnce(t, tc, strings.Repeat("d", 1+i*1000))
	}
	require.Eventually(t, func() bool { return s.directReplies.Load() == 8 }, 10*time.Second, time.Millisecond,
		"one request at a time: every reply direct")
	require.Equal(t, uint64(0), s.flushes.Load(), "no reply went through AsyncWritev")
	for i := range 3 {
		echoOnce(t, tc, strings.Repeat(string(rune('x'+i)), 3<<20))
	}
	require.Positive(t, s.flushes.Load(), "a reply larger than the socketpair buffer is finished by gnet")
	echoOnce(t, tc, "after")
}

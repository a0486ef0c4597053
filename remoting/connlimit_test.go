package remoting

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/client"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/remoting/logtest"
)

// echoOnce runs one request round trip on c.
func echoOnce(t testing.TB, c *client.Conn, body string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	resp, err := c.Invoke(ctx, codec.NewRequest(codeEcho, 0, nil, []byte(body)))
	require.NoError(t, err)
	require.Equal(t, body, string(resp.Body))
}

// refusedByServer reads from nc until the server ends the connection and
// reports whether it did (EOF or a reset) rather than send a byte. The
// safety deadline of dialRaw bounds the wait.
func refusedByServer(nc net.Conn) (bool, error) {
	var b [1]byte
	n, err := nc.Read(b[:])
	switch {
	case n > 0:
		return false, nil
	case errors.Is(err, io.EOF), errors.Is(err, syscall.ECONNRESET):
		return true, nil
	default:
		return false, err
	}
}

// waitOpenConns polls until s counts want open connections, at most 2000
// times; it reports the last count seen.
func waitOpenConns(s *Server, want int) int {
	n := s.openConns()
	for i := 0; i < 2000 && n != want; i++ {
		time.Sleep(5 * time.Millisecond)
		n = s.openConns()
	}
	return n
}

// With MaxConns 2 the third connection is closed before anything is read
// and counted; once one of the two leaves, a new connection is served.
func TestMaxConnsRefusesBeyondTheBound(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := NewMetrics(reg, nil)
	require.NoError(t, err)
	var out logtest.Buffer
	s := NewServer(ServerOptions{Addr: "127.0.0.1:0", EventLoops: 2, MaxConns: 2, Metrics: m}, echoRouter(), zerolog.New(&out))
	require.NoError(t, s.Start())
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		require.NoError(t, s.Stop(ctx))
	}()

	c1, c2 := dialClient(t, s), dialClient(t, s)
	echoOnce(t, c1, "one") // a reply means OnOpen accepted the connection
	echoOnce(t, c2, "two")
	require.Equal(t, 2, s.openConns())

	third := dialRaw(t, s)
	refused, err := refusedByServer(third)
	require.NoError(t, err)
	require.True(t, refused, "the third connection is closed by the server")
	require.Equal(t, 1.0, sumCounter(t, reg, "popshim_remoting_connections_refused_total"))
	require.Equal(t, 2, s.openConns(), "the refused connection's OnClose leaves the count alone")
	require.Equal(t, 2.0, sumGauge(t, reg, "popshim_remoting_connections"))
	log := out.String()
	require.Contains(t, log, "too many open connections")
	require.Contains(t, log, third.LocalAddr().String(), "the log line names the remote address")
	require.Contains(t, log, `"open":2`)
	require.Contains(t, log, `"max_conns":2`)

	echoOnce(t, c1, "still served")
	require.NoError(t, c2.Close())
	require.Equal(t, 1, waitOpenConns(s, 1))

	c4 := dialClient(t, s)
	echoOnce(t, c4, "four")
	require.Equal(t, 2, s.openConns())
	require.Equal(t, 1.0, sumCounter(t, reg, "popshim_remoting_connections_refused_total"))
}

// 24 connections dialled at once against MaxConns 5 on 2 event loops:
// exactly 5 are served and 19 refused, whatever the interleaving.
func TestMaxConnsExactUnderConcurrentAccepts(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := NewMetrics(reg, nil)
	require.NoError(t, err)
	const limit, dials = 5, 24
	s := startServer(t, echoRouter(), ServerOptions{EventLoops: 2, MaxConns: limit, Metrics: m})

	frame := codec.AppendFrame(nil, codec.NewRequest(codeEcho, 0, nil, []byte("hi")))
	conns := make([]net.Conn, dials)
	for i := range conns {
		conns[i] = dialRaw(t, s) // closed by the test's cleanup
	}
	served := make([]bool, dials)
	errs := make([]error, dials)
	var wg sync.WaitGroup
	for i, nc := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// A refused connection may fail the write or answer the read
			// with EOF or a reset; a served one gets the echo.
			if _, err := nc.Write(frame); err != nil {
				return
			}
			f, err := readRawFrame(nc)
			switch {
			case err == nil:
				served[i] = strings.Contains(string(f), "hi")
			case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
			default:
				errs[i] = err
			}
		}()
	}
	wg.Wait()
	n := 0
	for i := range dials {
		require.NoError(t, errs[i], "connection %d", i)
		if served[i] {
			n++
		}
	}
	require.Equal(t, limit, n, "served connections")
	require.Equal(t, float64(dials-limit), sumCounter(t, reg, "popshim_remoting_connections_refused_total"))
	require.Equal(t, limit, s.openConns())
}

// A negative MaxConns disables the bound; zero means DefaultMaxConns.
func TestMaxConnsDefaultAndDisabled(t *testing.T) {
	require.Equal(t, DefaultMaxConns, ServerOptions{}.WithDefaults().MaxConns)
	require.Equal(t, -1, ServerOptions{MaxConns: -1}.WithDefaults().MaxConns)

	reg := prometheus.NewRegistry()
	m, err := NewMetrics(reg, nil)
	require.NoError(t, err)
	s := startServer(t, echoRouter(), ServerOptions{MaxConns: -1, Metrics: m})
	for i := range 8 {
		echoOnce(t, dialClient(t, s), string(rune('a'+i)))
	}
	require.Equal(t, 8, s.openConns())
	require.Equal(t, 0.0, sumCounter(t, reg, "popshim_remoting_connections_refused_total"))
}

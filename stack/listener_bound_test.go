package stack_test

import (
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/conf"
	"github.com/popshim/popshim/stack/stacktest"
)

// answers reports whether the server behind nc writes something within d
// after the client sent hello (an HTTP/2 server answers the preface with
// its SETTINGS frame; an HTTP/1.1 server answers a request).
func answers(t *testing.T, nc net.Conn, d time.Duration) bool {
	t.Helper()
	require.NoError(t, nc.SetReadDeadline(time.Now().Add(d)))
	var b [1]byte
	n, _ := nc.Read(b[:])
	return n == 1
}

// The gRPC listener serves at most --max-conns connections at once, as
// each remoting listener does: a flood of idle connections there cannot
// take the descriptors RocksDB needs. One more waits in the kernel's
// queue and is served when another closes.
func TestGRPCListenerBoundedByMaxConns(t *testing.T) {
	st := stacktest.StartEdited(t, func(c *conf.Config) { c.MaxConns = 3 })
	addr := st.GRPCAddr()
	require.NotEmpty(t, addr)
	const preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
	dial := func() net.Conn {
		nc, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		t.Cleanup(func() { _ = nc.Close() })
		_, err = nc.Write([]byte(preface))
		require.NoError(t, err)
		return nc
	}
	var held []net.Conn
	for range 3 {
		nc := dial()
		require.True(t, answers(t, nc, 10*time.Second), "a connection within the bound is served")
		held = append(held, nc)
	}
	extra := dial()
	require.False(t, answers(t, extra, 500*time.Millisecond), "the fourth connection waits")
	require.NoError(t, held[0].Close())
	require.True(t, answers(t, extra, 10*time.Second), "and is served once one closes")
}

// /metrics serves at most 16 connections at once (Prometheus scrapes with
// one or two); idle connections past it cannot take the store's
// descriptors either.
func TestMetricsListenerBounded(t *testing.T) {
	st := stacktest.StartEdited(t, nil)
	addr := st.MetricsAddr()
	dial := func() net.Conn {
		nc, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		t.Cleanup(func() { _ = nc.Close() })
		return nc
	}
	var idle []net.Conn
	for range 16 {
		idle = append(idle, dial())
	}
	get := dial()
	_, err := get.Write([]byte("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"))
	require.NoError(t, err)
	require.False(t, answers(t, get, 500*time.Millisecond), "the 17th connection waits")
	require.NoError(t, idle[0].Close())
	require.True(t, answers(t, get, 10*time.Second), "and is served once one closes")
}

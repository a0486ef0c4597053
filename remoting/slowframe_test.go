package remoting

import (
	"errors"
	"net"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"
)

// Two peers take the whole read budget with large frames they then send
// only the start of. While nobody else needs budget they are left alone
// past their deadline; once a third connection's large frame waits, the
// scan closes them (counted, the peer sees EOF) and the third frame is
// read and answered.
func TestSlowLargeFrameClosedWhenOthersWait(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := NewMetrics(reg, nil)
	require.NoError(t, err)
	const body = 128 << 10
	size := int64(len(frameOf(codeSink, 1, body)))
	s := startServer(t, holdRouter(make(chan parked, 4)), ServerOptions{MaxReadBytes: 2 * size, Metrics: m,
		slowGrace: 20 * time.Millisecond})
	allowed := s.slowFrameAllowance(int(size))

	slow := []int32{1, 2}
	drippers := make([]net.Conn, len(slow))
	for i, op := range slow {
		nc := dialRaw(t, s)
		_, err := nc.Write(frameOf(codeSink, op, body)[:100])
		require.NoError(t, err)
		drippers[i] = nc
	}
	require.True(t, eventually(func() bool {
		reserved, _, _, _ := s.readStats()
		return reserved == 2*size
	}), "both slow frames admitted")
	time.Sleep(2 * allowed) // past their deadlines, with nobody waiting
	require.Equal(t, 2, s.openConns(), "slow frames that block no one stay open")
	require.Zero(t, testutil.ToFloat64(m.slowClosed.WithLabelValues(s.opts.Name)))

	nc := dialRaw(t, s)
	_, err = nc.Write(frameOf(codeSink, 3, body))
	require.NoError(t, err)
	resp := readFrame(t, nc)
	require.EqualValues(t, 3, resp.Opaque, "the waiting frame is read and answered")
	require.EqualValues(t, 0, resp.Code)
	require.Positive(t, testutil.ToFloat64(m.slowClosed.WithLabelValues(s.opts.Name)))
	for _, d := range drippers {
		var buf [1]byte
		require.NoError(t, d.SetReadDeadline(time.Now().Add(20*time.Second))) // only a broken server hits it
		_, err := d.Read(buf[:])
		var ne net.Error
		require.Error(t, err, "a slow peer's connection is closed")
		require.False(t, errors.As(err, &ne) && ne.Timeout(), "a slow peer's connection is closed, not left open")
	}
	require.True(t, eventually(func() bool {
		reserved, waiting, _, _ := s.readStats()
		return reserved == 0 && waiting == 0
	}))
}

package remoting

import (
	"context"
	"fmt"
	"net"
	"os"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
)

func TestNextAcceptDelay(t *testing.T) {
	var got []time.Duration
	d := time.Duration(0)
	for range 10 {
		d = nextAcceptDelay(d)
		got = append(got, d)
	}
	ms := time.Millisecond
	require.Equal(t, []time.Duration{5 * ms, 10 * ms, 20 * ms, 40 * ms, 80 * ms, 160 * ms, 320 * ms, 640 * ms, time.Second, time.Second}, got)
	require.Equal(t, acceptMinDelay, nextAcceptDelay(0), "a success resets the pause")
}

func TestAcceptErrReason(t *testing.T) {
	wrap := func(errno syscall.Errno) error {
		return &net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept4", errno)}
	}
	require.Equal(t, "emfile", acceptErrReason(wrap(syscall.EMFILE)))
	require.Equal(t, "enfile", acceptErrReason(wrap(syscall.ENFILE)))
	require.Equal(t, "enobufs", acceptErrReason(wrap(syscall.ENOBUFS)))
	require.Equal(t, "enomem", acceptErrReason(wrap(syscall.ENOMEM)))
	require.Equal(t, "emfile", acceptErrReason(fmt.Errorf("dup: %w", syscall.EMFILE)))
	require.Equal(t, "other", acceptErrReason(wrap(syscall.EPERM)))
	require.Equal(t, "other", acceptErrReason(net.ErrClosed))
}

// failingListener fails the next `fail` Accept calls with EMFILE, as a
// process out of descriptors sees it, without taking a connection from
// the real listener's queue.
type failingListener struct {
	net.Listener
	fail   atomic.Int64
	closed atomic.Bool
}

func (l *failingListener) Accept() (net.Conn, error) {
	if !l.closed.Load() && l.fail.Add(-1) >= 0 {
		return nil, &net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept4", syscall.EMFILE)}
	}
	return l.Listener.Accept()
}

func (l *failingListener) Close() error {
	l.closed.Store(true)
	return l.Listener.Close()
}

// startFailing starts a server whose listener fails accepts on demand.
// A positive pause replaces every back-off pause.
func startFailing(t *testing.T, m *Metrics, pause time.Duration) (*Server, *failingListener) {
	t.Helper()
	var fl *failingListener
	s := startServer(t, echoRouter(), ServerOptions{Metrics: m, acceptPause: pause, wrapListener: func(ln net.Listener) net.Listener {
		fl = &failingListener{Listener: ln}
		return fl
	}})
	return s, fl
}

// Accept errors are counted, back off, and end when accept works again;
// connections open meanwhile are served, and the one that waited in the
// queue is served after the pauses.
func TestAcceptErrorsBackOffAndRecover(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := NewMetrics(reg, nil)
	require.NoError(t, err)
	s, fl := startFailing(t, m, 0)
	c := dialClient(t, s)
	echoOnce(t, c, "before")

	// The loop waits inside the real Accept now: the next connection is
	// accepted, the four calls after it fail (5+10+20+40 ms of pauses),
	// then the one after is accepted. Each error is counted before its
	// pause, so b answering after all four were counted shows it waited
	// in the queue through them (no clock is read: when the pauses began
	// is up to the scheduler).
	fl.fail.Store(4)
	a := dialClient(t, s)
	echoOnce(t, a, "a")
	b := dialClient(t, s)
	echoOnce(t, c, "during")
	echoOnce(t, b, "b")
	require.Equal(t, uint64(4), s.acceptErrors.Load(), "b was accepted after the four failures")
	require.Equal(t, 4.0, sumCounter(t, reg, "popshim_remoting_accept_errors_total"))
	echoOnce(t, c, "after")
}

// Stop does not wait for an accept pause to end.
func TestStopDuringAcceptPause(t *testing.T) {
	s, fl := startFailing(t, nil, time.Hour)
	fl.fail.Store(1 << 30)
	_ = dialClient(t, s) // wakes the loop: it takes this one, then fails and pauses for an hour
	require.Eventually(t, func() bool { return s.acceptErrors.Load() >= 1 }, 20*time.Second, time.Millisecond,
		"the loop is in its hour-long pause")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	require.NoError(t, s.Stop(ctx), "Stop ended the pause instead of waiting out the hour")
}

package remoting

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A failed lookup of the event loop's epoll descriptor (os.ReadDir of
// /proc/self/fd fails with EMFILE while the process is out of descriptors)
// is not remembered: the next connection on the loop finds it, and its
// reads can be paused again.
func TestLoopEpollLookupFailureIsRetried(t *testing.T) {
	var calls atomic.Int32
	findEpoll = func(fd int) (int, error) {
		if calls.Add(1) == 1 {
			return -1, errors.New("open /proc/self/fd: too many open files")
		}
		return findLoopEpoll(fd)
	}
	t.Cleanup(func() { findEpoll = findLoopEpoll })
	s := startServer(t, echoRouter(), ServerOptions{EventLoops: 1, MaxReadBytes: 1 << 20})
	cached := func() int {
		s.epollMu.Lock()
		defer s.epollMu.Unlock()
		n := 0
		for _, fd := range s.epolls {
			if fd >= 0 {
				n++
			}
		}
		return n + 10*(len(s.epolls)-n) // a cached -1 counts 10
	}
	dialRaw(t, s)
	require.Eventually(t, func() bool { return calls.Load() == 1 }, 10*time.Second, time.Millisecond)
	require.Equal(t, 0, cached(), "a failed lookup is not cached")
	dialRaw(t, s)
	require.Eventually(t, func() bool { return calls.Load() == 2 && cached() == 1 }, 10*time.Second, time.Millisecond,
		"the next connection looks again and caches the loop's epoll")
}

package bench

import (
	"context"
	"os"
	"os/exec"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"
)

func settleOptions(pid int, max time.Duration, cpu float64) *Options {
	l := zerolog.Nop()
	return &Options{ServerPIDs: []int{pid}, SettleMax: max, SettleCPU: cpu, Log: &l}
}

// An idle process (a sleeping child) settles at the first sample.
func TestSettleIdleServer(t *testing.T) {
	child := exec.Command("sleep", "30")
	require.NoError(t, child.Start())
	t.Cleanup(func() { _ = child.Process.Kill(); _ = child.Wait() })
	secs, settled, err := settle(context.Background(), settleOptions(child.Process.Pid, 20*time.Second, 10))
	require.NoError(t, err)
	require.True(t, settled)
	require.Less(t, secs, 20.0)
}

// A process burning a core never drops below 10 %: settle gives up after
// SettleMax without an error, reporting it did not settle.
func TestSettleBusyServerGivesUp(t *testing.T) {
	var stop atomic.Bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		for !stop.Load() {
		}
	}()
	t.Cleanup(func() { stop.Store(true); <-done })
	secs, settled, err := settle(context.Background(), settleOptions(os.Getpid(), 2*time.Second, 10))
	require.NoError(t, err)
	require.False(t, settled)
	require.GreaterOrEqual(t, secs, 2.0)
}

// No pid or no budget: no wait; a cancelled run returns ctx's error.
func TestSettleDisabledAndCancelled(t *testing.T) {
	secs, settled, err := settle(context.Background(), settleOptions(0, time.Minute, 10))
	require.NoError(t, err)
	require.False(t, settled)
	require.Zero(t, secs)
	secs, _, err = settle(context.Background(), settleOptions(os.Getpid(), 0, 10))
	require.NoError(t, err)
	require.Zero(t, secs)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, settled, err = settle(ctx, settleOptions(os.Getpid(), time.Minute, 10))
	require.ErrorIs(t, err, context.Canceled)
	require.False(t, settled)
}

package handler_test

// The writer's byte bound over real TCP: a flood of large SENDs against a
// slow store never queues more than --queue-max-bytes; the excess answers
// SYSTEM_BUSY at once and is counted.

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/conf"
)

func TestQueueMaxBytes_BoundsQueuedSends(t *testing.T) {
	const bound = 2 << 20
	h := startSlowHarness(t, 100*time.Millisecond, func(c *conf.Config) {
		c.QueueMaxBytes = bound
		c.WaitTimeMillsInSendQueue = 0 // count only the byte bound here
	})
	h.createTopic("T", 1)
	stop := make(chan struct{})
	var peak atomic.Int64
	var sampler sync.WaitGroup
	sampler.Add(1)
	go func() { // watch the gauge the whole time
		defer sampler.Done()
		for {
			if v := int64(metricSum(t, h, "popshim_writer_queued_bytes")); v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	var ok, busy atomic.Int64
	var wg sync.WaitGroup
	for conn := 0; conn < 8; conn++ {
		c := h.dial()
		for i := 0; i < 4; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for j := 0; j < 3; j++ {
					resp := call(t, c, sendReq("T", 0, make([]byte, 256<<10), sendOpts{}))
					switch resp.Code {
					case codec.Success:
						ok.Add(1)
					case codec.SystemBusy:
						busy.Add(1)
					default:
						t.Errorf("SEND: code %d %s", resp.Code, resp.Remark)
					}
				}
			}()
		}
	}
	wg.Wait()
	close(stop)
	sampler.Wait()
	require.Positive(t, ok.Load())
	require.Positive(t, busy.Load(), "32 concurrent 256 KiB SENDs exceed a 2 MiB bound")
	require.LessOrEqual(t, peak.Load(), int64(bound), "queued bytes never pass the bound")
	require.Positive(t, peak.Load(), "the gauge saw the queue")
	require.Equal(t, float64(busy.Load()), metricSum(t, h, "popshim_writer_rejects_total"), "every SYSTEM_BUSY is counted")
}

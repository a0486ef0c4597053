package handler_test

// The writer's byte bound over real TCP: a flood of large SENDs against a
// slow store never queues more than --queue-max-bytes. With the read
// budget off the excess answers SYSTEM_BUSY at once and is counted; with
// the default read budget (half of --queue-max-bytes) the frames past it
// wait unread in TCP, so the queue stays under half the bound and every
// SEND is stored.

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/conf"
)

// floodResult counts the answers of a flood of large SENDs and the highest
// popshim_writer_queued_bytes seen meanwhile.
type floodResult struct{ ok, busy, peak int64 }

// floodLargeSends runs 8 connections × 4 senders × 3 SENDs of 256 KiB
// against a store whose every write takes 100 ms, with --queue-max-bytes
// bound and --read-max-bytes readMax.
func floodLargeSends(t *testing.T, bound, readMax int64) (*harness, floodResult) {
	h := startSlowHarness(t, 100*time.Millisecond, func(c *conf.Config) {
		c.QueueMaxBytes = bound
		c.ReadMaxBytes = readMax
		c.WaitTimeMillsInSendQueue = 0 // count only the byte bounds here
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
	for range 8 {
		c := h.dial()
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 3 {
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
	return h, floodResult{ok.Load(), busy.Load(), peak.Load()}
}

func TestQueueMaxBytes_BoundsQueuedSends(t *testing.T) {
	const bound = 2 << 20
	h, r := floodLargeSends(t, bound, -1)
	require.Positive(t, r.ok)
	require.Positive(t, r.busy, "32 concurrent 256 KiB SENDs exceed a 2 MiB bound")
	require.LessOrEqual(t, r.peak, int64(bound), "queued bytes never pass the bound")
	require.Positive(t, r.peak, "the gauge saw the queue")
	require.Equal(t, float64(r.busy), metricSum(t, h, "popshim_writer_rejects_total"), "every SYSTEM_BUSY is counted")
}

func TestQueueMaxBytes_DefaultReadBudgetHoldsFramesInTCP(t *testing.T) {
	const bound = 2 << 20
	h, r := floodLargeSends(t, bound, 0)
	require.Equal(t, int64(96), r.ok, "every SEND is stored once read")
	require.Zero(t, r.busy)
	require.Positive(t, r.peak, "the gauge saw the queue")
	require.LessOrEqual(t, r.peak, int64(bound/2), "no more than the read budget is queued")
	require.Zero(t, metricSum(t, h, "popshim_writer_rejects_total"))
}

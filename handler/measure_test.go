package handler_test

import (
	"os"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/codec"
)

// TestMeasureAckPipelined reports (t.Log, no assertion on time) how fast
// pipelined ACKs on one connection complete and how many share an fsync.
// Skipped unless POPSHIM_MEASURE=1.
func TestMeasureAckPipelined(t *testing.T) {
	if os.Getenv("POPSHIM_MEASURE") == "" {
		t.Skip("set POPSHIM_MEASURE=1 to measure")
	}
	h := startHarness(t, nil)
	h.createTopic("T", 4)
	c := h.dial()
	const n = 4000
	for q := range int32(4) {
		sendBatch(t, c, "T", q, "m", 0, n/4, "")
	}
	start := time.Now()
	ms := popAll(t, c, popArgs{group: "G", topic: "T", queueID: -1, max: 32, invisible: 600000}, n)
	popDur := time.Since(start)
	require.Len(t, ms, n)
	before := h.st.Writer.Stats()
	var wg sync.WaitGroup
	wg.Add(n)
	start = time.Now()
	for _, m := range ms {
		require.NoError(t, c.InvokeAsync(ackReq("G", "T", m), func(r *codec.Command, err error) {
			defer wg.Done()
			if err != nil || r.Code != codec.Success {
				t.Errorf("ack failed: %v %v", err, r)
			}
		}))
	}
	wg.Wait()
	ackDur := time.Since(start)
	after := h.st.Writer.Stats()
	t.Logf("pop %d msgs (32/request): %v (%.0f msg/s)", n, popDur, n/popDur.Seconds())
	t.Logf("ack %d pipelined: %v (%.0f ack/s), %d fsyncs, %.1f acks/fsync",
		n, ackDur, n/ackDur.Seconds(), after.Fsyncs-before.Fsyncs, float64(n)/float64(after.Fsyncs-before.Fsyncs))
}

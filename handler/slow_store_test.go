package handler_test

// The event loop never waits on storage: with every store write slowed
// down (startSlowHarness: a WriteHook delays every store write), HEART_BEAT replies on the same
// connection overtake the ACKs that wait for their fsync.

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/codec"
)

func TestSlowStore_HeartbeatsOvertakeAcks(t *testing.T) {
	h := startSlowHarness(t, 300*time.Millisecond, nil)
	h.createTopic("T", 1)
	c := h.dial()
	sendN(t, c, "T", 0, 4, "m", sendOpts{})
	_, ms := pop(t, c, popArgs{group: "G", topic: "T", queueID: 0, max: 4, invisible: 60000})
	require.Len(t, ms, 4)

	var mu sync.Mutex
	var order []int32 // request codes, in reply order
	var wg sync.WaitGroup
	record := func(code int32) func(*codec.Command, error) {
		return func(r *codec.Command, err error) {
			defer wg.Done()
			mu.Lock()
			defer mu.Unlock()
			if err != nil || r.Code != codec.Success {
				order = append(order, -1)
				return
			}
			order = append(order, code)
		}
	}
	hb := []byte(`{"clientID":"127.0.0.1@slow","producerDataSet":[],"consumerDataSet":[]}`)
	beat := func() {
		wg.Add(1)
		require.NoError(t, c.InvokeAsync(codec.NewRequest(codec.RequestHeartBeat, 0, nil, hb), record(codec.RequestHeartBeat)))
	}
	// ACK, HB, HB, ACK, HB, HB, ... then two more HBs: every heartbeat is
	// sent after at least one ACK, most of them after several.
	beats := 0
	for _, m := range ms {
		wg.Add(1)
		require.NoError(t, c.InvokeAsync(ackReq("G", "T", m), record(codec.RequestAckMessage)))
		beat()
		beat()
		beats += 2
	}
	beat()
	beat()
	beats += 2
	waitGroup(t, &wg)
	require.Len(t, order, len(ms)+beats)
	for i, code := range order {
		if i < beats {
			require.Equal(t, codec.RequestHeartBeat, code, "reply %d of %v", i, order)
		} else {
			require.Equal(t, codec.RequestAckMessage, code, "reply %d of %v", i, order)
		}
	}
}

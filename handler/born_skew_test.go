package handler_test

// bornTime and the long-poll window: a client clock ahead
// of the broker's never parks a POP or NOTIFICATION past its pollTime.

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/client"
	"github.com/popshim/popshim/codec"
)

// callWithin sends req and waits at most d for the answer.
func callWithin(t *testing.T, c *client.Conn, req *codec.Command, d time.Duration) (*codec.Command, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	return c.Invoke(ctx, req)
}

// TestPOLL_FutureBornTimeKeepsPollTime: POP and NOTIFICATION with a
// bornTime 10 s and 120 s ahead of the broker clock are answered when their
// pollTime ends (they used to park for the skew as well, up to the skew
// plus 60 s); bornTime 0 means now; a bornTime so far in the past that the
// poll has already ended is POLLING_TIMEOUT at once, as in RocketMQ.
func TestPOLL_FutureBornTimeKeepsPollTime(t *testing.T) {
	h := startHarness(t, nil)
	h.createTopic("T", 1)
	c := h.dial()
	const poll = 300 // ms
	bound := 5 * time.Second
	for _, ahead := range []int64{10_000, 120_000} {
		born := h.b().Now() + ahead
		start := time.Now()
		r, err := callWithin(t, c, popArgs{group: "G", topic: "T", queueID: 0, max: 1, invisible: 30000, poll: poll, bornTime: born}.request(), bound)
		require.NoError(t, err, "POP with bornTime now+%d ms and pollTime %d ms not answered within %s", ahead, poll, bound)
		require.Equal(t, codec.PollingTimeout, r.Code, r.Remark)
		require.GreaterOrEqual(t, time.Since(start), poll*time.Millisecond*9/10, "the poll still lasts its pollTime")

		req := notifyReq("G", "T", 0, poll)
		req.ExtFields["bornTime"] = itoa(h.b().Now() + ahead)
		r, err = callWithin(t, c, req, bound)
		require.NoError(t, err, "NOTIFICATION with bornTime now+%d ms not answered within %s", ahead, bound)
		require.Equal(t, codec.Success, r.Code, r.Remark)
		require.False(t, hasMsg(t, r))
	}
	// bornTime 0: counted from now (a parked poll, answered at pollTime).
	start := time.Now()
	r, err := callWithin(t, c, popArgs{group: "G", topic: "T", queueID: 0, max: 1, invisible: 30000, poll: poll}.request(), bound)
	require.NoError(t, err)
	require.Equal(t, codec.PollingTimeout, r.Code)
	require.GreaterOrEqual(t, time.Since(start), poll*time.Millisecond*9/10)
	// bornTime 10 s in the past with pollTime 1 s: already over.
	past := popArgs{group: "G", topic: "T", queueID: 0, max: 1, invisible: 30000, poll: 1000, bornTime: h.b().Now() - 10_000}
	r, err = callWithin(t, c, past.request(), bound)
	require.NoError(t, err)
	require.Equal(t, codec.PollingTimeout, r.Code)
	require.Contains(t, r.Remark, "timeout too much")
}

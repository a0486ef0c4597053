package handler_test

// --wait-time-mills-in-send-queue over real TCP on 127.0.0.1: while the
// writer is held (gateHook), SENDs that wait in the produce lane longer
// than the limit are shed with SYSTEM_BUSY "[TIMEOUT_CLEAN_QUEUE]…" and
// nothing is written for them; ACKs queued at the same time are applied.

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/batch"
	"github.com/popshim/popshim/client"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/popstore"
)

// startShedHarness is startHookedHarness with SEND shedding after maxWait.
func startShedHarness(t *testing.T, hook popstore.WriteHook, maxWait time.Duration) *harness {
	t.Helper()
	return startHookedHarnessWith(t, hook, maxWait)
}

// invokeAsync sends req on c and delivers the response (or the error) on
// the returned channel, without touching t off the test goroutine.
type asyncReply struct {
	resp *codec.Command
	err  error
}

func invokeAsync(c *client.Conn, req *codec.Command) <-chan asyncReply {
	ch := make(chan asyncReply, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitFor)
		defer cancel()
		resp, err := c.Invoke(ctx, req)
		ch <- asyncReply{resp, err}
	}()
	return ch
}

func await(t *testing.T, ch <-chan asyncReply, what string) *codec.Command {
	t.Helper()
	r := <-ch // Invoke is bounded by waitFor
	require.NoError(t, r.err, what)
	return r.resp
}

// holdWriterOnSend arms gate and sends a SEND of "held" to topic/0 on c,
// returning once the writer is held on that SEND's synced write; the reply
// comes on the returned channel after the gate is released.
func holdWriterOnSend(t *testing.T, gate *gateHook, c *client.Conn, topic string) <-chan asyncReply {
	t.Helper()
	gate.armed.Store(true)
	held := invokeAsync(c, sendReq(topic, 0, []byte("held"), sendOpts{}))
	select {
	case <-gate.held:
	case <-time.After(waitFor):
		t.Fatal("the first SEND's write did not reach the store")
	}
	return held
}

func TestSendShed_TimeoutCleanQueueOverTCP(t *testing.T) {
	const maxWait = 100 * time.Millisecond
	const nShed, nAck = 6, 4
	gate := newGateHook(t)
	h := startShedHarness(t, gate.hook, maxWait)
	h.createTopic("T", 1)
	c := h.dial()

	sendN(t, c, "T", 0, nAck, "a", sendOpts{})
	var ms []popped
	for len(ms) < nAck {
		_, got := pop(t, c, popArgs{group: "G", topic: "T", queueID: 0, max: nAck, invisible: 60000})
		require.NotEmpty(t, got)
		ms = append(ms, got...)
	}

	held := holdWriterOnSend(t, gate, c, "T")
	var sheds, acks []<-chan asyncReply
	for i := range nShed {
		sheds = append(sheds, invokeAsync(c, sendReq("T", 0, []byte("shed-"+strconv.Itoa(i)), sendOpts{})))
	}
	for _, m := range ms {
		acks = append(acks, invokeAsync(c, ackReq("G", "T", m)))
	}
	eventually(t, func() bool {
		return laneDepth(t, h, batch.LaneProduce.String()) == nShed && laneDepth(t, h, batch.LaneForeground.String()) == nAck
	}, "SENDs and ACKs queued behind the held write")
	// Let every queued SEND pass the limit (a precondition, not a timing
	// assertion: any longer wait gives the same outcome).
	time.Sleep(2 * maxWait)
	gate.open()

	require.Equal(t, codec.Success, await(t, held, "held SEND").Code, "the SEND being written when the writer was held")
	for i, ch := range sheds {
		resp := await(t, ch, "shed SEND")
		require.Equal(t, codec.SystemBusy, resp.Code, "SEND %d: %s", i, resp.Remark)
		require.True(t, strings.HasPrefix(resp.Remark, "[TIMEOUT_CLEAN_QUEUE]"), "SEND %d remark %q", i, resp.Remark)
	}
	for i, ch := range acks {
		resp := await(t, ch, "ACK")
		require.Equal(t, codec.Success, resp.Code, "ACK %d queued with the shed SENDs: %s", i, resp.Remark)
	}
	require.EqualValues(t, nShed, h.b().Writer.Stats().Rejects[batch.LaneProduce], "shed SENDs count as rejects")

	// Nothing was written for the shed SENDs: the queue holds a0..a3,
	// "held" and the next SEND, at consecutive offsets.
	after := send(t, c, "T", 0, "after", sendOpts{})
	require.EqualValues(t, nAck+1, after.QueueOffset, "shed SENDs took no queue offsets")
	r := pull(t, c, pullReq("P", "T", 0, 0, 32, 0, ""))
	require.Equal(t, codec.Success, r.code)
	require.Equal(t, []string{"a-0", "a-1", "a-2", "a-3", "held", "after"}, bodiesOf(r.msgs))

	// The ACKs held: past the invisible time only the two new messages
	// come to G, none of a0..a3 again.
	h.advance(61 * time.Second)
	h.reviveNow()
	again := popAll(t, c, popArgs{group: "G", topic: "T", queueID: -1, max: 32, invisible: 60000}, 3)
	require.ElementsMatch(t, []string{"held", "after"}, bodies(again), "acked messages redelivered")
}

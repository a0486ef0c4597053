package handler_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/batch"
	"github.com/popshim/popshim/client"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/handler/reply"
	"github.com/popshim/popshim/remoting"
)

// startHeldSend starts a harness with topic T, stores "warm-up" at offset
// 0, and sends SEND "in-flight" whose write (one writer batch) is held in
// the store; it returns once the write is held. Release it with
// g.open().
func startHeldSend(t *testing.T) (h *harness, c *client.Conn, g *gateHook, inflight pending) {
	t.Helper()
	g = newGateHook(t)
	h = startHookedHarness(t, g.hook)
	h.createTopic("T", 1)
	c = h.dial()
	send(t, c, "T", 0, "warm-up", sendOpts{})
	g.armed.Store(true)
	inflight = asyncCall(t, c, sendReq("T", 0, []byte("in-flight"), sendOpts{}))
	select {
	case <-g.held:
	case <-time.After(waitFor):
		g.open()
		t.Fatal("the SEND's write never reached the store")
	}
	return h, c, g, inflight
}

// withVersion sets the request's version field (MQVersion ordinal).
func withVersion(req *codec.Command, v int32) *codec.Command {
	req.Version = v
	return req
}

// TestGoAway_ShutdownAnswersByClientVersion: a SEND's batch is held in the
// writer while stack.Stack.Close runs. Meanwhile requests from clients above
// V5_3_1 are answered GO_AWAY (1500) and not executed, an old client's
// read is served as usual and its SEND, refused by the closed writer, gets
// SYSTEM_BUSY (2) with a remark; the held SEND still gets SUCCESS, and it
// alone is durable.
func TestGoAway_ShutdownAnswersByClientVersion(t *testing.T) {
	h, c, g, inflight := startHeldSend(t)
	defer g.open()

	st := h.st
	closed := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitFor)
		defer cancel()
		closed <- st.Close(ctx)
	}()
	eventually(t, st.BrokerServer().Draining, "Close did not start draining the broker listener")
	// Writer.Close stops accepting before it waits for the held batch.
	eventually(t, func() bool {
		return errors.Is(st.Writer.Submit(&batch.Op{Lane: batch.LaneBackground}), batch.ErrClosed)
	}, "the writer never stopped accepting")

	hb := []byte(`{"clientID":"127.0.0.1@goaway","producerDataSet":[],"consumerDataSet":[]}`)
	for _, v := range []int32{remoting.VersionV5_3_1 + 1, codec.CurrentVersion} {
		r := call(t, c, withVersion(sendReq("T", 0, []byte("new-client"), sendOpts{}), v))
		require.Equal(t, codec.GoAway, r.Code, "SEND version %d: %s", v, r.Remark)
		require.NotEmpty(t, r.Remark)
		r = call(t, c, withVersion(codec.NewRequest(codec.RequestHeartBeat, 0, nil, hb), v))
		require.Equal(t, codec.GoAway, r.Code, "HEART_BEAT version %d: %s", v, r.Remark)
	}

	old := call(t, c, withVersion(sendReq("T", 0, []byte("old-client"), sendOpts{}), remoting.VersionV5_3_1))
	require.Equal(t, codec.SystemBusy, old.Code, "old client's SEND: %s", old.Remark)
	require.Contains(t, old.Remark, batch.ErrClosed.Error())
	beat := call(t, c, withVersion(codec.NewRequest(codec.RequestHeartBeat, 0, nil, hb), remoting.VersionV5_3_1))
	require.Equal(t, codec.Success, beat.Code, "an old client's read is served while draining: %s", beat.Remark)

	_, done := inflight.answered()
	require.False(t, done, "the held SEND must not be answered before its batch is durable")
	g.open()
	r := inflight.wait(t)
	require.Equal(t, codec.Success, r.Code, "the in-flight SEND keeps its durable result: %s", r.Remark)
	hdr, err := codec.DecodeSendMessageResponseHeader(r.ExtFields)
	require.NoError(t, err)
	require.Equal(t, int64(1), hdr.QueueOffset)
	select {
	case err := <-closed:
		require.NoError(t, err)
	case <-time.After(waitFor):
		t.Fatal("Close did not return after the held batch was released")
	}

	h.restart()
	require.Equal(t, int64(2), maxOffsetRemote(t, h.dial(), "T"),
		"only warm-up and the in-flight SEND are stored; refused requests left nothing")
}

// TestGoAway_SubmitCodeForClosedWriter: the mapping every handler uses when
// Submit refuses an op.
func TestGoAway_SubmitCodeForClosedWriter(t *testing.T) {
	require.Equal(t, codec.GoAway, reply.SubmitCode(batch.ErrClosed))
	require.Equal(t, codec.SystemBusy, reply.SubmitCode(batch.ErrBusy))
	require.Equal(t, codec.SystemError, reply.SubmitCode(batch.ErrFailed))
}

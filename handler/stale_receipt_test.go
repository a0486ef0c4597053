package handler_test

// Stale and impossible receipt handles: a CHANGE
// that finds no lease hands out no handle, and handles whose fields cannot
// describe one checkpoint are MESSAGE_ILLEGAL.

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/codec"
)

// TestCHG_StaleHandleGetsNoNewHandle: POP → H0, CHANGE(H0) → H1, then
// CHANGE(H0) again answers NO_MESSAGE without a handle (it used to answer
// SUCCESS with a handle H1′ that held no lease: ACK(H1′) was SUCCESS and
// the message still came back). A chain of CHANGEs each using the newest
// handle keeps working, a stale ACK stays a blind SUCCESS (ACK-03), and the
// newest handle acks the message for good.
func TestCHG_StaleHandleGetsNoNewHandle(t *testing.T) {
	h, c, ms := oneInFlight(t, sendOpts{}, 10000)
	h0 := ms[0]
	resp, h1 := change(t, c, "G", "T", h0, 20000)
	require.Equal(t, codec.Success, resp.Code, resp.Remark)

	h.advance(time.Millisecond) // a different popTime: a distinct key if anything were written
	resp, _ = change(t, c, "G", "T", h0, 30000)
	require.Equal(t, codec.NoMessage, resp.Code, "CHANGE of a stale handle: %s", resp.Remark)
	_, hasHandle := resp.Ext("extraInfo")
	require.False(t, hasHandle, "a refused CHANGE must not hand out a handle")
	require.Contains(t, resp.Remark, "stale")

	// The chain from the newest handle still works.
	resp, h2 := change(t, c, "G", "T", h1, 25000)
	require.Equal(t, codec.Success, resp.Code, resp.Remark)
	resp, h3 := change(t, c, "G", "T", h2, 30000)
	require.Equal(t, codec.Success, resp.Code, resp.Remark)
	resp, _ = change(t, c, "G", "T", h1, 30000)
	require.Equal(t, codec.NoMessage, resp.Code, "a handle two CHANGEs old")

	require.Equal(t, codec.Success, ack(t, c, "G", "T", h0), "stale ACK: blind SUCCESS")
	require.Equal(t, codec.Success, ack(t, c, "G", "T", h3))
	require.Empty(t, bodies(redeliveries(t, h, "G", "T", 31*time.Second)), "acked with the newest handle")
}

// TestCHG_ConcurrentChangesOneWinner: two CHANGEs of one handle in flight
// together, their popTimes 1 ms apart: exactly one SUCCESS, the other
// NO_MESSAGE; acking the winner's handle ends the message.
func TestCHG_ConcurrentChangesOneWinner(t *testing.T) {
	h, c, ms := oneInFlight(t, sendOpts{}, 10000)
	type res struct {
		resp *codec.Command
		err  error
	}
	out := make(chan res, 2)
	for range 2 {
		require.NoError(t, c.InvokeAsync(changeReq("G", "T", ms[0], 20000), func(r *codec.Command, err error) {
			out <- res{r, err}
		}))
		h.advance(time.Millisecond)
	}
	var winner *codec.Command
	for range 2 {
		r := <-out
		require.NoError(t, r.err)
		switch r.resp.Code {
		case codec.Success:
			require.Nil(t, winner, "both CHANGEs of one handle answered SUCCESS")
			winner = r.resp
		default:
			require.Equal(t, codec.NoMessage, r.resp.Code, r.resp.Remark)
		}
	}
	require.NotNil(t, winner)
	ext, ok := winner.Ext("extraInfo")
	require.True(t, ok)
	np := ms[0]
	np.handle, np.raw = mustParseExtraInfo(t, ext), ext
	require.Equal(t, codec.Success, ack(t, c, "G", "T", np))
	require.Empty(t, bodies(redeliveries(t, h, "G", "T", 21*time.Second)))
}

// TestACK_ReceiptMustDescribeOneCheckpoint: handles whose start offset
// (field 0) is above the message offset or negative, whose popTime is 0 or
// whose invisibleTime is negative are MESSAGE_ILLEGAL for ACK, CHANGE and
// BATCH_ACK, and touch nothing; real handles (start offset far below the
// message offset, the proxy's nine fields) are still accepted.
func TestACK_ReceiptMustDescribeOneCheckpoint(t *testing.T) {
	h := startHarness(t, nil)
	h.createTopic("T", 1)
	c := h.dial()
	sendN(t, c, "T", 0, 3, "m", sendOpts{})
	_, ms := pop(t, c, popArgs{group: "G", topic: "T", queueID: 0, max: 3, invisible: 10000})
	require.Len(t, ms, 3)
	require.EqualValues(t, 0, ms[1].handle.CkQueueOffset)

	forge := func(p popped, edit func(e *codec.ExtraInfo)) popped {
		edit(&p.handle)
		p.raw = p.handle.String()
		return p
	}
	bad := map[string]popped{
		"start offset above message offset": forge(ms[1], func(e *codec.ExtraInfo) { e.CkQueueOffset = 2 }),
		"negative start offset":             forge(ms[1], func(e *codec.ExtraInfo) { e.CkQueueOffset = -1 }),
		"popTime 0":                         forge(ms[1], func(e *codec.ExtraInfo) { e.InvisibleTime += e.PopTime; e.PopTime = 0 }),
		"negative invisibleTime":            forge(ms[1], func(e *codec.ExtraInfo) { e.PopTime += e.InvisibleTime + 1; e.InvisibleTime = -1 }),
	}
	for name, p := range bad {
		r := call(t, c, ackReq("G", "T", p))
		require.Equal(t, codec.MessageIllegal, r.Code, "ACK, %s: %s", name, r.Remark)
		r = call(t, c, changeReq("G", "T", p, 20000))
		require.Equal(t, codec.MessageIllegal, r.Code, "CHANGE, %s: %s", name, r.Remark)
	}
	e := ms[1].handle
	for name, entry := range map[string]string{
		"popTime 0":              fmt.Sprintf(`"so":1,"pt":0,"it":%d`, e.PopTime+e.InvisibleTime),
		"negative start offset":  fmt.Sprintf(`"so":-1,"pt":%d,"it":%d`, e.PopTime, e.InvisibleTime),
		"negative invisibleTime": fmt.Sprintf(`"so":1,"pt":%d,"it":-1`, e.PopTime+e.InvisibleTime+1),
	} {
		body := `{"brokerName":"` + testBrokerName + `","acks":[{"c":"G","t":"T","r":"0","q":0,"rq":0,` + entry + `,"b":"AQ=="}]}`
		r := call(t, c, codec.NewRequest(codec.RequestBatchAckMessage, 0, nil, []byte(body)))
		require.Equal(t, codec.MessageIllegal, r.Code, "BATCH_ACK, %s: %s", name, r.Remark)
	}

	// Real handles: the proxy's ninth field, a start offset two below.
	nine := ms[2]
	nine.raw += " " + strconv.FormatInt(1<<20, 10)
	require.EqualValues(t, 0, nine.handle.CkQueueOffset)
	require.Equal(t, codec.Success, ack(t, c, "G", "T", nine))
	require.Equal(t, codec.Success, ack(t, c, "G", "T", ms[0]))
	require.Equal(t, []string{"m-1"}, bodies(redeliveries(t, h, "G", "T", 11*time.Second)),
		"only m-1 is left: no impossible handle acked it")
}

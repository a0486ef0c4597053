package handler_test

import (
	"math"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/codec"
)

// TestREV_StalledCheckpointWriteStillRevived: a POP checkpoint whose write
// stalls while the clock runs far past its deadline (revive passes keep
// moving the cursor meanwhile) is still revived by a later pass.
func TestREV_StalledCheckpointWriteStillRevived(t *testing.T) {
	g := newGateHook(t)
	h := startHookedHarness(t, g.hook)
	h.createTopic("T", 1)
	c := h.dial()
	send(t, c, "T", 0, "warm-up", sendOpts{})
	send(t, c, "T", 0, "m", sendOpts{})
	// A first POP of the group does the one-time writes (retry topic, ...).
	_, w := pop(t, c, popArgs{group: "G", topic: "T", queueID: 0, max: 1, invisible: 600000})
	require.Equal(t, []string{"warm-up"}, bodies(w))

	pc := h.dial()
	g.armed.Store(true)
	before := h.b().Now()
	p := asyncPop(t, pc, popArgs{group: "G", topic: "T", queueID: 0, max: 1, invisible: 1000})
	select {
	case <-g.held:
	case <-time.After(waitFor):
		g.open()
		t.Fatal("the POP's checkpoint write never reached the store")
	}
	// Passes run while the write is held: the cursor moves 20 s ahead.
	h.advance(20 * time.Second)
	h.reviveNow()
	g.open()
	r := p.wait(t)
	require.Equal(t, codec.Success, r.Code, r.Remark)
	require.Equal(t, []string{"m"}, bodies(parsePop(t, r)))
	popTime, err := strconv.ParseInt(r.ExtFields["popTime"], 10, 64)
	require.NoError(t, err)
	require.Less(t, popTime, before+20_000, "the held write was not the POP's")

	got := bodies(redeliveries(t, h, "G", "T", time.Second))
	require.Equal(t, []string{"m"}, got,
		"the checkpoint made durable behind the cursor was not revived")
	cks, err := h.b().Store.ScanCheckpoints(0, math.MaxInt64, 10)
	require.NoError(t, err)
	require.Len(t, cks, 2, "only the warm-up's and the redelivery's checkpoints are left")
}

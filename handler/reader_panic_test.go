package handler_test

// A panic in one POP job is recovered on the reader: the
// request is answered SYSTEM_ERROR, the queue locks it held are released,
// nothing is committed, and the broker goes on serving.

import (
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/codec"
)

// TestPOP_PanicInJobReleasesLocks injects a panic (test hook) into a POP
// that holds the locks of two queues: the client gets SYSTEM_ERROR, no lock
// stays held, nor the reply room its read took, the offsets did not move,
// and the next POP gets every message.
func TestPOP_PanicInJobReleasesLocks(t *testing.T) {
	h := startHarness(t, nil)
	h.createTopic("T", 2)
	c := h.dial()
	send(t, c, "T", 0, "a", sendOpts{})
	send(t, c, "T", 1, "b", sendOpts{})

	var fired atomic.Bool
	hook := func() {
		if fired.CompareAndSwap(false, true) {
			panic("injected by TestPOP_PanicInJobReleasesLocks")
		}
	}
	h.b().Settings.Hooks.BeforeSubmit.Store(&hook)
	t.Cleanup(func() { h.b().Settings.Hooks.BeforeSubmit.Store(nil) })

	r := call(t, c, popArgs{group: "G", topic: "T", queueID: -1, max: 32, invisible: 60000}.request())
	require.Equal(t, codec.SystemError, r.Code, r.Remark)
	require.Contains(t, r.Remark, "internal error")
	require.True(t, fired.Load())
	require.Zero(t, h.b().Svc.HeldLocks(), "a queue stayed locked after the panic")
	require.Zero(t, h.b().Svc.ReadingReplyBytes(), "the read's reply room stayed taken after the panic")
	require.EqualValues(t, -1, committedOffset(h, "G", "T", 0))
	require.EqualValues(t, -1, committedOffset(h, "G", "T", 1))

	got := popAll(t, c, popArgs{group: "G", topic: "T", queueID: -1, max: 32, invisible: 60000}, 2)
	require.ElementsMatch(t, []string{"a", "b"}, bodies(got))
	for _, m := range got {
		require.Equal(t, codec.Success, ack(t, c, "G", "T", m))
	}
	require.Zero(t, h.b().Svc.HeldLocks())
}

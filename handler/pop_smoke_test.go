package handler

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/codec"
)

func TestPopSmoke(t *testing.T) {
	h := startHarness(t, nil)
	h.createTopic("T", 1)
	c := h.dial()
	sendN(t, c, "T", 0, 3, "m", sendOpts{tag: "a"})
	resp, ms := pop(t, c, popArgs{group: "G", topic: "T", queueID: 0, max: 32, invisible: 60000, initMode: 0})
	require.Equal(t, codec.Success, resp.Code, resp.Remark)
	require.Equal(t, []string{"m-0", "m-1", "m-2"}, bodies(ms))
	for _, m := range ms {
		require.Equal(t, codec.Success, ack(t, c, "G", "T", m))
	}
	require.EqualValues(t, 3, committedOffset(h, "G", "T", 0))
	resp, _ = pop(t, c, popArgs{group: "G", topic: "T", queueID: 0, max: 32, invisible: 60000})
	require.Equal(t, codec.PollingTimeout, resp.Code)
}

package handler_test

// A POP or PULL reply always fits a client's frame limit (16 MiB including
// the length prefix: RocketMQ NettyDecoder's default
// com.rocketmq.remoting.frameMaxLength, and popshim's own client), however
// large the messages: the body stops before a record that would take it
// past maxPopBytes, and that record is left for the next request.

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/codec"
)

// TestPOP_ReplyFitsClientFrameLimit: 20 messages of 1 MiB; POPs of up to
// 32 messages each get every message exactly once, each reply decoding
// within the client's 16 MiB frame limit (call fails on a larger frame).
func TestPOP_ReplyFitsClientFrameLimit(t *testing.T) {
	h := startHarness(t, nil)
	h.createTopic("T", 1)
	c := h.dial()
	const n, size = 20, 1 << 20
	body := strings.Repeat("y", size)
	for range n {
		send(t, c, "T", 0, body, sendOpts{})
	}
	seen := map[int64]bool{}
	for range n {
		resp, ms := pop(t, c, popArgs{group: "G", topic: "T", queueID: 0, max: 32, invisible: 60000})
		if resp.Code != codec.Success {
			break
		}
		require.NotEmpty(t, ms)
		for _, m := range ms {
			require.False(t, seen[m.m.QueueOffset], "offset %d popped twice", m.m.QueueOffset)
			seen[m.m.QueueOffset] = true
		}
	}
	require.Len(t, seen, n)
}

// TestPULL_ReplyFitsClientFrameLimit: the same for PULL_MESSAGE from offset
// 0 onwards with nextBeginOffset.
func TestPULL_ReplyFitsClientFrameLimit(t *testing.T) {
	h := startHarness(t, nil)
	h.createTopic("T", 1)
	c := h.dial()
	const n, size = 20, 1 << 20
	body := strings.Repeat("z", size)
	for range n {
		send(t, c, "T", 0, body, sendOpts{})
	}
	next, got := int64(0), 0
	for next < n {
		resp := call(t, c, pullReq("G", "T", 0, next, 32, 0, ""))
		require.Equal(t, codec.Success, resp.Code, resp.Remark)
		ms, err := codec.DecodeMessages(resp.Body)
		require.NoError(t, err)
		require.NotEmpty(t, ms)
		require.Equal(t, next, ms[0].QueueOffset)
		got += len(ms)
		next = ms[len(ms)-1].QueueOffset + 1
	}
	require.Equal(t, n, got)
}

package handler_test

import (
	"bytes"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/conf"
)

// A consumer connection that POPs large messages and reads none of the
// answers fills --reply-max-bytes; while it does, another consumer's POP
// reads nothing and ends as an empty poll (POLLING_TIMEOUT) although
// messages wait, and a PULL finds nothing; once the first connection
// closes, the same POP gets its messages.
func TestPopWaitsWhileRepliesUnread(t *testing.T) {
	h := startHarness(t, func(c *conf.Config) { c.ReplyMaxBytes = 1 << 20 })
	h.createTopic("T", 1)
	c := h.dial()
	body := bytes.Repeat([]byte{'m'}, 256<<10)
	for range 64 {
		resp := call(t, c, sendReq("T", 0, body, sendOpts{}))
		require.Equal(t, codec.Success, resp.Code, resp.Remark)
	}
	room := h.b().Settings.ReplyRoom
	require.NotNil(t, room)
	require.EqualValues(t, 1<<20, room())

	// 16 groups' long polls on one connection that never reads (4 KiB
	// window): each reads up to the room left (at least one message) or
	// waits for room, until the kernel's buffers are full and the rest
	// stays in popshim.
	d := net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
		return rc.Control(func(fd uintptr) { _ = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
	}}
	nc, err := d.Dial("tcp", h.addr())
	require.NoError(t, err)
	defer nc.Close()
	var frames []byte
	for i := range 16 {
		req := popArgs{group: "G" + string(rune('a'+i)), topic: "T", max: 32, invisible: 60_000, poll: 10_000}.request()
		req.Opaque = int32(i + 1)
		frames = codec.AppendFrame(frames, req)
	}
	_, err = nc.Write(frames)
	require.NoError(t, err)
	// While the kernel's send buffer grows it takes bytes from popshim and
	// the waiting POPs read more: wait until the bound holds for a second.
	eventually(t, func() bool {
		for range 20 {
			if room() > 0 {
				return false
			}
			time.Sleep(50 * time.Millisecond)
		}
		return true
	}, "unread POP answers hold the bound (room %d)", room())

	resp, err := callWithin(t, c, popArgs{group: "GB", topic: "T", max: 32, invisible: 60_000, poll: 1_000}.request(), 10*time.Second)
	require.NoError(t, err)
	require.Equal(t, codec.PollingTimeout, resp.Code, "no message is read while the bound is held: %s", resp.Remark)
	resp, err = callWithin(t, c, pullReq("GB", "T", 0, 0, 32, 1_000, ""), 10*time.Second)
	require.NoError(t, err)
	require.Equal(t, codec.PullNotFound, resp.Code, resp.Remark)

	require.NoError(t, nc.Close())
	eventually(t, func() bool { return room() == 1<<20 }, "the closed connection's bytes leave the count (room %d)", room())
	msgs := popAll(t, c, popArgs{group: "GB", topic: "T", max: 32, invisible: 60_000, poll: 1_000}, 1)
	require.NotEmpty(t, msgs)
	require.LessOrEqual(t, len(msgs), 4, "one POP takes at most the room, 1 MiB of 256 KiB messages")
}

package handler_test

import (
	"bytes"
	"net"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/client"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/conf"
)

// A consumer connection that POPs large messages and reads none of the
// answers fills --reply-max-bytes; while it does, another consumer's POP
// reads nothing and ends as an empty poll (POLLING_TIMEOUT) although
// messages wait, and a PULL finds nothing; once the first connection
// closes, the same POP gets its messages.
func TestPopWaitsWhileRepliesUnread(t *testing.T) {
	h, c, room := startRoomHarness(t)
	require.EqualValues(t, 1<<20, room())

	// 16 groups' long polls on one connection that never reads: each reads
	// up to the room left (at least one message) or waits for room, until
	// the kernel's buffers are full and the rest stays in popshim.
	nc := dialUnread(t, h)
	var frames []byte
	for i := range 16 {
		req := popArgs{group: "G" + string(rune('a'+i)), topic: "T", max: 32, invisible: 60_000, poll: 10_000}.request()
		req.Opaque = int32(i + 1)
		frames = codec.AppendFrame(frames, req)
	}
	_, err := nc.Write(frames)
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

	// Both polls end well before the 3 s after which popshim closes a
	// connection that holds the bound and reads nothing (remoting's
	// slowReplyGrace): with 1 s each, that close sometimes came first and
	// the PULL, waiting for room, then read.
	resp, err := callWithin(t, c, popArgs{group: "GB", topic: "T", max: 32, invisible: 60_000, poll: 300}.request(), 10*time.Second)
	require.NoError(t, err)
	require.Equal(t, codec.PollingTimeout, resp.Code, "no message is read while the bound is held: %s", resp.Remark)
	resp, err = callWithin(t, c, pullReq("GB", "T", 0, 0, 32, 300, ""), 10*time.Second)
	require.NoError(t, err)
	require.Equal(t, codec.PullNotFound, resp.Code, resp.Remark)

	require.NoError(t, nc.Close())
	eventually(t, func() bool { return room() == 1<<20 }, "the closed connection's bytes leave the count (room %d)", room())
	msgs := popAll(t, c, popArgs{group: "GB", topic: "T", max: 32, invisible: 60_000, poll: 1_000}, 1)
	require.NotEmpty(t, msgs)
	require.LessOrEqual(t, len(msgs), 4, "one POP takes at most the room, 1 MiB of 256 KiB messages")
}

// A POP waiting for reply room stops when its connection closes: it
// reads no more (no further POP runs) and takes no message once room is
// back, as a parked long poll of a closed connection does. Before, it
// looked again every 100 ms until its poll ended and then took messages
// that came back only after invisibleTime.
func TestPopWaitingForRoomStopsWithItsConnection(t *testing.T) {
	h, c, room := startRoomHarness(t)
	nc := fillReplyBound(t, h, room)

	gone := h.dial()
	waiting := asyncPop(t, gone, popArgs{group: "GW", topic: "T", max: 32, invisible: 60_000, poll: 30_000})
	runs := func() uint64 { return h.b().Polls.Stats().PopRuns }
	before := runs()
	eventually(t, func() bool { return runs() >= before+3 }, "the POP looks for room every 100 ms (runs %d)", runs()-before)
	_, early := waiting.answered()
	require.False(t, early, "the waiting POP was answered")

	require.NoError(t, gone.Close())
	time.Sleep(300 * time.Millisecond) // the close reaches popshim
	stopped := runs()
	time.Sleep(400 * time.Millisecond)
	require.Equal(t, stopped, runs(), "the POP of the closed connection still looks for room")

	require.NoError(t, nc.Close())
	eventually(t, func() bool { return room() == 1<<20 }, "the unread answers leave the count (room %d)", room())
	time.Sleep(300 * time.Millisecond) // three retry periods with room
	_, ms := pop(t, c, popArgs{group: "GW", topic: "T", queueID: 0, max: 1, invisible: 60_000})
	require.Len(t, ms, 1)
	require.Zero(t, ms[0].m.QueueOffset, "the POP of the closed connection took messages")
}

// startRoomHarness starts popshim with a 1 MiB --reply-max-bytes and
// topic "T" (one queue) holding 64 messages of 256 KiB. It returns the
// harness, the client that sent them and the broker's reply room.
func startRoomHarness(t *testing.T) (*harness, *client.Conn, func() int64) {
	t.Helper()
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
	return h, c, room
}

// dialUnread opens a raw connection to h with a 4 KiB receive window, for
// a client that reads none of its answers; closed at the test's end.
func dialUnread(t *testing.T, h *harness) net.Conn {
	t.Helper()
	d := net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
		return rc.Control(func(fd uintptr) { _ = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
	}}
	nc, err := d.Dial("tcp", h.addr())
	require.NoError(t, err)
	t.Cleanup(func() { nc.Close() })
	return nc
}

// fillReplyBound POPs topic "T" without long polling on a connection that
// reads nothing (dialUnread), one group per POP, until the answers it
// does not read hold the reply bound for a second; no POP of it waits for
// room. It returns the connection.
func fillReplyBound(t *testing.T, h *harness, room func() int64) net.Conn {
	t.Helper()
	nc := dialUnread(t, h)
	i := 0
	eventually(t, func() bool {
		for range 20 {
			if room() > 0 {
				i++
				req := popArgs{group: "F" + strconv.Itoa(i), topic: "T", max: 32, invisible: 60_000}.request()
				req.Opaque = int32(i)
				_, err := nc.Write(codec.AppendFrame(nil, req))
				require.NoError(t, err)
				time.Sleep(20 * time.Millisecond)
				return false
			}
			time.Sleep(50 * time.Millisecond)
		}
		return true
	}, "unread POP answers hold the bound (room %d)", room())
	return nc
}

package handler_test

import (
	"bytes"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/broker"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/remoting"
)

// While unread answers hold the reply bound, VIEW_MESSAGE_BY_ID and
// GET_ALL_TOPIC_CONFIG get SYSTEM_BUSY with the [REPLY_BOUND] remark at
// once instead of building their answers; a connection that pipelines 60
// VIEW_MESSAGE_BY_ID requests for a 256 KiB message and reads nothing
// adds no answers past the bound; once the unread connections close the
// same requests are served. Before, 60 such requests held ~11 MiB
// against a 1 MiB bound.
func TestLargeAnswersRefusedWhileReplyBoundReached(t *testing.T) {
	h, c, room := startRoomHarness(t)
	resp := call(t, c, sendReq("T", 0, bytes.Repeat([]byte{'v'}, 256<<10), sendOpts{}))
	require.Equal(t, codec.Success, resp.Code, resp.Remark)
	_, phys, err := codec.DecodeOffsetMsgID(resp.ExtFields["msgId"])
	require.NoError(t, err)
	view := func(opaque int32) *codec.Command {
		return codec.NewRequest(codec.RequestViewMessageByID, opaque, map[string]string{"offset": strconv.FormatInt(phys, 10)}, nil)
	}

	nc := fillReplyBound(t, h, room) // POPs that wait for room keep it filled
	for _, req := range []*codec.Command{view(0), codec.NewRequest(codec.RequestGetAllTopicConfig, 0, nil, nil)} {
		resp, err := callWithin(t, c, req, 10*time.Second)
		require.NoError(t, err)
		require.Equal(t, codec.SystemBusy, resp.Code, "code %d: %s", req.Code, resp.Remark)
		require.True(t, strings.HasPrefix(resp.Remark, "[REPLY_BOUND]"), resp.Remark)
	}

	// 60 pipelined requests pass the dispatch check together; each is
	// looked at again on the reader pool.
	piped := dialUnread(t, h)
	var frames []byte
	for i := range 60 {
		frames = codec.AppendFrame(frames, view(int32(i+1)))
	}
	_, err = piped.Write(frames)
	require.NoError(t, err)
	time.Sleep(500 * time.Millisecond)
	require.Greater(t, room(), int64(-2<<20), "pipelined answers held past the bound")

	require.NoError(t, piped.Close())
	require.NoError(t, nc.Close())
	eventually(t, func() bool { return room() == 1<<20 }, "the closed connection's bytes leave the count (room %d)", room())
	resp, err = callWithin(t, c, view(0), 10*time.Second)
	require.NoError(t, err)
	require.Equal(t, codec.Success, resp.Code, resp.Remark)
	require.Greater(t, len(resp.Body), 256<<10)
}

// A table handler wrapped in tableReply runs on the reader pool: the
// wrapper returns while the handler still waits (run inline, the wrapper
// would not return until the handler did, and the test fails after its
// bound), and GET_ALL_TOPIC_CONFIG through the broker port still answers
// every topic.
func TestTableAnswersLeaveTheEventLoop(t *testing.T) {
	h := startHarness(t, nil)
	release, ran := make(chan struct{}), make(chan struct{})
	wrapped := h.b().TableReply(func(remoting.Conn, *codec.Command) {
		<-release
		close(ran)
	})
	returned := make(chan struct{})
	go func() {
		wrapped(nil, codec.NewRequest(codec.RequestGetAllTopicConfig, 1, nil, nil))
		close(returned)
	}()
	select {
	case <-returned:
	case <-time.After(10 * time.Second):
		close(release)
		t.Fatal("the table handler ran on the calling goroutine")
	}
	close(release)
	<-ran

	reqs := make([]broker.CreateTopicRequest, 500)
	for i := range reqs {
		reqs[i] = broker.CreateTopicRequest{Topic: "Table" + strconv.Itoa(i), ReadQueueNums: 1, WriteQueueNums: 1, Perm: 6}
	}
	created := make(chan error, 1)
	h.b().CreateTopics(reqs, func(err error) { created <- err })
	require.NoError(t, <-created)
	resp := call(t, h.dial(), codec.NewRequest(codec.RequestGetAllTopicConfig, 0, nil, nil))
	require.Equal(t, codec.Success, resp.Code, resp.Remark)
	n, err := strconv.Atoi(resp.ExtFields["totalTopicNum"])
	require.NoError(t, err)
	require.GreaterOrEqual(t, n, 500)
}

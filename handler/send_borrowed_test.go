package handler_test

// The produce handlers read SEND bodies where the event loop received them
// (remoting.Router.HandleBorrowing). stacktest scribbles over every lent
// body once its handler returns, so a body kept past that point would be
// stored as 0xEE bytes: these tests read every stored body back.

import (
	"bytes"
	"math/rand/v2"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/codec"
)

// randomBody is n pseudo-random bytes from r (never a run of 0xEE).
func randomBody(r *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.IntN(0xEE))
	}
	return b
}

// storedBodies reads n messages of topic/queueId from offset 0 and returns
// their bodies.
func storedBodies(t *testing.T, h *harness, topic string, queueID int32, n int) [][]byte {
	t.Helper()
	recs, _, err := h.b().Store.ReadMessages(topic, queueID, 0, n+1, 1<<30)
	require.NoError(t, err)
	require.Len(t, recs, n)
	out := make([][]byte, n)
	for i, rec := range recs {
		m, _, err := codec.DecodeMessage(rec)
		require.NoError(t, err)
		out[i] = m.Body
	}
	return out
}

// Pipelined SEND_MESSAGE_V2 and SEND_MESSAGE frames of 1 B to 100 KiB (some
// over remoting.LargeFrameBytes, which own their buffer, most split
// across reads of the event loop) are stored byte for byte.
func TestSendBorrowedBodiesPipelined(t *testing.T) {
	h := startHarness(t, nil)
	h.createTopic("T", 1)
	c := h.dial()
	r := rand.New(rand.NewPCG(1, 2))
	const n = 300
	bodies := make([][]byte, n)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failed []string
	for i := range n {
		size := 1 + r.IntN(8<<10)
		if i%25 == 0 {
			size = 60<<10 + r.IntN(40<<10)
		}
		bodies[i] = randomBody(r, size)
		wg.Add(1)
		// One in flight per request, all pipelined on one connection, in
		// order: the broker stores them in arrival order.
		err := c.InvokeAsync(sendReq("T", 0, bodies[i], sendOpts{v1: i%3 == 0}), func(resp *codec.Command, err error) {
			defer wg.Done()
			if err != nil || resp.Code != codec.Success {
				mu.Lock()
				failed = append(failed, strconv.Itoa(i))
				mu.Unlock()
			}
		})
		require.NoError(t, err)
	}
	waitGroup(t, &wg)
	require.Empty(t, failed)
	want := make(map[string]int, n)
	for _, b := range bodies {
		want[string(b)]++
	}
	for i, b := range storedBodies(t, h, "T", 0, n) {
		require.Positive(t, want[string(b)], "stored message %d (%d bytes) is none of the bodies sent", i, len(b))
		want[string(b)]--
	}
}

// SEND_BATCH_MESSAGE entries, a half message, and a %RETRY% send diverted
// to the DLQ keep their bodies.
func TestSendBorrowedBodiesBatchHalfDLQ(t *testing.T) {
	h := startHarness(t, nil)
	h.createTopic("T", 1)
	c := h.dial()
	r := rand.New(rand.NewPCG(3, 4))

	var batch []byte
	var entries [][]byte
	for range 40 {
		e := randomBody(r, 1+r.IntN(3000))
		entries = append(entries, e)
		var err error
		batch, err = codec.AppendBatchEntry(batch, &codec.Message{Body: e})
		require.NoError(t, err)
	}
	hd := codec.SendMessageRequestHeader{ProducerGroup: "PG", Topic: "T", DefaultTopic: "TBW102", DefaultTopicQueueNums: 4,
		QueueID: 0, BornTimestamp: time.Now().UnixMilli(), Batch: true}
	req := codec.NewRequest(codec.RequestSendBatchMessage, 0, nil, batch)
	hd.EncodeV2(req)
	resp := call(t, c, req)
	require.Equal(t, codec.Success, resp.Code, resp.Remark)
	got := storedBodies(t, h, "T", 0, len(entries))
	for i := range entries {
		require.True(t, bytes.Equal(entries[i], got[i]), "batch entry %d", i)
	}

	half := randomBody(r, 5000)
	hr := send(t, c, "T", 0, string(half), sendOpts{sysFlag: codec.SysFlagTransactionPrepared,
		props: map[string]string{codec.PropertyTransactionPrepared: "true", codec.PropertyProducerGroup: "PG"}})
	_, phys, err := codec.DecodeOffsetMsgID(hr.MsgID)
	require.NoError(t, err)
	hf, ok, err := h.b().Store.Half(phys)
	require.NoError(t, err)
	require.True(t, ok, "half stored")
	m, _, err := codec.DecodeMessage(hf.Record)
	require.NoError(t, err)
	require.True(t, bytes.Equal(half, m.Body), "half message body")

	dlq := randomBody(r, 2000)
	send(t, c, "%RETRY%G", 0, string(dlq), sendOpts{reconsume: 3, maxRetries: 2})
	require.True(t, bytes.Equal(dlq, storedBodies(t, h, "%DLQ%G", 0, 1)[0]), "DLQ body")
}

// waitGroup waits for wg, failing the test after waitFor.
func waitGroup(t *testing.T, wg *sync.WaitGroup) {
	t.Helper()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(waitFor):
		t.Fatal("replies missing")
	}
}

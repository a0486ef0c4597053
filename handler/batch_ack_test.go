package handler_test

// BATCH_ACK scenarios (docs/SCENARIOS.md BAT-01).

import (
	"encoding/base64"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/codec"
)

// TestBAT01_BatchAckBitset: the body of the scenario (bits 0,2,…,10 as
// "VQU=") acks exactly those offsets in one fsync; the rest come back;
// decoding edge cases answer as RocketMQ does.
func TestBAT01_BatchAckBitset(t *testing.T) {
	h := startHarness(t, nil)
	h.createTopic("T", 1)
	c := h.dial()
	sendN(t, c, "T", 0, 12, "m", sendOpts{})
	_, ms := pop(t, c, popArgs{group: "G", topic: "T", queueID: 0, max: 12, invisible: 10000})
	require.Len(t, ms, 12)
	e := ms[0].handle
	require.EqualValues(t, 0, e.CkQueueOffset)
	body := `{"brokerName":"` + testBrokerName + `","acks":[{"c":"G","t":"T","r":"0","so":0,"q":0,"rq":0,"pt":` +
		itoa(e.PopTime) + `,"it":10000,"b":"VQU=","zz":"unknown keys are ignored"}]}`
	before := h.st.Writer.Stats().Fsyncs
	r := call(t, c, codec.NewRequest(codec.RequestBatchAckMessage, 0, nil, []byte(body)))
	require.Equal(t, codec.Success, r.Code, r.Remark)
	require.EqualValues(t, 1, h.st.Writer.Stats().Fsyncs-before, "one fsync for the whole request")
	got := redeliveries(t, h, "G", "T", 11*time.Second)
	require.ElementsMatch(t, []string{"m-1", "m-3", "m-5", "m-7", "m-9", "m-11"}, bodies(got))

	// Retry entries ("r":"2") address the V2 retry topic derived from t and c;
	// long member names are accepted.
	body = `{"brokerName":"x","acks":[{"consumerGroup":"G","topic":"T","retry":"2","startOffset":` +
		itoa(got[0].handle.CkQueueOffset) + `,"queueId":0,"reviveQueueId":0,"popTime":` + itoa(got[0].handle.PopTime) +
		`,"invisibleTime":` + itoa(got[0].handle.InvisibleTime) + `,"bitSet":"` + bitsB64(t, got) + `"}]}`
	r = call(t, c, codec.NewRequest(codec.RequestBatchAckMessage, 0, nil, []byte(body)))
	require.Equal(t, codec.Success, r.Code, r.Remark)
	require.Empty(t, bodies(redeliveries(t, h, "G", "T", 601*time.Second)))

	for _, tc := range []struct {
		name string
		body string
		code int32
	}{
		{"missing body", "", codec.NoMessage},
		{"empty acks", `{"acks":[]}`, codec.NoMessage},
		{"null acks", `{"brokerName":"b"}`, codec.NoMessage},
		{"not JSON", `{"acks":`, codec.MessageIllegal},
		{"bits beyond max offset", `{"acks":[{"c":"G","t":"T","r":"0","so":0,"q":0,"rq":0,"pt":1,"it":1,"b":"AAAAAAE="}]}`, codec.Success},
		{"unknown topic", `{"acks":[{"c":"G","t":"NOPE","r":"0","so":0,"q":0,"rq":0,"pt":1,"it":1,"b":"AQ=="}]}`, codec.Success},
		{"trailing zero bytes", `{"acks":[{"c":"G","t":"T","r":"0","so":0,"q":0,"rq":0,"pt":1,"it":1,"b":"AQAA"}]}`, codec.Success},
	} {
		r := call(t, c, codec.NewRequest(codec.RequestBatchAckMessage, 0, nil, []byte(tc.body)))
		require.Equal(t, tc.code, r.Code, "%s: %s", tc.name, r.Remark)
	}
}

// TestBAT01_JavaClientGrouping: a BATCH_ACK built the way the Java client
// groups handles (several queues, retry and normal) acks them all.
func TestBAT01_JavaClientGrouping(t *testing.T) {
	h := startHarness(t, nil)
	h.createTopic("T", 3)
	c := h.dial()
	for q := range int32(3) {
		sendN(t, c, "T", q, 4, "q"+itoa(int64(q)), sendOpts{})
	}
	all := popAll(t, c, popArgs{group: "G", topic: "T", queueID: -1, max: 32, invisible: 5000}, 12)
	require.Len(t, all, 12)
	r := call(t, c, batchAckReq(t, "G", "T", all[:6]))
	require.Equal(t, codec.Success, r.Code, r.Remark)
	back := redeliveries(t, h, "G", "T", 6*time.Second)
	require.Len(t, back, 6)
	r = call(t, c, batchAckReq(t, "G", "T", back))
	require.Equal(t, codec.Success, r.Code, r.Remark)
	require.Empty(t, bodies(redeliveries(t, h, "G", "T", 601*time.Second)))
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// bitsB64 returns the Base64 BitSet of ms relative to the first message's
// ckQueueOffset, as the Java client encodes it.
func bitsB64(t *testing.T, ms []popped) string {
	t.Helper()
	a := codec.BatchAck{StartOffset: ms[0].handle.CkQueueOffset}
	for _, m := range ms {
		require.NoError(t, a.SetAcked(m.handle.QueueOffset))
	}
	return base64.StdEncoding.EncodeToString(a.Bits)
}

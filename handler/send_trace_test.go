package handler_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/conf"
)

// Message trace (a client's enableMsgTrace) needs what a Java broker
// gives: SEND replies with TRACE_ON true (the producer's trace hook skips a
// send answered false) and MSG_REGION on every stored message (the
// consumer's trace dispatcher drops messages without one). Both follow
// --trace-on and --region-id.
func TestSendMessage_TraceSwitchAndRegion(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(*conf.Config)
		region string
		trace  bool
	}{
		{"defaults", nil, "DefaultRegion", true},
		{"flags", func(c *conf.Config) { c.RegionID, c.TraceOn = "eu-west", false }, "eu-west", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := startHarness(t, tc.mutate)
			h.createTopic("T", 1)
			c := h.dial()
			r := send(t, c, "T", 0, "traced", sendOpts{props: map[string]string{codec.PropertyTraceSwitch: "maybe"}})
			require.Equal(t, tc.trace, r.TraceOn, "TRACE_ON of the reply")
			require.Equal(t, tc.region, r.MsgRegion, "MSG_REGION of the reply")
			ms := storedMessages(t, h, "T", 0)
			require.Len(t, ms, 1)
			m := ms[0]
			region, _ := m.Property(codec.PropertyMsgRegion)
			trace, _ := m.Property(codec.PropertyTraceSwitch)
			require.Equal(t, tc.region, region, "stored MSG_REGION")
			require.Equal(t, map[bool]string{true: "true", false: "false"}[tc.trace], trace, "stored TRACE_ON replaces the producer's")
		})
	}
}

// A batch's entries keep only their own properties: Apache RocketMQ 5.5
// stopped appending the batch's CLUSTER, MSG_REGION and TRACE_ON to each
// entry (MessageExtEncoder.encodeBatch, apache/rocketmq #9417).
func TestSendBatch_EntriesKeepTheirProperties(t *testing.T) {
	h := startHarness(t, nil)
	h.createTopic("T", 1)
	c := h.dial()
	sendBatch(t, c, "T", 0, "b", 0, 3, "")
	ms := storedMessages(t, h, "T", 0)
	require.Len(t, ms, 3)
	for i, m := range ms {
		for _, k := range []string{codec.PropertyCluster, codec.PropertyMsgRegion, codec.PropertyTraceSwitch} {
			v, ok := m.Property(k)
			require.False(t, ok, "entry %d has %s=%q", i, k, v)
		}
	}
}

// storedMessages decodes the first messages (up to 100) stored in
// (topic, queueID), read straight from the store; at least one must be
// there.
func storedMessages(t *testing.T, h *harness, topic string, queueID int32) []codec.MessageExt {
	t.Helper()
	recs, _, err := h.b().Store.ReadMessages(topic, queueID, 0, 100, 1<<20)
	require.NoError(t, err)
	require.NotEmpty(t, recs, "nothing stored in %s/%d", topic, queueID)
	out := make([]codec.MessageExt, len(recs))
	for i, rec := range recs {
		out[i], _, err = codec.DecodeMessage(rec)
		require.NoError(t, err)
	}
	return out
}

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
			recs, _, err := h.b().Store.ReadMessages("T", 0, 0, 10, 1<<20)
			require.NoError(t, err)
			require.Len(t, recs, 1)
			m, _, err := codec.DecodeMessage(recs[0])
			require.NoError(t, err)
			region, _ := m.Property(codec.PropertyMsgRegion)
			trace, _ := m.Property(codec.PropertyTraceSwitch)
			require.Equal(t, tc.region, region, "stored MSG_REGION")
			require.Equal(t, map[bool]string{true: "true", false: "false"}[tc.trace], trace, "stored TRACE_ON replaces the producer's")
		})
	}
}

// A batch's entries get CLUSTER, MSG_REGION and TRACE_ON as a single
// message does (a Java broker appends the batch's properties to each
// entry).
func TestSendBatch_EntriesStamped(t *testing.T) {
	h := startHarness(t, nil)
	h.createTopic("T", 1)
	c := h.dial()
	sendBatch(t, c, "T", 0, "b", 0, 3, "")
	recs, _, err := h.b().Store.ReadMessages("T", 0, 0, 10, 1<<20)
	require.NoError(t, err)
	require.Len(t, recs, 3)
	for i, rec := range recs {
		m, _, err := codec.DecodeMessage(rec)
		require.NoError(t, err)
		for k, want := range map[string]string{codec.PropertyCluster: "ClusterPop", codec.PropertyMsgRegion: "DefaultRegion", codec.PropertyTraceSwitch: "true"} {
			got, _ := m.Property(k)
			require.Equal(t, want, got, "entry %d %s", i, k)
		}
	}
}

package handler_test

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/codec"
)

// gauge returns the value of the one series of name whose labels include
// want, and whether there is one.
func gauge(t *testing.T, g prometheus.Gatherer, name string, want map[string]string) (float64, bool) {
	t.Helper()
	mfs, err := g.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	next:
		for _, m := range mf.GetMetric() {
			got := map[string]string{}
			for _, lp := range m.GetLabel() {
				got[lp.GetName()] = lp.GetValue()
			}
			for k, v := range want {
				if got[k] != v {
					continue next
				}
			}
			return valueOf(m), true
		}
	}
	return 0, false
}

func valueOf(m *dto.Metric) float64 {
	if m.GetGauge() != nil {
		return m.GetGauge().GetValue()
	}
	return m.GetCounter().GetValue()
}

// The broker gauges follow Java 5.5: the group count is the subscription
// group table, the connection version label is the lower-case MQVersion
// name, and the consumer ready/inflight/lag gauges match what
// GET_CONSUME_STATS and the in-flight checkpoints say.
func TestBrokerGaugesAsJava(t *testing.T) {
	st := d2Start(t, popConfig(t.TempDir())) // StartStack registers the table and lag collectors
	c := dialAddr(t, st.BrokerAddr())
	for i := range 5 {
		send(t, c, "TL", 0, "m"+string(rune('0'+i)), sendOpts{})
	}
	_, ms := pop(t, c, popArgs{group: "GL", topic: "TL", queueID: 0, max: 2, invisible: 60000})
	require.Len(t, ms, 2)
	require.Equal(t, codec.Success, ack(t, c, "GL", "TL", ms[0]))

	hb := codec.NewRequest(codec.RequestHeartBeat, 0, nil, heartbeatBody("10.0.0.9@1#1", "GH9"))
	hb.Version = 513 // MQVersion.Version.V5_5_0
	require.Equal(t, codec.Success, d2Invoke(t, c, hb).Code)

	lbl := map[string]string{"topic": "TL", "consumer_group": "GL", "is_retry": "false", "is_system": "false"}
	eventually(t, func() bool { v, _ := gauge(t, st.Registry, "rocketmq_consumer_inflight_messages", lbl); return v == 1 },
		"one message popped and not acked")
	for name, want := range map[string]float64{"rocketmq_consumer_ready_messages": 3,
		"rocketmq_consumer_inflight_messages": 1, "rocketmq_consumer_lag_messages": 4} {
		v, ok := gauge(t, st.Registry, name, lbl)
		assert.True(t, ok, name)
		assert.Equal(t, want, v, name)
	}
	v, _ := gauge(t, st.Registry, "popshim_consumer_metrics_skipped", nil)
	assert.Zero(t, v)

	resp := d2Call(t, c, codec.RequestGetAllSubscriptionGroupConfig, nil, nil)
	require.Equal(t, codec.Success, resp.Code, resp.Remark)
	w, err := codec.DecodeSubscriptionGroupWrapper(resp.Body)
	require.NoError(t, err)
	require.Contains(t, w.SubscriptionGroupTable, "GL")
	v, ok := gauge(t, st.Registry, "rocketmq_consumer_group_number", nil)
	require.True(t, ok)
	assert.Equal(t, float64(len(w.SubscriptionGroupTable)), v, "the subscription group table, not the groups online")

	v, ok = gauge(t, st.Registry, "rocketmq_consumer_connections", map[string]string{"consumer_group": "GH9", "version": "v5_5_0"})
	assert.True(t, ok, "version label is the lower-case MQVersion name")
	assert.Equal(t, 1.0, v)
}

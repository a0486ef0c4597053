package bench

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/conf"
	"github.com/popshim/popshim/popstore"
	"github.com/popshim/popshim/stack/stacktest"
)

// TestParseTimers reads the timer series with popshim's constant labels and
// derives the lateness percentiles of a span from two scrapes.
func TestParseTimers(t *testing.T) {
	const l = `{cluster="C",node_id="n",node_type="broker"`
	expo := func(deq, le5, le100, le1000, count, sum string) string {
		return "# TYPE rocketmq_timer_dequeue_total counter\nrocketmq_timer_dequeue_total" + l + "} " + deq + "\n" +
			"# TYPE popshim_timer_lateness_milliseconds histogram\n" +
			"popshim_timer_lateness_milliseconds_bucket" + l + `,le="5"} ` + le5 + "\n" +
			"popshim_timer_lateness_milliseconds_bucket" + l + `,le="100"} ` + le100 + "\n" +
			"popshim_timer_lateness_milliseconds_bucket" + l + `,le="1000"} ` + le1000 + "\n" +
			"popshim_timer_lateness_milliseconds_bucket" + l + `,le="+Inf"} ` + count + "\n" +
			"popshim_timer_lateness_milliseconds_sum" + l + "} " + sum + "\n" +
			"popshim_timer_lateness_milliseconds_count" + l + "} " + count + "\n"
	}
	a, err := parseTimers(strings.NewReader(expo("10", "10", "10", "10", "10", "20")))
	if err != nil {
		t.Fatal(err)
	}
	b, err := parseTimers(strings.NewReader(expo("110", "10", "70", "110", "110", "20020")))
	if err != nil {
		t.Fatal(err)
	}
	if b.dequeued-a.dequeued != 100 {
		t.Fatalf("dequeued delta %v", b.dequeued-a.dequeued)
	}
	n := b.latCount - a.latCount
	if p50, p99 := bucketQuantile(a.buckets, b.buckets, n, 0.5), bucketQuantile(a.buckets, b.buckets, n, 0.99); p50 != 100 || p99 != 1000 {
		t.Fatalf("p50 %v p99 %v, want 100 and 1000", p50, p99)
	}
	if _, err := parseTimers(strings.NewReader("# TYPE x counter\nx 1\n")); err == nil {
		t.Fatal("no error without the timer series")
	}
}

// TestRunTimerAckLoopback runs timer mode with a concurrent ACK stream
// against an in-process popshim: every timer is delivered, every ACK
// succeeds, and each ACK is counted once, during or outside the drain.
func TestRunTimerAckLoopback(t *testing.T) {
	st := startPopshim(t, "group")
	var out bytes.Buffer
	o := Options{Addr: st.BrokerAddr(), Messages: 200, Conns: 2, Inflight: 8, Duration: 30 * time.Second,
		Rate: 400, MetricsURL: "http://" + st.MetricsAddr() + "/metrics", Out: &out, CreateTopic: true}
	r, err := RunTimer(context.Background(), o)
	require.NoError(t, err, out.String())
	require.Equal(t, 200, r.Timer.Timers)
	require.GreaterOrEqual(t, r.Timer.Delivered, 200)
	series := map[string]SeriesSummary{}
	for _, s := range r.Series {
		require.Zero(t, s.Errors+s.Busy, "%s: %v", s.Name, s.Codes)
		series[s.Name] = s
	}
	require.Greater(t, series["ack_outside_drain"].OK, int64(1000), "the stream ran before the due time and after the drain")
	require.Equal(t, series["ack"].OK, series["ack_during_drain"].OK+series["ack_outside_drain"].OK)
	require.Contains(t, out.String(), "ack_outside_drain")
}

// TestRunTimerFillLoopback: with --timer-spread the timer mode stores the
// timers with due times spread over the span (first at the spread start,
// none due during the run) and reports the fill; the broker holds them
// all pending.
func TestRunTimerFillLoopback(t *testing.T) {
	st := stacktest.StartEdited(t, func(c *conf.Config) { c.TimerMaxDelaySec = 365 * 24 * 3600 })
	var out bytes.Buffer
	o := Options{Addr: st.BrokerAddr(), Messages: 300, Conns: 2, Inflight: 8, Duration: 30 * time.Second,
		Out: &out, CreateTopic: true, Queues: 2, BodySize: 64, TimerSpread: 30 * 24 * time.Hour, TimerSpreadStart: time.Hour}
	r, err := RunTimer(context.Background(), o)
	require.NoError(t, err, out.String())
	require.Equal(t, 300, r.Timer.Timers)
	require.Positive(t, r.Timer.FillPerSecond)
	require.EqualValues(t, 300, st.Store.PendingTimers())
	next, ok, err := st.Store.NextTimerDue(popstore.TimerKey{})
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, r.Timer.FirstDueMs, next, "the first timer is due at the spread start")
	last, err := st.Store.ScanTimers(popstore.TimerKey{}, r.Timer.FirstDueMs+o.TimerSpread.Milliseconds(), 1000, 1<<30)
	require.NoError(t, err)
	require.Len(t, last, 300)
	require.Greater(t, last[299].Key.DueMillis-next, (29 * 24 * time.Hour).Milliseconds(), "spread over the span")
	require.Contains(t, out.String(), "timer fill: 300 timers")
}

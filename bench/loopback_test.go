package bench

import (
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/conf"
	"github.com/popshim/popshim/stack"
	"github.com/popshim/popshim/stack/stacktest"
)

// startPopshim runs an in-process popshim (stacktest.Start) in the given
// write mode.
func startPopshim(t *testing.T, mode string) *stack.Stack {
	t.Helper()
	return stacktest.StartEdited(t, func(c *conf.Config) { c.PopWriteMode = mode })
}

// countCheckpoints returns the checkpoints (in-flight deliveries) stored.
func countCheckpoints(t *testing.T, st *stack.Stack) int {
	t.Helper()
	cks, err := st.Store.ScanCheckpoints(0, math.MaxInt64, 1<<20)
	require.NoError(t, err)
	return len(cks)
}

// TestRunAckLoopback runs the whole ACK/CHANGE workload against popshim in
// both write modes until the prepared handles run out: every ACK must
// succeed exactly once, the CHANGE bursts must succeed, and afterwards only
// the CHANGE pool's checkpoints may remain in the store.
func TestRunAckLoopback(t *testing.T) {
	for _, mode := range []string{"group", "sync"} {
		t.Run(mode, func(t *testing.T) {
			st := startPopshim(t, mode)
			dir := t.TempDir()
			var out bytes.Buffer
			o := Options{Addr: st.BrokerAddr(), Messages: 3000, Conns: 2, Inflight: 8, Duration: 30 * time.Second,
				ChangeBurst: 50, ChangePeriod: 20 * time.Millisecond, Interval: 200 * time.Millisecond, Rate: 3000,
				MetricsURL: "http://" + st.MetricsAddr() + "/metrics", Label: "popshim-" + mode,
				JSON: filepath.Join(dir, "r.json"), Plot: filepath.Join(dir, "r.svg"), Out: &out, CreateTopic: true}
			r, err := RunAck(context.Background(), o)
			require.NoError(t, err, out.String())
			require.True(t, r.Exhausted, "the run ends when the 2900 ACK handles are used up")
			require.Equal(t, 3000, r.Prepare.Produced)
			require.Equal(t, 3000, r.Prepare.Receipts)

			ack, _ := r.SeriesByName("ack")
			require.EqualValues(t, 2900, ack.OK, "each ACK handle acked once: %+v", ack)
			require.Zero(t, ack.Busy+ack.Errors)
			during, _ := r.SeriesByName("ack_during_burst")
			outside, _ := r.SeriesByName("ack_outside_burst")
			require.Equal(t, ack.OK, during.OK+outside.OK)
			change, _ := r.SeriesByName("change")
			require.Positive(t, change.OK)
			require.Zero(t, change.Busy+change.Errors)
			require.Positive(t, r.Bursts)

			require.NotNil(t, r.Server)
			require.Positive(t, r.Server.Fsyncs)
			require.Positive(t, r.Server.FsyncsPer1000Acks)
			require.GreaterOrEqual(t, r.Server.Mutations, float64(ack.OK+change.OK))
			require.NotNil(t, r.ServerCPU, "process_cpu_seconds_total from /metrics")
			require.Equal(t, "metrics", r.ServerCPU.Source)

			require.Equal(t, 100, countCheckpoints(t, st), "only the CHANGE pool (2×burst) is still in flight")
			back, err := ReadReport(o.JSON)
			require.NoError(t, err)
			require.Equal(t, ack.OK, back.Series[0].OK)
			fi, err := os.Stat(o.Plot)
			require.NoError(t, err)
			require.Positive(t, fi.Size())
		})
	}
}

// TestRunPopAndProduceLoopback: pop mode pops and acks every produced
// message; produce mode stores what it reports.
func TestRunPopAndProduceLoopback(t *testing.T) {
	st := startPopshim(t, "group")
	r, err := RunPop(context.Background(), Options{Addr: st.BrokerAddr(), Messages: 1000, Conns: 2, Duration: 30 * time.Second, CreateTopic: true})
	require.NoError(t, err)
	require.True(t, r.Exhausted)
	ack, _ := r.SeriesByName("ack")
	require.EqualValues(t, 1000, ack.OK)
	require.Zero(t, ack.Errors+ack.Busy)
	require.Zero(t, countCheckpoints(t, st))

	o, err := RunPop(context.Background(), Options{Addr: st.BrokerAddr(), Messages: 1000, Conns: 2, Duration: 30 * time.Second,
		CreateTopic: true, Topic: "orderly_topic", Group: "orderly_group", Orderly: true})
	require.NoError(t, err)
	require.True(t, o.Exhausted, "orderly pop mode returned every message")
	ack, _ = o.SeriesByName("ack")
	require.EqualValues(t, 1000, ack.OK, "every orderly receipt acked")
	require.Zero(t, ack.Errors+ack.Busy)

	p, err := RunProduce(context.Background(), Options{Addr: st.BrokerAddr(), Conns: 2, Inflight: 4, Duration: 300 * time.Millisecond,
		CreateTopic: true, Topic: "produce_topic", Queues: 2})
	require.NoError(t, err)
	send, _ := p.SeriesByName("send")
	require.Positive(t, send.OK)
	require.Zero(t, send.Errors+send.Busy)
	stored := st.Store.MaxOffset("produce_topic", 0) + st.Store.MaxOffset("produce_topic", 1)
	require.Equal(t, send.OK, stored)
}

// TestRunTxnLoopback: the txn mode commits every half it sends (nothing
// refused, nothing left pending), the topic holds exactly the committed
// messages, and the PULL readers saw committed messages.
func TestRunTxnLoopback(t *testing.T) {
	st := startPopshim(t, "group")
	r, err := RunTxn(context.Background(), Options{Addr: st.BrokerAddr(), Messages: 500, Conns: 2, Inflight: 4,
		Duration: 30 * time.Second, CreateTopic: true, Topic: "txn_topic", Queues: 2})
	require.NoError(t, err)
	require.True(t, r.Exhausted)
	half, _ := r.SeriesByName("half")
	commit, _ := r.SeriesByName("commit")
	visible, _ := r.SeriesByName("visible")
	require.Zero(t, half.Errors+half.Busy+commit.Errors+commit.Busy, "half codes %v, commit codes %v", half.Codes, commit.Codes)
	require.EqualValues(t, 500, half.OK)
	require.EqualValues(t, 500, commit.OK)
	require.Positive(t, visible.OK)
	require.LessOrEqual(t, visible.OK, int64(500))
	require.Zero(t, st.Store.PendingHalves())
	require.EqualValues(t, 500, st.Store.MaxOffset("txn_topic", 0)+st.Store.MaxOffset("txn_topic", 1))
}

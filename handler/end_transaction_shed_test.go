package handler_test

// END_TRANSACTION commits and --wait-time-mills-in-transaction-queue over
// real TCP: while the writer is held, a SEND queued past
// --wait-time-mills-in-send-queue is shed, and a oneway commit queued beside
// it is still written unless it also waited past its own limit (Java:
// BrokerFastFailure cleans the end-transaction queue after
// waitTimeMillsInTransactionQueue, 3 s, the send queue after 200 ms).

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/batch"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/conf"
)

func TestEndTransaction_CommitOutlivesSendShedding(t *testing.T) {
	const sendWait = 50 * time.Millisecond
	for _, tc := range []struct {
		name      string
		txnWaitMs int
		committed bool
	}{
		{"default 3 s: written", 3000, true},
		{"100 ms: dropped, the half waits for its check", 100, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gate := newGateHook(t)
			h := startHarnessHooked(t, gate.hook, func(c *conf.Config) {
				c.WaitTimeMillsInSendQueue = int(sendWait.Milliseconds())
				c.WaitTimeMillsInTransactionQueue = tc.txnWaitMs
			})
			h.createTopic("T", 1)
			c := h.dial()
			r := storeHalf(t, h, "T", "PG", "txn")
			require.EqualValues(t, 1, h.b().Store.PendingHalves())

			held := holdWriterOnSend(t, gate, c, "T")
			shed := invokeAsync(c, sendReq("T", 0, []byte("shed"), sendOpts{}))
			eventually(t, func() bool { return laneDepth(t, h, batch.LaneProduce.String()) == 1 }, "SEND queued")
			require.NoError(t, c.InvokeOneway(endTxn("PG", r, codec.SysFlagTransactionCommit, true)))
			eventually(t, func() bool { return laneDepth(t, h, batch.LaneProduce.String()) == 2 }, "commit queued")
			// Both wait past the send queue's limit and past 100 ms (a
			// precondition, not a timing assertion: any longer wait gives
			// the same outcome below 3 s).
			time.Sleep(300 * time.Millisecond)
			gate.open()

			require.Equal(t, codec.Success, await(t, held, "held SEND").Code)
			require.Equal(t, codec.SystemBusy, await(t, shed, "shed SEND").Code)
			if tc.committed {
				eventually(t, func() bool { return h.b().Store.PendingHalves() == 0 }, "commit not applied")
				require.EqualValues(t, 2, h.b().Store.MaxOffset("T", 0), "the held SEND and the committed message")
				return
			}
			eventually(t, func() bool { return h.b().Writer.Stats().Rejects[batch.LaneProduce] == 2 }, "commit not shed")
			eventually(t, func() bool {
				return metricValue(t, h.b().Transactions.Metrics().Refused.WithLabelValues("not_written")) == 1
			}, "the dropped commit is counted")
			require.EqualValues(t, 1, h.b().Store.PendingHalves(), "the half waits for its check")
			require.EqualValues(t, 1, h.b().Store.MaxOffset("T", 0), "only the held SEND")
		})
	}
}

// With --queue-max-bytes reached by a large SEND (a later SEND answers
// SYSTEM_BUSY at once), a oneway commit is still queued and written, where
// it used to be refused unseen.
func TestEndTransaction_CommitPastQueueByteBound(t *testing.T) {
	gate := newGateHook(t)
	h := startHarnessHooked(t, gate.hook, func(c *conf.Config) { c.QueueMaxBytes = 1 << 20 })
	h.createTopic("T", 1)
	h.createTopic("Big", 1)
	c := h.dial()
	r := storeHalf(t, h, "T", "PG", "txn")

	held := holdWriterOnSend(t, gate, c, "Big")
	big := invokeAsync(h.dial(), sendReq("Big", 0, make([]byte, 1100<<10), sendOpts{}))
	eventually(t, func() bool { return laneDepth(t, h, batch.LaneProduce.String()) == 1 }, "large SEND queued")
	busy := call(t, c, sendReq("Big", 0, []byte("small"), sendOpts{}))
	require.Equal(t, codec.SystemBusy, busy.Code, "past --queue-max-bytes: %s", busy.Remark)
	require.NoError(t, c.InvokeOneway(endTxn("PG", r, codec.SysFlagTransactionCommit, true)))
	eventually(t, func() bool { return laneDepth(t, h, batch.LaneProduce.String()) == 2 }, "commit queued past the byte bound")
	gate.open()

	require.Equal(t, codec.Success, await(t, held, "held SEND").Code)
	require.Equal(t, codec.Success, await(t, big, "large SEND").Code)
	eventually(t, func() bool { return h.b().Store.PendingHalves() == 0 }, "commit not applied")
	require.EqualValues(t, 1, h.b().Store.MaxOffset("T", 0))
	require.Zero(t, metricValue(t, h.b().Transactions.Metrics().Refused.WithLabelValues("not_written")))
}

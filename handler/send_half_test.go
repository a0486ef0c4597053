package handler_test

// SEND_MESSAGE_V2 (310) of a half message, as TransactionMQProducer sends
// it, then END_TRANSACTION (37) built from the reply as
// DefaultMQProducerImpl.endTransaction builds it.

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/broker"
	"github.com/popshim/popshim/codec"
)

// TestSendMessage_HalfThenCommit: the reply of a transactional SEND
// carries transactionId (the UNIQ_KEY), the real queue and the half's
// offsets; nothing is visible until the producer's oneway commit, after
// which POP returns the message once; a rolled-back half never shows.
// A normal SEND's reply carries transactionId too, as Java's does.
func TestSendMessage_HalfThenCommit(t *testing.T) {
	h := startHarness(t, nil)
	h.createTopic("T", 2)
	c := h.dial()
	half := func(body, uniq string) codec.SendMessageResponseHeader {
		return send(t, c, "T", 1, body, sendOpts{sysFlag: codec.SysFlagTransactionPrepared, props: map[string]string{
			codec.PropertyTransactionPrepared: "true", codec.PropertyProducerGroup: "PG",
			codec.PropertyUniqClientMessageIDKeyIdx: uniq}})
	}
	r := half("committed", "UNIQ-COMMIT")
	require.Equal(t, "UNIQ-COMMIT", r.TransactionID)
	require.EqualValues(t, 1, r.QueueID)
	_, phys, err := codec.DecodeOffsetMsgID(r.MsgID)
	require.NoError(t, err)
	r2 := half("rolled-back", "UNIQ-ROLLBACK")
	require.Equal(t, r.QueueOffset+1, r2.QueueOffset)
	_, phys2, err := codec.DecodeOffsetMsgID(r2.MsgID)
	require.NoError(t, err)
	require.EqualValues(t, 2, h.b().Store.PendingHalves())
	require.Zero(t, h.b().Store.MaxOffset("T", 1))

	require.NoError(t, c.InvokeOneway(endTxn("PG", broker.HalfResult{QueueOffset: r2.QueueOffset, PhysicalOffset: phys2,
		TransactionID: r2.TransactionID}, codec.SysFlagTransactionRollback, true)))
	require.NoError(t, c.InvokeOneway(endTxn("PG", broker.HalfResult{QueueOffset: r.QueueOffset, PhysicalOffset: phys,
		TransactionID: r.TransactionID}, codec.SysFlagTransactionCommit, true)))
	eventually(t, func() bool { return h.b().Store.PendingHalves() == 0 }, "decisions not applied")
	_, ms := pop(t, h.dial(), popArgs{group: "G", topic: "T", queueID: -1, max: 32, invisible: 60_000})
	require.Len(t, ms, 1)
	require.Equal(t, "committed", ms[0].body())
	uniq, _ := ms[0].m.Property(codec.PropertyUniqClientMessageIDKeyIdx)
	require.Equal(t, "UNIQ-COMMIT", uniq)

	n := send(t, c, "T", 0, "plain", sendOpts{props: map[string]string{codec.PropertyUniqClientMessageIDKeyIdx: "UNIQ-PLAIN"}})
	require.Equal(t, "UNIQ-PLAIN", n.TransactionID)
}

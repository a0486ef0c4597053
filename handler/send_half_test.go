package handler_test

// SEND_MESSAGE_V2 (310) of a half message, as TransactionMQProducer sends
// it, then END_TRANSACTION (37) built from the reply as
// DefaultMQProducerImpl.endTransaction builds it.

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/broker"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/handler"
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

	// mqadmin queryMsgById on the reply's msgId finds the half, as stored
	// in Java's commit log.
	viewIn := func(phys int64, topic string) *codec.Command {
		req := codec.NewRequest(codec.RequestViewMessageByID, 0, nil, nil)
		codec.ViewMessageRequestHeader{Offset: phys, Topic: topic}.Encode(req)
		return call(t, c, req)
	}
	view := func(phys int64) *codec.Command { return viewIn(phys, "") }
	require.Equal(t, codec.Success, viewIn(phys, "T").Code)
	require.Equal(t, codec.Success, viewIn(phys, "RMQ_SYS_TRANS_HALF_TOPIC").Code)
	require.Equal(t, codec.SystemError, viewIn(phys, "Other").Code)
	resp := view(phys)
	require.Equal(t, codec.Success, resp.Code, resp.Remark)
	hm, _, err := codec.DecodeMessage(resp.Body)
	require.NoError(t, err)
	require.Equal(t, "RMQ_SYS_TRANS_HALF_TOPIC", hm.Topic)
	require.Equal(t, r.QueueOffset, hm.QueueOffset)
	require.Equal(t, phys, hm.PhysicalOffset)
	realTopic, _ := hm.Property(codec.PropertyRealTopic)
	require.Equal(t, "T", realTopic)
	require.Equal(t, "committed", string(hm.Body))

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

	// Decided halves are gone: the offset finds nothing any more.
	require.Equal(t, codec.SystemError, view(phys).Code)
	require.Equal(t, codec.SystemError, view(phys2).Code)

	n := send(t, c, "T", 0, "plain", sendOpts{props: map[string]string{codec.PropertyUniqClientMessageIDKeyIdx: "UNIQ-PLAIN"}})
	require.Equal(t, "UNIQ-PLAIN", n.TransactionID)

	// statsAll and exportMetrics read TOPIC_PUT_NUMS: the halves under the
	// half topic, the committed message under its topic (as Java's
	// BrokerStatsManager counts them).
	putNums := func(topic string) uint64 {
		req := codec.NewRequest(handler.RequestViewBrokerStatsData, 0, nil, nil)
		codec.ViewBrokerStatsDataRequestHeader{StatsName: handler.StatsTopicPutNums, StatsKey: topic}.Encode(req)
		resp := call(t, c, req)
		var d handler.BrokerStatsData
		if resp.Code != codec.Success || jsonUnmarshal(resp.Body, &d) != nil {
			return 0
		}
		return d.StatsMinute.Sum
	}
	eventually(t, func() bool { return putNums("RMQ_SYS_TRANS_HALF_TOPIC") == 2 && putNums("T") == 2 },
		"TOPIC_PUT_NUMS half topic %d, T %d", putNums("RMQ_SYS_TRANS_HALF_TOPIC"), putNums("T"))
}

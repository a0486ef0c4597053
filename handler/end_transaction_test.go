package handler_test

// END_TRANSACTION (37) and CHECK_TRANSACTION_STATE (39) over real TCP. The
// half is stored through the core's entry point (broker.PrepareHalf;
// send_half_test.go stores them with SEND); everything after it goes over
// the wire as a producer's would: HEART_BEAT naming the producer group,
// the broker's oneway check, the producer's END_TRANSACTION.

import (
	"context"
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/popshim/popshim/broker"
	"github.com/popshim/popshim/client"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/conf"
)

// storeHalf stores a half of body for topic/queue 0 and producer group
// group through the core and returns the SEND reply's content.
func storeHalf(t *testing.T, h *harness, topic, group, body string) broker.HalfResult {
	t.Helper()
	props := ""
	for _, kv := range [][2]string{{codec.PropertyTransactionPrepared, "true"}, {codec.PropertyProducerGroup, group},
		{codec.PropertyUniqClientMessageIDKeyIdx, "UNIQ-" + body}} {
		props, _ = codec.SetProperty(props, kv[0], kv[1])
	}
	now := h.b().Now()
	m := &codec.MessageExt{Message: codec.Message{Topic: topic, Body: []byte(body), Properties: props},
		SysFlag: codec.SysFlagTransactionPrepared, BornTimestamp: now, StoreTimestamp: now,
		BornHost: netip.MustParseAddrPort("127.0.0.1:1"), StoreHost: h.b().StoreHost()}
	type res struct {
		r   broker.HalfResult
		err error
	}
	ch := make(chan res, 1)
	h.b().PrepareHalf(broker.HalfRequest{Message: m, ProducerGroup: group}, func(r broker.HalfResult, err error) { ch <- res{r, err} })
	select {
	case x := <-ch:
		require.NoError(t, x.err)
		return x.r
	case <-time.After(waitFor):
		t.Fatal("half not stored")
	}
	return broker.HalfResult{}
}

// endTxn builds END_TRANSACTION as DefaultMQProducerImpl.endTransaction
// does for a SEND reply r (oneway when oneway).
func endTxn(group string, r broker.HalfResult, decision int32, oneway bool) *codec.Command {
	req := codec.NewRequest(codec.RequestEndTransaction, 0, nil, nil)
	codec.EndTransactionRequestHeader{Topic: "T", ProducerGroup: group, TranStateTableOffset: r.QueueOffset,
		CommitLogOffset: r.PhysicalOffset, CommitOrRollback: decision, MsgID: r.TransactionID,
		TransactionID: r.TransactionID}.Encode(req)
	if oneway {
		req.Flag |= codec.FlagOneway
	}
	return req
}

// TestEndTransaction_CheckBackAndCommit: a forged offset is refused with
// Java's remark; after --transaction-timeout the broker sends
// CHECK_TRANSACTION_STATE to the producer's connection; the producer's
// oneway commit from the check makes the message visible to POP once; a
// second commit is refused.
func TestEndTransaction_CheckBackAndCommit(t *testing.T) {
	h := startHarness(t, func(c *conf.Config) { c.TransactionCheckInterval = 5 * time.Millisecond })
	h.createTopic("T", 1)
	checks := make(chan *codec.Command, 16)
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	prod, err := client.DialContext(ctx, h.addr(), client.Options{
		OnRequest: func(req *codec.Command) *codec.Command { checks <- req; return nil },
	})
	require.NoError(t, err)
	t.Cleanup(func() { _ = prod.Close() })
	hb := beat(t, prod, codec.HeartbeatData{ClientID: "127.0.0.1@txn", ProducerDataSet: []codec.ProducerData{{GroupName: "PG"}}})
	require.Equal(t, codec.Success, hb.Code, hb.Remark)

	r := storeHalf(t, h, "T", "PG", "txn-body")
	forged := r
	forged.QueueOffset += 5
	resp := call(t, prod, endTxn("PG", forged, codec.SysFlagTransactionCommit, false))
	require.Equal(t, codec.SystemError, resp.Code)
	require.Equal(t, "The transaction state table offset wrong", resp.Remark)
	resp = call(t, prod, codec.NewRequest(codec.RequestEndTransaction, 0, map[string]string{"commitOrRollback": "8"}, nil))
	require.Equal(t, codec.SystemError, resp.Code)
	require.Equal(t, "the custom field <producerGroup> is null", resp.Remark)

	h.advance(6100 * time.Millisecond)
	var chk *codec.Command
	select {
	case chk = <-checks:
	case <-time.After(waitFor):
		t.Fatal("no CHECK_TRANSACTION_STATE reached the producer")
	}
	require.Equal(t, codec.RequestCheckTransactionState, chk.Code)
	require.True(t, chk.IsOneway())
	hdr, err := codec.DecodeCheckTransactionStateRequestHeader(chk.ExtFields)
	require.NoError(t, err)
	require.Equal(t, codec.CheckTransactionStateRequestHeader{Topic: "RMQ_SYS_TRANS_HALF_TOPIC",
		TranStateTableOffset: r.QueueOffset, CommitLogOffset: r.PhysicalOffset, MsgID: "UNIQ-txn-body",
		TransactionID: "UNIQ-txn-body", OffsetMsgID: r.OffsetMsgID, BrokerName: testBrokerName}, hdr)
	m, _, err := codec.DecodeMessage(chk.Body)
	require.NoError(t, err)
	require.Equal(t, "T", m.Topic)
	require.Equal(t, "txn-body", string(m.Body))
	group, _ := m.Property(codec.PropertyProducerGroup)
	require.Equal(t, "PG", group)

	// The producer answers as ClientRemotingProcessor + processTransactionState.
	answer := codec.NewRequest(codec.RequestEndTransaction, 0, nil, nil)
	codec.EndTransactionRequestHeader{Topic: hdr.Topic, ProducerGroup: group, TranStateTableOffset: hdr.TranStateTableOffset,
		CommitLogOffset: hdr.CommitLogOffset, CommitOrRollback: codec.SysFlagTransactionCommit, FromTransactionCheck: true,
		MsgID: hdr.MsgID, TransactionID: hdr.TransactionID, BrokerName: hdr.BrokerName}.Encode(answer)
	answer.Flag |= codec.FlagOneway
	require.NoError(t, prod.InvokeOneway(answer))
	eventually(t, func() bool { return h.b().Store.MaxOffset("T", 0) == 1 }, "commit from the check not applied")

	consumer := h.dial()
	_, ms := pop(t, consumer, popArgs{group: "G", topic: "T", queueID: -1, max: 32, invisible: 60_000})
	require.Len(t, ms, 1)
	require.Equal(t, "txn-body", ms[0].body())
	require.Equal(t, codec.SysFlagTransactionCommit, codec.TransactionType(ms[0].m.SysFlag))

	resp = call(t, prod, endTxn("PG", r, codec.SysFlagTransactionCommit, false))
	require.Equal(t, codec.SystemError, resp.Code)
	require.Equal(t, "Find prepared transaction message failed", resp.Remark)
	require.EqualValues(t, 1, h.b().Store.MaxOffset("T", 0))
}

// TestEndTransaction_RollbackOneway: the producer's own oneway rollback
// removes the half and nothing reaches the topic; a second decision is
// refused.
func TestEndTransaction_RollbackOneway(t *testing.T) {
	h := startHarness(t, nil)
	h.createTopic("T", 1)
	c := h.dial()
	r := storeHalf(t, h, "T", "PG", "gone")
	require.EqualValues(t, 1, h.b().Store.PendingHalves())
	require.NoError(t, c.InvokeOneway(endTxn("PG", r, codec.SysFlagTransactionRollback, true)))
	eventually(t, func() bool { return h.b().Store.PendingHalves() == 0 }, "rollback not applied")
	require.Zero(t, h.b().Store.MaxOffset("T", 0))
	resp := call(t, c, endTxn("PG", r, codec.SysFlagTransactionRollback, false))
	require.Equal(t, codec.SystemError, resp.Code)
	require.Equal(t, "Find prepared transaction message failed", resp.Remark)
}

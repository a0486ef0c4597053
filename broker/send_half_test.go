package broker_test

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/popshim/popshim/broker"
	"github.com/popshim/popshim/broker/brokertest"
	"github.com/popshim/popshim/broker/transaction"
	"github.com/popshim/popshim/codec"
)

// halfSendReq is the SEND a TransactionMQProducer makes: TRAN_MSG and
// PGROUP properties, the prepared sysFlag.
func halfSendReq(t *testing.T, topic, body string, extra ...string) broker.SendRequest {
	kv := append([]string{codec.PropertyTransactionPrepared, "true", codec.PropertyProducerGroup, "PG"}, extra...)
	r := sendReq(topic, 0, body, props(t, kv...))
	r.SysFlag = codec.SysFlagTransactionPrepared
	return r
}

// endOf is the END_TRANSACTION a producer sends for a half SEND's result:
// commitLogOffset decoded from the reply's msgId, as the Java client does.
func endOf(t *testing.T, res broker.SendResult, decision int32) broker.EndTransactionRequest {
	t.Helper()
	_, phys, err := codec.DecodeOffsetMsgID(res.OffsetMsgID)
	if err != nil {
		t.Fatalf("reply msgId %q: %v", res.OffsetMsgID, err)
	}
	return broker.EndTransactionRequest{ProducerGroup: "PG", TranStateTableOffset: res.QueueOffset,
		CommitLogOffset: phys, CommitOrRollback: decision, MsgID: res.TransactionID}
}

// TestCoreSendHalfCommit: a transactional SEND is stored as a half (not in
// its queue, nothing to pop), its result carries what END_TRANSACTION
// needs, and the commit built from it delivers the message once, with
// the SEND's UNIQ_KEY, body and real queue.
func TestCoreSendHalfCommit(t *testing.T) {
	f := brokertest.Start(t, nil, nil)
	createTopic(t, f, "TxnTopic", 2)
	r := halfSendReq(t, "TxnTopic", "hello")
	r.QueueID = 1
	res := mustSend(t, f, r)
	if res.TransactionID == "" || res.TransactionID != res.MsgID || res.QueueID != 1 || res.Topic != "TxnTopic" || res.Count != 1 {
		t.Fatalf("result %+v", res)
	}
	if f.Store.PendingHalves() != 1 || f.Store.MaxOffset("TxnTopic", 1) != 0 {
		t.Fatalf("halves %d, queue max %d", f.Store.PendingHalves(), f.Store.MaxOffset("TxnTopic", 1))
	}
	if got := popBodies(t, f, "G", "TxnTopic"); len(got) != 0 {
		t.Fatalf("half visible before commit: %d messages", len(got))
	}
	m := f.Broker.Transactions.Metrics()
	if testutil.ToFloat64(m.Prepared.WithLabelValues("TxnTopic")) != 1 {
		t.Fatalf("half not counted")
	}
	// A second half gets the next sequence number.
	res2 := mustSend(t, f, halfSendReq(t, "TxnTopic", "second"))
	if res2.QueueOffset != res.QueueOffset+1 {
		t.Fatalf("sequence %d then %d", res.QueueOffset, res2.QueueOffset)
	}
	if err := end(t, f, endOf(t, res, codec.SysFlagTransactionCommit)); err != nil {
		t.Fatalf("commit: %v", err)
	}
	msgs := readAll(t, f, "TxnTopic", 1)
	if len(msgs) != 1 || string(msgs[0].Body) != "hello" || msgs[0].MsgID() != res.MsgID {
		t.Fatalf("committed %+v", msgs)
	}
	if codec.TransactionType(msgs[0].SysFlag) != codec.SysFlagTransactionCommit {
		t.Fatalf("committed sysFlag %#x", msgs[0].SysFlag)
	}
	if got := testutil.ToFloat64(f.Broker.Metrics.MessagesIn.WithLabelValues("TxnTopic", "transaction", "false")); got != 1 {
		t.Fatalf("committed message counted %v times in messages_in of its topic", got)
	}
	if got := testutil.ToFloat64(f.Broker.Metrics.MessagesIn.WithLabelValues(transaction.HalfTopic, "transaction", "true")); got != 2 {
		t.Fatalf("halves counted %v times in messages_in of the half topic", got)
	}
	wantCodeRemark(t, end(t, f, endOf(t, res, codec.SysFlagTransactionCommit)), codec.SystemError, "Find prepared transaction message failed")
	if err := end(t, f, endOf(t, res2, codec.SysFlagTransactionRollback)); err != nil {
		t.Fatalf("rollback: %v", err)
	}
	if f.Store.PendingHalves() != 0 || f.Store.MaxOffset("TxnTopic", 0) != 0 {
		t.Fatalf("after rollback: halves %d, queue 0 max %d", f.Store.PendingHalves(), f.Store.MaxOffset("TxnTopic", 0))
	}
}

// TestCoreSendHalfDelayAtCommit: a half's DELAY level is not resolved at
// SEND (no timer entry, no delayed result); it acts at the commit.
func TestCoreSendHalfDelayAtCommit(t *testing.T) {
	f := brokertest.Start(t, nil, nil)
	createTopic(t, f, "TxnTopic", 1)
	res := mustSend(t, f, halfSendReq(t, "TxnTopic", "later", codec.PropertyDelayTimeLevel, "2"))
	if res.DeliverAtMillis != 0 || f.Store.PendingTimers() != 0 || f.Store.PendingHalves() != 1 {
		t.Fatalf("result %+v, timers %d, halves %d", res, f.Store.PendingTimers(), f.Store.PendingHalves())
	}
	if err := end(t, f, endOf(t, res, codec.SysFlagTransactionCommit)); err != nil {
		t.Fatalf("commit: %v", err)
	}
	if f.Store.PendingTimers() != 1 || f.Store.MaxOffset("TxnTopic", 0) != 0 {
		t.Fatalf("timers %d, queue max %d", f.Store.PendingTimers(), f.Store.MaxOffset("TxnTopic", 0))
	}
}

// TestCoreSendHalfOldClientRetry: TRAN_MSG on a message with
// reconsumeTimes > 0 and a DELAY level (a retry of a client before 4.6.1)
// is not a half: it is stored as a normal (delayed) message.
func TestCoreSendHalfOldClientRetry(t *testing.T) {
	f := brokertest.Start(t, nil, nil)
	createTopic(t, f, "TxnTopic", 1)
	r := halfSendReq(t, "TxnTopic", "retry", codec.PropertyDelayTimeLevel, "1")
	r.ReconsumeTimes = 1
	res := mustSend(t, f, r)
	if f.Store.PendingHalves() != 0 || res.DeliverAtMillis == 0 {
		t.Fatalf("result %+v, halves %d", res, f.Store.PendingHalves())
	}
}

// TestCoreSendHalfCheckedAfterRestart: a half stored by SEND survives a
// restart and is checked once --transaction-timeout passed; the check
// names the SEND's values and a commit from the check delivers it.
func TestCoreSendHalfCheckedAfterRestart(t *testing.T) {
	f := brokertest.Start(t, txnConfig(t, 15), nil)
	createTopic(t, f, "TxnTopic", 1)
	res := mustSend(t, f, halfSendReq(t, "TxnTopic", "orphan"))
	f.Restart()
	c := &recordingChecker{}
	f.Broker.Transactions.SetChecker(c)
	f.Broker.AdvanceClock(6_001)
	waitUntil(t, "a check", func() bool { return len(c.get()) >= 1 })
	ch := c.get()[0]
	if ch.OffsetMsgID != res.OffsetMsgID || ch.TranStateTableOffset != res.QueueOffset || ch.TransactionID != res.TransactionID ||
		ch.ProducerGroup != "PG" || ch.Topic != transaction.HalfTopic {
		t.Fatalf("check %+v for %+v", ch, res)
	}
	req := endOf(t, res, codec.SysFlagTransactionCommit)
	req.FromTransactionCheck = true
	if err := end(t, f, req); err != nil {
		t.Fatalf("commit from check: %v", err)
	}
	if msgs := readAll(t, f, "TxnTopic", 0); len(msgs) != 1 || string(msgs[0].Body) != "orphan" {
		t.Fatalf("committed %d messages", len(msgs))
	}
}

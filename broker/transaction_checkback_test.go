package broker_test

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/popshim/popshim/broker/brokertest"
	"github.com/popshim/popshim/broker/transaction"
	"github.com/popshim/popshim/codec"
)

// TestTransactionCheckBack: nothing is checked before
// --transaction-timeout; then the Checker gets the half with Java's header
// fields and body, the round is durable, and the producer's answer from
// the check commits it.
func TestTransactionCheckBack(t *testing.T) {
	f := brokertest.Start(t, txnConfig(t, 15), nil)
	c := &recordingChecker{}
	f.Broker.Transactions.SetChecker(c)
	createTopic(t, f, "TxnTopic", 1)
	r := prepare(t, f, halfMessage(f, "TxnTopic", "PG", "chk"))

	p := f.Broker.Transactions.Passes()
	waitUntil(t, "three loop passes", func() bool { return f.Broker.Transactions.Passes() >= p+3 })
	if n := len(c.get()); n != 0 {
		t.Fatalf("%d checks before the timeout", n)
	}
	f.Broker.AdvanceClock(6_001)
	waitUntil(t, "a check", func() bool { return len(c.get()) >= 1 })
	ch := c.get()[0]
	if ch.ProducerGroup != "PG" || ch.Topic != transaction.HalfTopic || ch.TranStateTableOffset != r.QueueOffset ||
		ch.CommitLogOffset != r.PhysicalOffset || ch.MsgID != "UNIQ-chk" || ch.TransactionID != "UNIQ-chk" ||
		ch.OffsetMsgID != r.OffsetMsgID || ch.BrokerName != brokertest.BrokerName {
		t.Fatalf("check %+v, half %+v", ch, r)
	}
	body, _, err := codec.DecodeMessage(ch.Body)
	if err != nil || body.Topic != "TxnTopic" || body.QueueID != 0 || string(body.Body) != "chk" {
		t.Fatalf("check body %+v (%v)", body, err)
	}
	if v, _ := body.Property(codec.PropertyTransactionCheckTimes); v != "1" {
		t.Fatalf("TRANSACTION_CHECK_TIMES %q", v)
	}
	h, ok, err := f.Store.Half(r.PhysicalOffset)
	if err != nil || !ok || h.Checks < 1 {
		t.Fatalf("round not durable: %+v %v %v", h, ok, err)
	}

	fromCheck := endReq("PG", r, codec.SysFlagTransactionCommit)
	fromCheck.FromTransactionCheck = true
	if err := end(t, f, fromCheck); err != nil {
		t.Fatalf("commit from check: %v", err)
	}
	msgs := popBodies(t, f, "G", "TxnTopic")
	if len(msgs) != 1 {
		t.Fatalf("got %d messages", len(msgs))
	}
	if v, _ := msgs[0].Property(codec.PropertyTransactionCheckTimes); v == "" {
		t.Fatalf("committed message lacks TRANSACTION_CHECK_TIMES")
	}
}

// TestTransactionCheckMaxMovesHalf: after --transaction-check-max rounds
// the half moves to TRANS_CHECK_MAX_TIME_TOPIC (created for it), is no
// longer pending and is never checked again (a late decision:
// transaction_late_test.go).
func TestTransactionCheckMaxMovesHalf(t *testing.T) {
	f := brokertest.Start(t, txnConfig(t, 2), nil)
	c := &recordingChecker{}
	f.Broker.Transactions.SetChecker(c)
	createTopic(t, f, "TxnTopic", 1)
	r := prepare(t, f, halfMessage(f, "TxnTopic", "PG", "max"))
	f.Broker.AdvanceClock(6_001)
	waitUntil(t, "the move", func() bool { return f.Store.MaxOffset(transaction.CheckMaxTopic, 0) == 1 })
	if n := len(c.get()); n != 2 {
		t.Fatalf("%d checks, want 2", n)
	}
	if _, ok := f.Broker.Topics.Get(transaction.CheckMaxTopic); !ok {
		t.Fatalf("%s not created", transaction.CheckMaxTopic)
	}
	if f.Store.PendingHalves() != 0 {
		t.Fatalf("half still pending")
	}
	if h, ok, err := f.Store.Half(r.PhysicalOffset); err != nil || !ok || !h.Discarded {
		t.Fatalf("half not kept for a late decision: %+v %v %v", h, ok, err)
	}
	f.Broker.AdvanceClock(60_000)
	p := f.Broker.Transactions.Passes()
	waitUntil(t, "two more passes", func() bool { return f.Broker.Transactions.Passes() >= p+2 })
	if n := len(c.get()); n != 2 {
		t.Fatalf("%d checks after the move", n)
	}
	if testutil.ToFloat64(f.Broker.Transactions.Metrics().CheckMax) != 1 {
		t.Fatalf("move not counted")
	}
}

// TestTransactionFirstRoundWaitsAnInterval: a half left overdue by a
// restart is not checked by the first pass after start (no producer can
// have reconnected yet) but one --transaction-check-interval later, as
// Java's check service waits an interval before its first round.
func TestTransactionFirstRoundWaitsAnInterval(t *testing.T) {
	cfg := txnConfig(t, 15)
	cfg.TransactionCheckInterval = time.Hour // passes run only when triggered
	f := brokertest.Start(t, cfg, nil)
	createTopic(t, f, "TxnTopic", 1)
	prepare(t, f, halfMessage(f, "TxnTopic", "PG", "overdue"))
	f.Restart()
	c := &recordingChecker{}
	f.Broker.Transactions.SetChecker(c)
	f.Broker.AdvanceClock(6_001) // past --transaction-timeout: due
	for i := 0; i < 3; i++ {
		p := f.Broker.Transactions.Passes()
		f.Broker.Transactions.Trigger()
		waitUntil(t, "a pass", func() bool { return f.Broker.Transactions.Passes() > p })
	}
	if n := len(c.get()); n != 0 {
		t.Fatalf("%d checks within the first interval after a restart", n)
	}
	f.Broker.AdvanceClock(time.Hour.Milliseconds())
	f.Broker.Transactions.Trigger()
	waitUntil(t, "the check one interval after start", func() bool { return len(c.get()) == 1 })
	if h := c.get()[0]; h.ProducerGroup != "PG" {
		t.Fatalf("check %+v", h)
	}
}

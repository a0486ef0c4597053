package broker_test

import (
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"

	"github.com/popshim/popshim/broker"
	"github.com/popshim/popshim/broker/brokertest"
	"github.com/popshim/popshim/broker/transaction"
	"github.com/popshim/popshim/codec"
	"github.com/popshim/popshim/conf"
)

// txnConfig is a fixture configuration whose check-back loop wakes every
// 5 ms (checks are driven by moving the broker clock).
func txnConfig(t *testing.T, checkMax int) *conf.Config {
	cfg := brokertest.Config(t.TempDir())
	cfg.TransactionCheckInterval = 5 * time.Millisecond
	cfg.TransactionCheckMax = checkMax
	return cfg
}

// halfMessage is the message a transactional SEND of body to
// topic/queue 0 by producer group group would build.
func halfMessage(f *brokertest.Fixture, topic, group, body string, extra ...string) *codec.MessageExt {
	props := ""
	kv := append([]string{codec.PropertyTransactionPrepared, "true", codec.PropertyProducerGroup, group,
		codec.PropertyUniqClientMessageIDKeyIdx, "UNIQ-" + body}, extra...)
	for i := 0; i < len(kv); i += 2 {
		props, _ = codec.SetProperty(props, kv[i], kv[i+1])
	}
	now := f.Broker.Now()
	return &codec.MessageExt{
		Message: codec.Message{Topic: topic, Body: []byte(body), Properties: props},
		SysFlag: codec.SysFlagTransactionPrepared, BornTimestamp: now, StoreTimestamp: now,
		BornHost: netip.MustParseAddrPort("127.0.0.1:40000"), StoreHost: f.Broker.StoreHost(),
	}
}

func prepare(t *testing.T, f *brokertest.Fixture, m *codec.MessageExt) broker.HalfResult {
	t.Helper()
	r, err := brokertest.Await(t, func(done func(broker.HalfResult, error)) {
		f.Broker.PrepareHalf(broker.HalfRequest{Message: m, ProducerGroup: "ignored"}, done)
	})
	if err != nil {
		t.Fatalf("prepare half: %v", err)
	}
	return r
}

// endReq is the END_TRANSACTION a producer sends for r.
func endReq(group string, r broker.HalfResult, decision int32) broker.EndTransactionRequest {
	return broker.EndTransactionRequest{ProducerGroup: group, TranStateTableOffset: r.QueueOffset,
		CommitLogOffset: r.PhysicalOffset, CommitOrRollback: decision, MsgID: r.TransactionID}
}

func end(t *testing.T, f *brokertest.Fixture, req broker.EndTransactionRequest) error {
	t.Helper()
	return brokertest.Await0(t, func(done func(error)) { f.Broker.EndTransaction(req, done) })
}

// popBodies pops topic for group and returns the messages.
func popBodies(t *testing.T, f *brokertest.Fixture, group, topic string) []codec.MessageExt {
	t.Helper()
	r, err := brokertest.Await(t, func(done func(broker.PopResult, error)) { f.Broker.Pop(popReq(group, topic, 32), done) })
	var e *broker.Error
	if errors.As(err, &e) && e.Code == codec.PollingTimeout {
		return nil // nothing to pop
	}
	if err != nil {
		t.Fatalf("pop: %v", err)
	}
	msgs, err := codec.DecodeMessages(r.Body)
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	return msgs
}

// TestTransactionCommitOnce: a half is invisible to POP and offsets; its
// commit appends it to the real queue as Java's commit log holds it, in
// one durable write with the half's removal; a second commit finds
// nothing and changes nothing.
func TestTransactionCommitOnce(t *testing.T) {
	f := brokertest.Start(t, nil, nil)
	createTopic(t, f, "TxnTopic", 1)
	hm := halfMessage(f, "TxnTopic", "PG", "b1")
	hm.BornTimestamp -= 75_000 // the producer made it 75 s before it was stored
	r := prepare(t, f, hm)
	if r.QueueOffset != 0 || r.QueueID != 0 || r.TransactionID != "UNIQ-b1" {
		t.Fatalf("half result %+v", r)
	}
	if host, phys, err := codec.DecodeOffsetMsgID(r.OffsetMsgID); err != nil || phys != r.PhysicalOffset || host != f.Broker.StoreHost() {
		t.Fatalf("offsetMsgId %s decodes to %v %d %v, want %d", r.OffsetMsgID, host, phys, err, r.PhysicalOffset)
	}
	if got := popBodies(t, f, "G1", "TxnTopic"); len(got) != 0 || f.Store.MaxOffset("TxnTopic", 0) != 0 {
		t.Fatalf("half visible: %d messages, max offset %d", len(got), f.Store.MaxOffset("TxnTopic", 0))
	}
	if n := f.Store.PendingHalves(); n != 1 {
		t.Fatalf("pending halves %d", n)
	}

	if err := end(t, f, endReq("PG", r, codec.SysFlagTransactionCommit)); err != nil {
		t.Fatalf("commit: %v", err)
	}
	msgs := popBodies(t, f, "G1", "TxnTopic")
	if len(msgs) != 1 || string(msgs[0].Body) != "b1" {
		t.Fatalf("after commit got %d messages", len(msgs))
	}
	m := msgs[0]
	if codec.TransactionType(m.SysFlag) != codec.SysFlagTransactionCommit || m.PreparedTransactionOffset != r.PhysicalOffset {
		t.Fatalf("sysFlag %#x preparedTransactionOffset %d", m.SysFlag, m.PreparedTransactionOffset)
	}
	for k, want := range map[string]string{codec.PropertyTransactionPrepared: "true", codec.PropertyProducerGroup: "PG",
		codec.PropertyTransactionID: "UNIQ-b1", codec.PropertyUniqClientMessageIDKeyIdx: "UNIQ-b1"} {
		if v, _ := m.Property(k); v != want {
			t.Errorf("property %s = %q, want %q", k, v, want)
		}
	}
	// A 5.5.1 broker's committed message has neither (endMessageTransaction).
	for _, k := range []string{codec.PropertyRealTopic, codec.PropertyRealQueueID} {
		if v, ok := m.Property(k); ok {
			t.Errorf("committed message keeps %s = %q", k, v)
		}
	}
	if f.Store.PendingHalves() != 0 {
		t.Fatalf("half not removed")
	}

	err := end(t, f, endReq("PG", r, codec.SysFlagTransactionCommit))
	wantCodeRemark(t, err, codec.SystemError, "Find prepared transaction message failed")
	if f.Store.MaxOffset("TxnTopic", 0) != 1 {
		t.Fatalf("second commit appended again: max offset %d", f.Store.MaxOffset("TxnTopic", 0))
	}
	if len(popBodies(t, f, "G2", "TxnTopic")) != 1 {
		t.Fatalf("a fresh group must see exactly one message")
	}
	m2 := f.Broker.Transactions.Metrics()
	if testutil.ToFloat64(m2.Commits.WithLabelValues("TxnTopic")) != 1 || testutil.ToFloat64(m2.Refused.WithLabelValues(transaction.ReasonNotFound)) != 1 {
		t.Fatalf("commit and refusal not counted")
	}
	// Whole seconds from the born time, in Java's buckets (EndTransactionProcessor).
	var dm dto.Metric
	if err := m2.FinishLatency.WithLabelValues("TxnTopic").(prometheus.Metric).Write(&dm); err != nil {
		t.Fatal(err)
	}
	h := dm.GetHistogram()
	var bounds []float64
	for _, b := range h.GetBucket() {
		bounds = append(bounds, b.GetUpperBound())
	}
	if h.GetSampleCount() != 1 || h.GetSampleSum() != 75 || fmt.Sprint(bounds) != "[5 60 600 3600 43200 86400]" {
		t.Fatalf("finish latency: count %d sum %v buckets %v, want 1, 75, Java's", h.GetSampleCount(), h.GetSampleSum(), bounds)
	}
}

// TestTransactionRollbackAndRefusals: rollback drops the half; forged
// offsets, a wrong group, unknown decisions and late producer decisions
// on an immunity half are refused, counted and change nothing.
func TestTransactionRollbackAndRefusals(t *testing.T) {
	f := brokertest.Start(t, nil, nil)
	createTopic(t, f, "TxnTopic", 1)
	r := prepare(t, f, halfMessage(f, "TxnTopic", "PG", "a"))

	bad := endReq("OtherGroup", r, codec.SysFlagTransactionCommit)
	wantCodeRemark(t, end(t, f, bad), codec.SystemError, "The producer group wrong")
	bad = endReq("PG", r, codec.SysFlagTransactionCommit)
	bad.TranStateTableOffset++
	wantCodeRemark(t, end(t, f, bad), codec.SystemError, "The transaction state table offset wrong")
	bad = endReq("PG", r, codec.SysFlagTransactionCommit)
	bad.CommitLogOffset++
	wantCodeRemark(t, end(t, f, bad), codec.SystemError, "Find prepared transaction message failed")
	bad = endReq("PG", r, 5)
	wantCodeRemark(t, end(t, f, bad), codec.SystemError, "commitOrRollback field wrong")
	if err := end(t, f, endReq("PG", r, codec.SysFlagTransactionNotType)); err != nil {
		t.Fatalf("unknown state: %v", err)
	}
	if f.Store.PendingHalves() != 1 || f.Store.MaxOffset("TxnTopic", 0) != 0 {
		t.Fatalf("a refused request changed something")
	}
	m := f.Broker.Transactions.Metrics()
	for reason, n := range map[string]float64{transaction.ReasonGroup: 1, transaction.ReasonOffset: 1, transaction.ReasonNotFound: 1} {
		if got := testutil.ToFloat64(m.Refused.WithLabelValues(reason)); got != n {
			t.Errorf("refused{%s} = %v, want %v", reason, got, n)
		}
	}

	if err := end(t, f, endReq("PG", r, codec.SysFlagTransactionRollback)); err != nil {
		t.Fatalf("rollback: %v", err)
	}
	if f.Store.PendingHalves() != 0 || f.Store.MaxOffset("TxnTopic", 0) != 0 {
		t.Fatalf("rollback left the half or appended")
	}
	wantCodeRemark(t, end(t, f, endReq("PG", r, codec.SysFlagTransactionCommit)), codec.SystemError, "Find prepared transaction message failed")

	// CHECK_IMMUNITY_TIME_IN_SECONDS=10: past 10 s only a check's answer decides.
	ri := prepare(t, f, halfMessage(f, "TxnTopic", "PG", "imm", codec.PropertyCheckImmunityTimeInSeconds, "10"))
	f.Broker.AdvanceClock(11_000)
	wantCodeRemark(t, end(t, f, endReq("PG", ri, codec.SysFlagTransactionCommit)), codec.IllegalOperation, "")
	fromCheck := endReq("PG", ri, codec.SysFlagTransactionCommit)
	fromCheck.FromTransactionCheck = true
	if err := end(t, f, fromCheck); err != nil {
		t.Fatalf("commit from check: %v", err)
	}
	if f.Store.MaxOffset("TxnTopic", 0) != 1 {
		t.Fatalf("immunity half not committed")
	}
}

// recordingChecker is a transaction.Checker that keeps what it is asked.
type recordingChecker struct {
	mu     sync.Mutex
	checks []transaction.Check
}

func (c *recordingChecker) Check(ch transaction.Check) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.checks = append(c.checks, ch)
	return true
}

func (c *recordingChecker) get() []transaction.Check {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]transaction.Check(nil), c.checks...)
}

// waitUntil polls cond until it holds or brokertest.AwaitTimeout passes.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(brokertest.AwaitTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// TestTransactionSurvivesRestart: halves, their sequence and due entries
// are durable; a commit after a restart delivers; the sequence goes on.
func TestTransactionSurvivesRestart(t *testing.T) {
	f := brokertest.Start(t, nil, nil)
	createTopic(t, f, "TxnTopic", 1)
	r := prepare(t, f, halfMessage(f, "TxnTopic", "PG", "durable"))
	f.Restart()
	if n := f.Store.PendingHalves(); n != 1 {
		t.Fatalf("pending halves after restart %d", n)
	}
	r2 := prepare(t, f, halfMessage(f, "TxnTopic", "PG", "second"))
	if r2.QueueOffset != r.QueueOffset+1 || r2.PhysicalOffset <= r.PhysicalOffset {
		t.Fatalf("sequence after restart: %+v then %+v", r, r2)
	}
	if err := end(t, f, endReq("PG", r, codec.SysFlagTransactionCommit)); err != nil {
		t.Fatalf("commit after restart: %v", err)
	}
	msgs := popBodies(t, f, "G", "TxnTopic")
	if len(msgs) != 1 || string(msgs[0].Body) != "durable" {
		t.Fatalf("got %d messages", len(msgs))
	}
}

// TestTransactionCommitDelayed: a committed half with a DELAY level
// becomes a timer entry, as Java's put hooks delay a committed message;
// a commit to a deleted topic is refused and keeps the half.
func TestTransactionCommitDelayed(t *testing.T) {
	f := brokertest.Start(t, nil, nil)
	createTopic(t, f, "TxnTopic", 1)
	r := prepare(t, f, halfMessage(f, "TxnTopic", "PG", "later", codec.PropertyDelayTimeLevel, strconv.Itoa(1)))
	if err := end(t, f, endReq("PG", r, codec.SysFlagTransactionCommit)); err != nil {
		t.Fatalf("commit: %v", err)
	}
	if f.Store.MaxOffset("TxnTopic", 0) != 0 || f.Store.PendingTimers() != 1 || f.Store.PendingHalves() != 0 {
		t.Fatalf("max offset %d, timers %d, halves %d", f.Store.MaxOffset("TxnTopic", 0), f.Store.PendingTimers(), f.Store.PendingHalves())
	}
	r2 := prepare(t, f, halfMessage(f, "NoSuchTopic", "PG", "lost"))
	_ = wantCode(t, end(t, f, endReq("PG", r2, codec.SysFlagTransactionCommit)), codec.TopicNotExist)
	if f.Store.PendingHalves() != 1 {
		t.Fatalf("refused commit dropped the half")
	}
}

package grpcserver

import (
	"context"
	"strconv"
	"testing"
	"time"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/popshim/popshim/broker"
	"github.com/popshim/popshim/broker/transaction"
	"github.com/popshim/popshim/conf"
)

// txnMessage is a transactional message as the v5 clients send it.
func txnMessage(topic, body string) *v2.Message {
	m := message(topic, body, "T")
	m.SystemProperties.MessageType = v2.MessageType_TRANSACTION
	return m
}

// end calls EndTransaction as client id and returns its Status.
func (f *fixture) end(id, topic, txID string, res v2.TransactionResolution, src v2.TransactionSource) *v2.Status {
	f.t.Helper()
	r, err := f.c.EndTransaction(f.ctx(id), &v2.EndTransactionRequest{Topic: &v2.Resource{Name: topic}, TransactionId: txID,
		MessageId: "mid", Resolution: res, Source: src})
	if err != nil {
		f.t.Fatalf("EndTransaction: %v", err)
	}
	return r.GetStatus()
}

// A TRANSACTION SendMessage stores half messages nobody can receive; the
// entry's transaction_id is the half's handle and its offset the half's
// sequence number. UNSPECIFIED changes nothing, COMMIT makes the message
// receivable once, ROLLBACK drops it, and a decided id is
// INVALID_TRANSACTION_ID.
func TestTransactionCommitRollback(t *testing.T) {
	f := newFixture(t, nil, nil)
	topic, group := unique("txn"), unique("cg_txn")
	f.createTopic(topic, 2, "TRANSACTION")
	m1, m2 := txnMessage(topic, "one"), txnMessage(topic, "two")
	r := f.send("p@1", m1, m2)
	if len(r.GetEntries()) != 2 {
		t.Fatalf("entries %v", r)
	}
	ids := make([]string, 2)
	for i, e := range r.GetEntries() {
		h, err := broker.ParseTransactionHandle(e.GetTransactionId())
		if err != nil || e.GetOffset() != h.TranStateTableOffset || e.GetMessageId() != []*v2.Message{m1, m2}[i].GetSystemProperties().GetMessageId() {
			t.Fatalf("entry %d: %v (%v)", i, e, err)
		}
		ids[i] = e.GetTransactionId()
	}
	if ids[0] == ids[1] {
		t.Fatalf("one transaction id for two halves: %q", ids[0])
	}
	if n := f.core.Store.PendingHalves(); n != 2 {
		t.Fatalf("%d halves pending, want 2", n)
	}
	f.checkNoMessage(group, topic)
	if st := f.end("p@1", topic, ids[0], v2.TransactionResolution_TRANSACTION_RESOLUTION_UNSPECIFIED, v2.TransactionSource_SOURCE_CLIENT); st.GetCode() != v2.Code_OK {
		t.Fatalf("unspecified: %v", st)
	}
	f.checkNoMessage(group, topic)
	if st := f.end("p@1", topic, ids[0], v2.TransactionResolution_COMMIT, v2.TransactionSource_SOURCE_CLIENT); st.GetCode() != v2.Code_OK {
		t.Fatalf("commit: %v", st)
	}
	if st := f.end("p@1", topic, ids[1], v2.TransactionResolution_ROLLBACK, v2.TransactionSource_SOURCE_CLIENT); st.GetCode() != v2.Code_OK {
		t.Fatalf("rollback: %v", st)
	}
	if n := f.core.Store.PendingHalves(); n != 0 {
		t.Fatalf("%d halves pending after both decisions", n)
	}
	got := f.receiveN("c@1", simpleReceive(group, topic, 5*time.Second), 1, 5)
	if got[0].GetSystemProperties().GetMessageId() != m1.GetSystemProperties().GetMessageId() || string(got[0].GetBody()) != "one" ||
		got[0].GetUserProperties()["idx"] != "7" {
		t.Fatalf("committed message %v", got[0])
	}
	// The rolled-back one never comes (the committed one is in flight).
	f.checkNoMessage(group, topic)
	for i, id := range ids {
		for _, res := range []v2.TransactionResolution{v2.TransactionResolution_COMMIT, v2.TransactionResolution_ROLLBACK} {
			if st := f.end("p@1", topic, id, res, v2.TransactionSource_SOURCE_CLIENT); st.GetCode() != v2.Code_INVALID_TRANSACTION_ID {
				t.Errorf("second decision %s of %d: %v", res, i, st)
			}
		}
	}
}

// EndTransaction refusals, none of which decides the half; the right
// request afterwards commits it.
func TestEndTransactionRefusals(t *testing.T) {
	f := newFixture(t, nil, nil)
	topic, other := unique("txn"), unique("txn_other")
	f.createTopic(topic, 1, "TRANSACTION")
	f.createTopic(other, 1, "TRANSACTION")
	id := f.send("p@1", txnMessage(topic, "x")).GetEntries()[0].GetTransactionId()
	h, err := broker.ParseTransactionHandle(id)
	if err != nil {
		t.Fatal(err)
	}
	wrongSeq := broker.TransactionHandle{CommitLogOffset: h.CommitLogOffset, TranStateTableOffset: h.TranStateTableOffset + 1}.String()
	cases := []struct {
		name, client, topic, id string
		want                    v2.Code
	}{
		{"blank id", "p@1", topic, " ", v2.Code_INVALID_TRANSACTION_ID},
		{"id that does not parse", "p@1", topic, "tx-1", v2.Code_INVALID_TRANSACTION_ID},
		{"no such half", "p@1", topic, broker.TransactionHandle{CommitLogOffset: h.CommitLogOffset + 1000}.String(), v2.Code_INVALID_TRANSACTION_ID},
		{"another topic's producer group", "p@1", other, id, v2.Code_INVALID_TRANSACTION_ID},
		{"wrong sequence number", "p@1", topic, wrongSeq, v2.Code_INVALID_TRANSACTION_ID},
		{"bad topic name", "p@1", "bad topic", id, v2.Code_ILLEGAL_TOPIC},
		{"no client id", "", topic, id, v2.Code_CLIENT_ID_REQUIRED},
	}
	for _, c := range cases {
		if st := f.end(c.client, c.topic, c.id, v2.TransactionResolution_COMMIT, v2.TransactionSource_SOURCE_CLIENT); st.GetCode() != c.want {
			t.Errorf("%s: %v, want %s", c.name, st, c.want)
		}
	}
	if st := f.end("p@1", topic, " ", v2.TransactionResolution_COMMIT, v2.TransactionSource_SOURCE_CLIENT); st.GetMessage() != "transaction id cannot be empty" {
		t.Errorf("blank id message %q", st.GetMessage())
	}
	if f.core.Store.PendingHalves() != 1 {
		t.Fatalf("a refusal decided the half")
	}
	if st := f.end("p@1", topic, id, v2.TransactionResolution_COMMIT, v2.TransactionSource_SOURCE_CLIENT); st.GetCode() != v2.Code_OK {
		t.Fatalf("commit after the refusals: %v", st)
	}
}

// orphaned_transaction_recovery_duration becomes the half's immunity: past
// it the producer's own decision is refused (BAD_REQUEST) and only an
// answer to a check is applied.
func TestEndTransactionAfterImmunity(t *testing.T) {
	f := newFixture(t, nil, nil)
	topic := unique("txn")
	f.createTopic(topic, 1, "TRANSACTION")
	m := txnMessage(topic, "late")
	m.SystemProperties.OrphanedTransactionRecoveryDuration = durationpb.New(30 * time.Second)
	id := f.send("p@1", m).GetEntries()[0].GetTransactionId()
	f.core.Broker.AdvanceClock(31_000)
	if st := f.end("p@1", topic, id, v2.TransactionResolution_COMMIT, v2.TransactionSource_SOURCE_CLIENT); st.GetCode() != v2.Code_BAD_REQUEST {
		t.Fatalf("producer's decision after the immunity: %v", st)
	}
	if st := f.end("p@1", topic, id, v2.TransactionResolution_ROLLBACK, v2.TransactionSource_SOURCE_SERVER_CHECK); st.GetCode() != v2.Code_OK {
		t.Fatalf("answer to a check: %v", st)
	}
	if f.core.Store.PendingHalves() != 0 {
		t.Fatalf("half still pending")
	}
}

// An undecided half is checked through the producer's Telemetry stream:
// a RecoverOrphanedTransactionCommand with the half as a v5 Message and
// the SendResultEntry's transaction id; EndTransaction with
// SOURCE_SERVER_CHECK commits it. Only producers of the topic with an open
// stream are asked.
func TestOrphanRecoveredOverTelemetry(t *testing.T) {
	f := newFixture(t, func(c *conf.Config) { c.TransactionCheckInterval = 50 * time.Millisecond }, nil)
	topic, other, group := unique("txn"), unique("txn_other"), unique("cg_txn")
	f.createTopic(topic, 1, "TRANSACTION")
	stream, _ := settingsRoundTrip(t, f.c, "txp@1", goProducerSettings(topic))
	settingsRoundTrip(t, f.c, "txo@1", goProducerSettings(other))
	settingsRoundTrip(t, f.c, "txc@1", goSimpleSettings(group, topic))
	if n := len(f.srv.svc.clients.producerStreams(topic)); n != 1 {
		t.Fatalf("%d producer streams for %s, want 1", n, topic)
	}
	m := txnMessage(topic, "orphan")
	e := f.send("txp@1", m).GetEntries()[0]
	f.core.Broker.AdvanceClock(6_001)

	var cmd *v2.RecoverOrphanedTransactionCommand
	for cmd == nil {
		item, err := stream.Recv() // the stream's context bounds the wait
		if err != nil {
			t.Fatalf("telemetry: %v", err)
		}
		cmd = item.GetRecoverOrphanedTransactionCommand()
	}
	got, sp := cmd.GetMessage(), cmd.GetMessage().GetSystemProperties()
	if cmd.GetTransactionId() != e.GetTransactionId() || got.GetTopic().GetName() != topic || string(got.GetBody()) != "orphan" ||
		sp.GetMessageId() != m.GetSystemProperties().GetMessageId() || sp.GetMessageType() != v2.MessageType_TRANSACTION ||
		sp.GetTag() != "T" || len(sp.GetKeys()) != 2 || got.GetUserProperties()["idx"] != "7" || sp.GetReceiptHandle() != "" ||
		sp.GetBodyDigest().GetChecksum() != md5Upper(got.GetBody()) {
		t.Fatalf("command %v, entry %v", cmd, e)
	}
	if st := f.end("txp@1", topic, cmd.GetTransactionId(), v2.TransactionResolution_COMMIT, v2.TransactionSource_SOURCE_SERVER_CHECK); st.GetCode() != v2.Code_OK {
		t.Fatalf("commit from the check: %v", st)
	}
	msgs := f.receiveN("c@1", simpleReceive(group, topic, 5*time.Second), 1, 5)
	if string(msgs[0].GetBody()) != "orphan" {
		t.Fatalf("committed %v", msgs[0])
	}
}

// The checker answers false, so the round counts as unsent, when no
// producer of the group has an open stream; a stream's outbox refuses
// past its capacity instead of waiting.
func TestTransactionCheckerWithoutStream(t *testing.T) {
	f := newFixture(t, nil, nil)
	k := &txnChecker{svc: f.srv.svc}
	if k.Check(transaction.Check{ProducerGroup: "nobody"}) {
		t.Fatal("sent to nobody")
	}
	topic := unique("txn")
	ctx, cancel := context.WithCancel(withClient(context.Background(), "gone@1"))
	stream, err := f.c.Telemetry(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := stream.Send(&v2.TelemetryCommand{Command: &v2.TelemetryCommand_Settings{Settings: goProducerSettings(topic)}}); err != nil {
		t.Fatal(err)
	}
	if _, err := stream.Recv(); err != nil {
		t.Fatal(err)
	}
	if !waitFor(100, func() bool { return len(f.srv.svc.clients.producerStreams(topic)) == 1 }) {
		t.Fatal("stream not registered")
	}
	cancel()
	if !waitFor(500, func() bool { return len(f.srv.svc.clients.producerStreams(topic)) == 0 }) {
		t.Fatal("ended stream still registered")
	}
	if k.Check(transaction.Check{ProducerGroup: topic}) {
		t.Fatal("sent on an ended stream")
	}
	ts := newTelemetryStream(nil)
	for i := 0; i < telemetryOutbox; i++ {
		if !ts.offer(&v2.TelemetryCommand{}) {
			t.Fatalf("offer %d refused", i)
		}
	}
	if ts.offer(&v2.TelemetryCommand{}) {
		t.Fatal("offer past the outbox capacity " + strconv.Itoa(telemetryOutbox))
	}
}

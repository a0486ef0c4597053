package grpcdirect

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	rmq "github.com/apache/rocketmq-clients/golang/v5"
)

// txnTopic returns the topic named by env (created with
// +message.type=TRANSACTION or DELAY: popshim checks a message's type
// against its topic, as the proxy does, and a topic created by a v5
// producer's route query is NORMAL); the test is skipped without it.
func txnTopic(t *testing.T, env string) string {
	tp := os.Getenv(env)
	if tp == "" {
		t.Skip(env + " is not set: run.sh grpc creates the topic with mqadmin and sets it")
	}
	return tp
}

// checkLog records what the producer's TransactionChecker was asked.
type checkLog struct {
	mu     sync.Mutex
	counts map[string]int // idx → checks
}

func (c *checkLog) add(idx string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.counts[idx]++
}

func (c *checkLog) has(idx ...string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, i := range idx {
		if c.counts[i] == 0 {
			return false
		}
	}
	return true
}

func (c *checkLog) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return fmt.Sprint(c.counts)
}

// TestTransactionProducer: the Go v5 transactional Producer straight to
// popshim's gRPC endpoint, as P7TransactionTest through the proxy.
// Environment: POPSHIM_GRPC_TXN_TOPIC, a topic with
// +message.type=TRANSACTION; popshim with a short
// --transaction-check-interval (run.sh: 2 s) so the orphans are checked
// soon after --transaction-timeout (6 s).
//
// Message 1 is committed and 2 rolled back by the producer; 3 and 4 are
// left open: popshim's check reaches the producer as
// RecoverOrphanedTransactionCommand on its Telemetry stream, and its
// checker commits 3 and rolls 4 back (the Go client answers with
// EndTransaction). Message 5, committed after the checker answered, ends
// the run. A SimpleConsumer filtering on this run's tag receives 1, 3 and
// 5 once each with body, keys and property, never 2 or 4; decided
// messages are never checked.
func TestTransactionProducer(t *testing.T) {
	ep := endpoint(t)
	topic := txnTopic(t, "POPSHIM_GRPC_TXN_TOPIC")
	run := "run" + strconv.FormatInt(time.Now().UnixNano(), 36)
	group := "grpcdirect_txn_cg_" + run
	checks := &checkLog{counts: map[string]int{}}
	onCheck := map[string]rmq.TransactionResolution{"3": rmq.COMMIT, "4": rmq.ROLLBACK}
	checker := &rmq.TransactionChecker{Check: func(mv *rmq.MessageView) rmq.TransactionResolution {
		if mv.GetProperties()["run"] != run {
			return rmq.ROLLBACK // an orphan of an earlier run on the same topic
		}
		idx := mv.GetProperties()["idx"]
		checks.add(idx)
		if r, ok := onCheck[idx]; ok {
			return r
		}
		return rmq.UNKNOWN
	}}
	p, err := rmq.NewProducer(config(ep, ""), rmq.WithTopics(topic), rmq.WithTransactionChecker(checker))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(); err != nil {
		t.Fatalf("producer start: %v", err)
	}
	defer p.GracefulStop()
	c, err := rmq.NewSimpleConsumer(config(ep, group), rmq.WithSimpleAwaitDuration(5*time.Second),
		rmq.WithSimpleSubscriptionExpressions(map[string]*rmq.FilterExpression{topic: rmq.NewFilterExpression(run)}))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(); err != nil {
		t.Fatalf("consumer start: %v", err)
	}
	defer c.GracefulStop()

	idxByID := map[string]string{}
	send := func(i int) rmq.Transaction {
		m := &rmq.Message{Topic: topic, Body: []byte("txn body " + strconv.Itoa(i))}
		m.SetTag(run)
		m.SetKeys("txn-key-" + strconv.Itoa(i))
		m.AddProperty("idx", strconv.Itoa(i))
		m.AddProperty("run", run)
		tx := p.BeginTransaction()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		rs, err := p.SendWithTransaction(ctx, m, tx)
		cancel()
		if err != nil || len(rs) != 1 || rs[0].MessageID == "" || rs[0].TransactionId == "" {
			t.Fatalf("send %d: %v %+v", i, err, rs)
		}
		idxByID[rs[0].MessageID] = strconv.Itoa(i)
		return tx
	}
	for i := 1; i <= 4; i++ {
		tx := send(i)
		switch i {
		case 1:
			if err := tx.Commit(); err != nil {
				t.Fatalf("commit 1: %v", err)
			}
		case 2:
			if err := tx.RollBack(); err != nil {
				t.Fatalf("rollback 2: %v", err)
			}
		}
	}
	for deadline := time.Now().Add(120 * time.Second); !checks.has("3", "4"); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the checker was not asked about 3 and 4; checks: %v", checks)
		}
	}
	if err := send(5).Commit(); err != nil {
		t.Fatalf("commit 5: %v", err)
	}

	deliveries := map[string]int{}
	for deadline := time.Now().Add(bound); deliveries["1"] == 0 || deliveries["3"] == 0 || deliveries["5"] == 0; {
		if time.Now().After(deadline) {
			t.Fatalf("deliveries %v; checks %v", deliveries, checks)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		mvs, err := c.Receive(ctx, 16, 30*time.Second)
		cancel()
		if err != nil {
			if notFound(err) {
				continue
			}
			t.Fatalf("receive: %v", err)
		}
		for _, mv := range mvs {
			idx, ok := idxByID[mv.GetMessageId()]
			switch {
			case !ok:
				t.Fatalf("received %s, never sent in this run", mv.GetMessageId())
			case string(mv.GetBody()) != "txn body "+idx || mv.GetProperties()["idx"] != idx ||
				len(mv.GetKeys()) != 1 || mv.GetKeys()[0] != "txn-key-"+idx:
				t.Fatalf("message %s: body %q keys %v properties %v", idx, mv.GetBody(), mv.GetKeys(), mv.GetProperties())
			}
			deliveries[idx]++
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			if err := c.Ack(ctx, mv); err != nil {
				t.Fatalf("ack %s: %v", idx, err)
			}
			cancel()
		}
	}
	// One more receive: anything else committed by now (2, 4, a second copy)
	// would come with it.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	mvs, err := c.Receive(ctx, 16, 30*time.Second)
	cancel()
	if err != nil && !notFound(err) {
		t.Fatalf("receive: %v", err)
	}
	for _, mv := range mvs {
		deliveries[idxByID[mv.GetMessageId()]]++
	}
	if len(deliveries) != 3 || deliveries["1"] != 1 || deliveries["3"] != 1 || deliveries["5"] != 1 {
		t.Fatalf("deliveries per message %v, want 1, 3 and 5 once each", deliveries)
	}
	if checks.has("1") || checks.has("2") || checks.has("5") {
		t.Fatalf("decided messages were checked: %v", checks)
	}
}

// TestRecall: the Go v5 Producer's Recall with the recall handle of a
// delayed message's SendReceipt. Environment: POPSHIM_GRPC_DELAY_TOPIC, a
// topic with +message.type=DELAY, and popshim with
// --recall-message-enable. Two messages are due 5 s after sending; one is
// recalled (Recall returns its message id), and a SimpleConsumer gets only
// the other.
func TestRecall(t *testing.T) {
	ep := endpoint(t)
	topic := txnTopic(t, "POPSHIM_GRPC_DELAY_TOPIC")
	run := "run" + strconv.FormatInt(time.Now().UnixNano(), 36)
	p, err := rmq.NewProducer(config(ep, ""), rmq.WithTopics(topic))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(); err != nil {
		t.Fatalf("producer start: %v", err)
	}
	defer p.GracefulStop()
	c, err := rmq.NewSimpleConsumer(config(ep, "grpcdirect_recall_cg_"+run), rmq.WithSimpleAwaitDuration(5*time.Second),
		rmq.WithSimpleSubscriptionExpressions(map[string]*rmq.FilterExpression{topic: rmq.NewFilterExpression(run)}))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(); err != nil {
		t.Fatalf("consumer start: %v", err)
	}
	defer c.GracefulStop()
	due := time.Now().Add(5 * time.Second)
	receipts := map[string]*rmq.SendReceipt{}
	for _, body := range []string{"recalled", "kept"} {
		m := &rmq.Message{Topic: topic, Body: []byte(body)}
		m.SetTag(run)
		m.SetDelayTimestamp(due)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		rs, err := p.Send(ctx, m)
		cancel()
		if err != nil || len(rs) != 1 || rs[0].RecallHandle == "" {
			t.Fatalf("send %s: %v %+v", body, err, rs)
		}
		receipts[body] = rs[0]
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	id, err := p.Recall(ctx, topic, receipts["recalled"].RecallHandle)
	cancel()
	if err != nil || id != receipts["recalled"].MessageID {
		t.Fatalf("recall: %q %v, want %s", id, err, receipts["recalled"].MessageID)
	}
	var got []string
	for deadline := time.Now().Add(bound); len(got) == 0; {
		if time.Now().After(deadline) {
			t.Fatal("the kept message never came")
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		mvs, err := c.Receive(ctx, 16, 30*time.Second)
		cancel()
		if err != nil && !notFound(err) {
			t.Fatalf("receive: %v", err)
		}
		for _, mv := range mvs {
			got = append(got, string(mv.GetBody()))
		}
	}
	// Both were due at the same time: the recalled one would have come too.
	ctx, cancel = context.WithTimeout(context.Background(), 20*time.Second)
	mvs, err := c.Receive(ctx, 16, 30*time.Second)
	cancel()
	if err != nil && !notFound(err) {
		t.Fatalf("receive: %v", err)
	}
	for _, mv := range mvs {
		got = append(got, string(mv.GetBody()))
	}
	if len(got) != 1 || got[0] != "kept" {
		t.Fatalf("delivered %q, want only kept", got)
	}
}

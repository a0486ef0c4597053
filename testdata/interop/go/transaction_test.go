//go:build interop

package interop

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2"
	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"
	"github.com/apache/rocketmq-client-go/v2/rlog"
)

// metric sums every sample of the Prometheus series name on popshim's /metrics (0 when absent).
func (p *popshim) metric(name string) (float64, error) {
	resp, err := http.Get("http://" + p.metrics + "/metrics")
	if err != nil {
		return 0, err
	}
	defer func() { _ = resp.Body.Close() }()
	sum := 0.0
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, name+" ") || strings.HasPrefix(line, name+"{") {
			v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
			if err != nil {
				return 0, err
			}
			sum += v
		}
	}
	return sum, sc.Err()
}

// txnListener answers the local transaction and the broker's checks from per-message tables keyed by the
// "idx" property, and counts the checks.
type txnListener struct {
	mu      sync.Mutex
	local   map[int]primitive.LocalTransactionState
	onCheck map[int]primitive.LocalTransactionState
	checks  map[int]int
}

func idxOf(m *primitive.Message) int {
	i, err := strconv.Atoi(m.GetProperty("idx"))
	if err != nil {
		return -1
	}
	return i
}

func (l *txnListener) ExecuteLocalTransaction(m *primitive.Message) primitive.LocalTransactionState {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.local[idxOf(m)]
}

func (l *txnListener) CheckLocalTransaction(m *primitive.MessageExt) primitive.LocalTransactionState {
	l.mu.Lock()
	defer l.mu.Unlock()
	i := idxOf(&m.Message)
	l.checks[i]++
	if s, ok := l.onCheck[i]; ok {
		return s
	}
	return primitive.UnkonwnState
}

func (l *txnListener) checked(i int) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.checks[i]
}

// TestGoClientTransactions: rocketmq-client-go's transaction producer commits, rolls back, and leaves two
// messages UNKNOW for the broker's check, which commits one and rolls the other back. The Go push consumer
// (PULL path) gets each committed message exactly once and no rolled-back one; popshim's half-message gauge
// reaching 0 with two rollbacks counted says every decision was applied. The producer heartbeats to the
// broker once a second after start and then every 30 s, so the checks reach it within ~35 s.
func TestGoClientTransactions(t *testing.T) {
	rlog.SetLogLevel("error")
	shim := startPopshim(t, "--transaction-timeout", "1s", "--transaction-check-interval", "500ms",
		"--transaction-check-max", "200")
	suffix := strconv.FormatInt(time.Now().UnixNano(), 36)
	topic := "go_txn_" + suffix
	ns := primitive.NewPassthroughResolver([]string{shim.namesrv})
	l := &txnListener{
		local: map[int]primitive.LocalTransactionState{1: primitive.CommitMessageState, 2: primitive.RollbackMessageState,
			3: primitive.UnkonwnState, 4: primitive.UnkonwnState, 5: primitive.CommitMessageState},
		onCheck: map[int]primitive.LocalTransactionState{3: primitive.CommitMessageState, 4: primitive.RollbackMessageState},
		checks:  map[int]int{},
	}
	p, err := rocketmq.NewTransactionProducer(l,
		producer.WithNsResolver(ns),
		producer.WithGroupName("go_txn_pg_"+suffix),
		producer.WithInstanceName("go_txn_p_"+suffix),
		producer.WithRetry(2),
		producer.WithSendMsgTimeout(10*time.Second),
	)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(); err != nil {
		t.Fatalf("transaction producer start: %v", err)
	}
	defer func() { _ = p.Shutdown() }()

	specs := map[int]spec{}
	sendTxn := func(i int) {
		t.Helper()
		specs[i] = makeSpec(topic, i)
		r, err := p.SendMessageInTransaction(context.Background(), specs[i].message(topic))
		if err != nil || r.Status != primitive.SendOK {
			t.Fatalf("transactional send %d: result %v err %v\n%s", i, r, err, shim.tail())
		}
		if r.State != l.local[i] {
			t.Fatalf("send %d: local state %v, want %v", i, r.State, l.local[i])
		}
		if r.TransactionID == "" || r.TransactionID != r.MsgID {
			t.Fatalf("send %d: transactionId %q, msgId %q", i, r.TransactionID, r.MsgID)
		}
	}
	for i := 1; i <= 4; i++ {
		sendTxn(i)
	}

	var mu sync.Mutex
	seen := map[int]int{}
	var problems []string
	c, err := rocketmq.NewPushConsumer(
		consumer.WithNsResolver(ns),
		consumer.WithGroupName("go_txn_cg_"+suffix),
		consumer.WithInstance("go_txn_c_"+suffix),
		consumer.WithConsumerModel(consumer.Clustering),
		consumer.WithConsumeFromWhere(consumer.ConsumeFromFirstOffset),
	)
	if err != nil {
		t.Fatal(err)
	}
	err = c.Subscribe(topic, consumer.MessageSelector{}, func(_ context.Context, msgs ...*primitive.MessageExt) (consumer.ConsumeResult, error) {
		mu.Lock()
		defer mu.Unlock()
		for _, m := range msgs {
			i := idxOf(&m.Message)
			seen[i]++
			if s, ok := specs[i]; !ok {
				problems = append(problems, fmt.Sprintf("message never committed: %v", m))
			} else if d := s.check(topic, m); d != "" {
				problems = append(problems, fmt.Sprintf("idx %d: %s", i, d))
			}
		}
		return consumer.ConsumeSuccess, nil
	})
	startPushConsumer(t, shim, c, err)

	waitFor := func(what string, limit time.Duration, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(limit)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("%s not reached within %v\n%s", what, limit, shim.tail())
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	waitFor("every half decided", 90*time.Second, func() bool {
		h, err1 := shim.metric("rocketmq_half_messages")
		rb, err2 := shim.metric("rocketmq_rollback_messages_total")
		return err1 == nil && err2 == nil && h == 0 && rb == 2
	})
	// A last commit after every decision: once it is consumed, nothing older is in flight.
	sendTxn(5)
	waitFor("the committed messages", 60*time.Second, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return seen[1] > 0 && seen[3] > 0 && seen[5] > 0
	})
	mu.Lock()
	defer mu.Unlock()
	for _, pr := range problems {
		t.Error(pr)
	}
	for i, want := range map[int]int{1: 1, 2: 0, 3: 1, 4: 0, 5: 1} {
		if seen[i] != want {
			t.Errorf("idx %d delivered %d times, want %d", i, seen[i], want)
		}
	}
	if l.checked(3) == 0 || l.checked(4) == 0 || l.checked(1) != 0 || l.checked(2) != 0 {
		t.Errorf("checks per message: %v (want some for 3 and 4 only)", l.checks)
	}
}

//go:build interop

package interop

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2"
	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"
	"github.com/apache/rocketmq-client-go/v2/rlog"
)

// delivery is one message as an orderly listener saw it: which consumer instance, the queue and the
// broker's queue offset (the order a queue must be consumed in), and whether another listener call was on
// the same queue at that moment.
type delivery struct {
	inst    string
	queue   int
	offset  int64
	overlap bool
}

// TestGoClientOrderlyTwoInstances runs two Go push consumers of one group with WithConsumerOrder(true)
// (client-side rebalance; each queue is taken with LOCK_BATCH_MQ and renewed every 2 s here) under a
// steady producer (round robin over the auto-created topic's 8 queues). A consumes alone, then B joins: the broker's NOTIFY_CONSUMER_IDS_CHANGED
// makes A drop half the queues at once; the Go client does not unlock a queue it drops (push_consumer.go
// removeUnnecessaryMessageQueue: "TODO orderly"), so B locks it after popshim's lock expiry
// (--rebalance-lock-max-live-time 6s here) at its next rebalance. Per queue, over both instances in the
// order the listeners ran: offsets start at 0 and each delivery is the next offset or a redelivery from an
// earlier one (never a skip), every offset sent is consumed, and no two listener calls ran on one queue at
// once. Both instances consume.
func TestGoClientOrderlyTwoInstances(t *testing.T) {
	rlog.SetLogLevel("error")
	shim := startPopshim(t, "--rebalance-lock-max-live-time", "6s")
	suffix := strconv.FormatInt(time.Now().UnixNano(), 36)
	topic := "go_ord_" + suffix
	group := "go_ord_cg_" + suffix
	ns := primitive.NewPassthroughResolver([]string{shim.namesrv})

	p, err := rocketmq.NewProducer(producer.WithNsResolver(ns), producer.WithGroupName("go_ord_pg_"+suffix),
		producer.WithInstanceName("go_ord_p_"+suffix), producer.WithRetry(2), producer.WithSendMsgTimeout(10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(); err != nil {
		t.Fatalf("producer start: %v", err)
	}
	defer func() { _ = p.Shutdown() }()

	var mu sync.Mutex
	var log []delivery
	perInst := map[string]int{}
	inFlight := map[int]int{}
	listener := func(inst string) func(context.Context, ...*primitive.MessageExt) (consumer.ConsumeResult, error) {
		return func(_ context.Context, msgs ...*primitive.MessageExt) (consumer.ConsumeResult, error) {
			if len(msgs) == 0 {
				return consumer.ConsumeSuccess, nil
			}
			q := msgs[0].Queue.QueueId
			mu.Lock()
			inFlight[q]++
			overlap := inFlight[q] > 1
			for _, m := range msgs {
				log = append(log, delivery{inst: inst, queue: m.Queue.QueueId, offset: m.QueueOffset, overlap: overlap})
				perInst[inst]++
			}
			mu.Unlock()
			time.Sleep(time.Millisecond) // a listener call that takes a moment, so overlaps could show
			mu.Lock()
			inFlight[q]--
			mu.Unlock()
			return consumer.ConsumeSuccess, nil
		}
	}
	newConsumer := func(inst string) rocketmq.PushConsumer {
		c, err := rocketmq.NewPushConsumer(consumer.WithNsResolver(ns), consumer.WithGroupName(group),
			consumer.WithInstance("go_ord_"+inst+"_"+suffix), consumer.WithConsumerModel(consumer.Clustering),
			consumer.WithConsumeFromWhere(consumer.ConsumeFromFirstOffset), consumer.WithConsumerOrder(true),
			consumer.WithRebalanceLockInterval(2*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Subscribe(topic, consumer.MessageSelector{}, listener(inst)); err != nil {
			t.Fatal(err)
		}
		return c
	}

	// The producer: one message per round-robin pick, a pause of 20 ms after every 4, until stopped (bounded).
	var stop atomic.Bool
	sentMax := map[int]int64{} // queue → highest offset sent
	var sendErr error
	produced := make(chan struct{})
	go func() {
		defer close(produced)
		for i := 0; i < 20000 && !stop.Load(); i++ {
			m := primitive.NewMessage(topic, []byte(fmt.Sprintf("ord %d", i)))
			m.WithProperty("i", strconv.Itoa(i))
			r, err := p.SendSync(context.Background(), m)
			mu.Lock()
			if err != nil || r.Status != primitive.SendOK {
				sendErr = fmt.Errorf("send %d: result %v err %v", i, r, err)
				mu.Unlock()
				return
			}
			if o, ok := sentMax[r.MessageQueue.QueueId]; !ok || r.QueueOffset > o {
				sentMax[r.MessageQueue.QueueId] = r.QueueOffset
			}
			mu.Unlock()
			if i%4 == 3 {
				time.Sleep(20 * time.Millisecond)
			}
		}
	}()
	defer func() { stop.Store(true); <-produced }()

	consumed := func(inst string) int {
		mu.Lock()
		defer mu.Unlock()
		return perInst[inst]
	}
	waitFor := func(what string, max time.Duration, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(max)
		for !cond() {
			if time.Now().After(deadline) {
				mu.Lock()
				state := fmt.Sprintf("consumed per instance %v, sent max offsets %v, send error %v", perInst, sentMax, sendErr)
				mu.Unlock()
				t.Fatalf("timed out after %v waiting for %s (%s)\n%s", max, what, state, shim.tail())
			}
			time.Sleep(100 * time.Millisecond)
		}
	}

	// the Go consumer's Start needs the topic's route: the producer's first SEND creates the topic
	waitFor("the first messages sent", 60*time.Second, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(sentMax) > 0 || sendErr != nil
	})
	a := newConsumer("a")
	if err := a.Start(); err != nil {
		t.Fatalf("consumer a start: %v\n%s", err, shim.tail())
	}
	defer func() { _ = a.Shutdown() }()
	waitFor("A consuming 40 messages", 90*time.Second, func() bool { return consumed("a") >= 40 })
	b := newConsumer("b")
	if err := b.Start(); err != nil {
		t.Fatalf("consumer b start: %v\n%s", err, shim.tail())
	}
	defer func() { _ = b.Shutdown() }()
	// B's first lock attempt at its start finds A's locks; its next rebalance (20 s) comes after their expiry.
	waitFor("B consuming 40 messages", 120*time.Second, func() bool { return consumed("b") >= 40 })
	stop.Store(true)
	<-produced
	mu.Lock()
	err = sendErr
	mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	waitFor("every message sent consumed", 120*time.Second, func() bool {
		mu.Lock()
		defer mu.Unlock()
		seen := map[int]map[int64]bool{}
		for _, d := range log {
			if seen[d.queue] == nil {
				seen[d.queue] = map[int64]bool{}
			}
			seen[d.queue][d.offset] = true
		}
		for q, max := range sentMax {
			if int64(len(seen[q])) < max+1 {
				return false
			}
		}
		return true
	})

	mu.Lock()
	defer mu.Unlock()
	if len(sentMax) < 2 {
		t.Errorf("messages went to queues %v only, want the topic's queues", sentMax)
	}
	byQueue := map[int][]delivery{}
	for _, d := range log {
		byQueue[d.queue] = append(byQueue[d.queue], d)
		if d.overlap {
			t.Errorf("queue %d offset %d: two listener calls on the queue at once (%s)", d.queue, d.offset, d.inst)
		}
	}
	queues := make([]int, 0, len(byQueue))
	for q := range byQueue {
		queues = append(queues, q)
	}
	sort.Ints(queues)
	redelivered := 0
	for _, q := range queues {
		ds := byQueue[q]
		if ds[0].offset != 0 {
			t.Errorf("queue %d: first delivery is offset %d, want 0", q, ds[0].offset)
		}
		for i := 1; i < len(ds); i++ {
			prev, cur := ds[i-1], ds[i]
			switch {
			case cur.offset == prev.offset+1:
			case cur.offset <= prev.offset:
				redelivered++
			default:
				t.Errorf("queue %d: offset %d (%s) after %d (%s): %d skipped", q, cur.offset, cur.inst, prev.offset, prev.inst, cur.offset-prev.offset-1)
			}
		}
	}
	t.Logf("sent max offsets %v; consumed per instance %v; %d deliveries, %d redeliveries at hand-overs", sentMax, perInst, len(log), redelivered)
}

// TestGoClientSQL92Subscription subscribes a Go push consumer with MessageSelector{Type: SQL92}. The Go
// client sends the expression only in its heartbeat (its PULL_MESSAGE carries expressionType TAG, no
// subscription, push_consumer.go), and filters only tags itself, so popshim must evaluate the registered
// SQL92 subscription. 60 messages with properties n and color, then one matching "fence" message per queue
// (sent with a manual queue selector): once every matching message and every fence arrived, any message
// the filter should have kept back would have come before its queue's fence. Exactly the matching messages
// arrive, once each.
func TestGoClientSQL92Subscription(t *testing.T) {
	rlog.SetLogLevel("error")
	shim := startPopshim(t)
	suffix := strconv.FormatInt(time.Now().UnixNano(), 36)
	topic := "go_sql_" + suffix
	ns := primitive.NewPassthroughResolver([]string{shim.namesrv})
	const expr = "(n >= 20 AND color = 'red') OR fence = 'yes'"

	newProducer := func(name string, opts ...producer.Option) rocketmq.Producer {
		p, err := rocketmq.NewProducer(append([]producer.Option{producer.WithNsResolver(ns),
			producer.WithGroupName("go_sql_pg_" + name + suffix), producer.WithInstanceName("go_sql_" + name + suffix),
			producer.WithRetry(2), producer.WithSendMsgTimeout(10 * time.Second)}, opts...)...)
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Start(); err != nil {
			t.Fatalf("producer start: %v", err)
		}
		t.Cleanup(func() { _ = p.Shutdown() })
		return p
	}
	p := newProducer("p")
	want := map[string]bool{} // "i" of the messages the selector matches, fences as "fence-<queue>"
	queues := map[int]*primitive.MessageQueue{}
	for i := 0; i < 60; i++ {
		color := []string{"red", "green", "blue"}[i%3]
		m := primitive.NewMessage(topic, []byte(fmt.Sprintf("sql %d", i)))
		m.WithProperty("i", strconv.Itoa(i))
		m.WithProperty("n", strconv.Itoa(i))
		m.WithProperty("color", color)
		r, err := p.SendSync(context.Background(), m)
		if err != nil || r.Status != primitive.SendOK {
			t.Fatalf("send %d: result %v err %v\n%s", i, r, err, shim.tail())
		}
		queues[r.MessageQueue.QueueId] = r.MessageQueue
		if i >= 20 && color == "red" {
			want[strconv.Itoa(i)] = true
		}
	}
	fp := newProducer("f", producer.WithQueueSelector(producer.NewManualQueueSelector()))
	for q, mq := range queues {
		m := primitive.NewMessage(topic, []byte("fence"))
		m.WithProperty("i", "fence-"+strconv.Itoa(q))
		m.WithProperty("fence", "yes")
		m.Queue = mq
		r, err := fp.SendSync(context.Background(), m)
		if err != nil || r.Status != primitive.SendOK || r.MessageQueue.QueueId != q {
			t.Fatalf("fence to queue %d: result %v err %v\n%s", q, r, err, shim.tail())
		}
		want["fence-"+strconv.Itoa(q)] = true
	}

	var mu sync.Mutex
	got := map[string]int{}
	c, err := rocketmq.NewPushConsumer(consumer.WithNsResolver(ns), consumer.WithGroupName("go_sql_cg_"+suffix),
		consumer.WithInstance("go_sql_c_"+suffix), consumer.WithConsumerModel(consumer.Clustering),
		consumer.WithConsumeFromWhere(consumer.ConsumeFromFirstOffset))
	if err != nil {
		t.Fatal(err)
	}
	err = c.Subscribe(topic, consumer.MessageSelector{Type: consumer.SQL92, Expression: expr},
		func(_ context.Context, msgs ...*primitive.MessageExt) (consumer.ConsumeResult, error) {
			mu.Lock()
			defer mu.Unlock()
			for _, m := range msgs {
				got[m.GetProperty("i")]++
			}
			return consumer.ConsumeSuccess, nil
		})
	startPushConsumer(t, shim, c, err)

	deadline := time.Now().Add(90 * time.Second)
	for {
		mu.Lock()
		missing := 0
		for k := range want {
			if got[k] == 0 {
				missing++
			}
		}
		mu.Unlock()
		if missing == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d matching messages (fences included) not received within 90 s; got %v\n%s", missing, len(want), got, shim.tail())
		}
		time.Sleep(100 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	for k, n := range got {
		switch {
		case !want[k]:
			t.Errorf("message %s does not match %q but was delivered %d times", k, expr, n)
		case n != 1:
			t.Errorf("message %s delivered %d times, want once", k, n)
		}
	}
	t.Logf("%d matching messages and fences on %d queues received once each, nothing else", len(want), len(queues))
}

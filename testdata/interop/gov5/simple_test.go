// Package gov5 runs the Apache RocketMQ v5 Go client (gRPC, github.com/apache/rocketmq-clients/golang/v5)
// through rocketmq-proxy in cluster mode in front of popshim. It is its own module so that the root
// go.mod does not gain the client's gRPC dependencies; testdata/interop/run.sh starts popshim and the
// proxy, creates the topic and runs `go test` here with:
//
//	INTEROP_PROXY  the proxy's gRPC endpoint, host:port
//	INTEROP_TOPIC  an existing topic (through an Apache name server a topic must exist before use)
package gov5

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	rmq "github.com/apache/rocketmq-clients/golang/v5"
)

const (
	n = 30
	// invisible is the receive invisible time; the proxy refuses less than 10 s.
	invisible = 10 * time.Second
	// reviveSlack is how long after its invisible time a message may take to come back.
	reviveSlack = 8 * time.Second
)

func env(t *testing.T, name string) string {
	v := os.Getenv(name)
	if v == "" {
		t.Fatalf("%s is not set: run testdata/interop/run.sh proxy, which starts popshim and the proxy", name)
	}
	return v
}

func init() {
	rmq.EnableSsl = false
	if os.Getenv("rocketmq.client.logRoot") == "" {
		_ = os.Setenv("rocketmq.client.logRoot", os.TempDir())
	}
	rmq.ResetLogger()
}

// notFound reports whether a receive error only says that no message was there (MESSAGE_NOT_FOUND).
func notFound(err error) bool {
	var e *rmq.ErrRpcStatus
	if errors.As(err, &e) && e.GetCode() == 40401 {
		return true
	}
	return strings.Contains(err.Error(), "MESSAGE_NOT_FOUND")
}

type delivery struct {
	mv *rmq.MessageView
	at time.Time
}

type received struct {
	mu   sync.Mutex
	byID map[string][]delivery
}

func (r *received) add(mv *rmq.MessageView) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.byID[mv.GetMessageId()] = append(r.byID[mv.GetMessageId()], delivery{mv, time.Now()})
}

func (r *received) count(pred func([]delivery) bool) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := 0
	for _, ds := range r.byID {
		if pred(ds) {
			c++
		}
	}
	return c
}

// receiveUntil receives until done() or the timeout; each message is recorded, then handed to each.
func receiveUntil(t *testing.T, c rmq.SimpleConsumer, r *received, timeout time.Duration, done func() bool,
	each func(*rmq.MessageView) error) []*rmq.MessageView {
	var got []*rmq.MessageView
	deadline := time.Now().Add(timeout)
	for !done() && time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		mvs, err := c.Receive(ctx, 16, invisible)
		cancel()
		if err != nil {
			if notFound(err) {
				continue
			}
			t.Fatalf("receive: %v", err)
		}
		for _, mv := range mvs {
			r.add(mv)
			got = append(got, mv)
			if err := each(mv); err != nil {
				t.Fatalf("message %s (%s): %v", mv.GetMessageId(), string(mv.GetBody()), err)
			}
		}
	}
	return got
}

// TestV5SimpleConsumerThroughProxy: a v5 Producer sends n messages; a v5 SimpleConsumer receives each,
// as sent, with delivery attempt 1. A third is acked, a third gets ChangeInvisibleDuration then Ack, a
// third is left alone and comes back with delivery attempt 2 after its invisible time, then is acked.
// After that nothing comes back.
func TestV5SimpleConsumerThroughProxy(t *testing.T) {
	endpoint := env(t, "INTEROP_PROXY")
	topic := env(t, "INTEROP_TOPIC")
	group := fmt.Sprintf("gov5_cg_%d", time.Now().UnixNano())
	cfg := &rmq.Config{Endpoint: endpoint, ConsumerGroup: group}

	producer, err := rmq.NewProducer(&rmq.Config{Endpoint: endpoint}, rmq.WithTopics(topic))
	if err != nil {
		t.Fatalf("new producer: %v", err)
	}
	if err := producer.Start(); err != nil {
		t.Fatalf("producer start: %v", err)
	}
	defer producer.GracefulStop()
	idxByID := map[string]int{}
	for i := 0; i < n; i++ {
		m := &rmq.Message{Topic: topic, Body: []byte("gov5 body " + strconv.Itoa(i))}
		m.SetTag("Tag" + strconv.Itoa(i%2))
		m.SetKeys("key-"+strconv.Itoa(i), "k2")
		m.AddProperty("idx", strconv.Itoa(i))
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		rs, err := producer.Send(ctx, m)
		cancel()
		if err != nil {
			t.Fatalf("send %d: %v", i, err)
		}
		if len(rs) != 1 || rs[0].MessageID == "" {
			t.Fatalf("send %d: receipts %+v", i, rs)
		}
		idxByID[rs[0].MessageID] = i
	}
	if len(idxByID) != n {
		t.Fatalf("%d distinct message ids for %d sends", len(idxByID), n)
	}

	c, err := rmq.NewSimpleConsumer(cfg, rmq.WithSimpleAwaitDuration(5*time.Second),
		rmq.WithSimpleSubscriptionExpressions(map[string]*rmq.FilterExpression{topic: rmq.SUB_ALL}))
	if err != nil {
		t.Fatalf("new simple consumer: %v", err)
	}
	if err := c.Start(); err != nil {
		t.Fatalf("simple consumer start (group %s): %v", group, err)
	}
	defer c.GracefulStop()

	r := &received{byID: map[string][]delivery{}}
	left := map[string]bool{}
	receiveUntil(t, c, r, 90*time.Second, func() bool { return r.count(func([]delivery) bool { return true }) >= n },
		func(mv *rmq.MessageView) error {
			idx, ok := idxByID[mv.GetMessageId()]
			if !ok {
				return fmt.Errorf("never sent")
			}
			if got := string(mv.GetBody()); got != "gov5 body "+strconv.Itoa(idx) {
				return fmt.Errorf("body %q", got)
			}
			if tag := mv.GetTag(); tag == nil || *tag != "Tag"+strconv.Itoa(idx%2) {
				return fmt.Errorf("tag %v", tag)
			}
			if keys := mv.GetKeys(); len(keys) != 2 || !contains(keys, "key-"+strconv.Itoa(idx)) {
				return fmt.Errorf("keys %v", keys)
			}
			if p := mv.GetProperties()["idx"]; p != strconv.Itoa(idx) {
				return fmt.Errorf("property idx %q", p)
			}
			if a := mv.GetDeliveryAttempt(); a != 1 {
				return fmt.Errorf("first delivery attempt %d", a)
			}
			switch idx % 3 {
			case 0:
				return ack(c, mv)
			case 1:
				if err := c.ChangeInvisibleDuration(mv, 15*time.Second); err != nil {
					return fmt.Errorf("change invisible duration: %w", err)
				}
				return ack(c, mv)
			default:
				left[mv.GetMessageId()] = true
				return nil
			}
		})
	if got := r.count(func([]delivery) bool { return true }); got != n {
		t.Fatalf("received %d of %d messages", got, n)
	}
	if twice := r.count(func(ds []delivery) bool { return len(ds) > 1 }); twice != 0 {
		t.Fatalf("%d messages delivered twice inside their invisible time", twice)
	}

	// The ones left alone come back with attempt 2, no earlier than their invisible time; ack them.
	backTwice := func() bool {
		r.mu.Lock()
		defer r.mu.Unlock()
		for id := range left {
			if len(r.byID[id]) < 2 {
				return false
			}
		}
		return true
	}
	receiveUntil(t, c, r, invisible+reviveSlack+20*time.Second, backTwice, func(mv *rmq.MessageView) error {
		if !left[mv.GetMessageId()] {
			return fmt.Errorf("came back although it was acked (attempt %d)", mv.GetDeliveryAttempt())
		}
		if a := mv.GetDeliveryAttempt(); a != 2 {
			return fmt.Errorf("delivery attempt %d the second time, want 2", a)
		}
		return ack(c, mv)
	})
	r.mu.Lock()
	for id := range left {
		ds := r.byID[id]
		if len(ds) != 2 {
			r.mu.Unlock()
			t.Fatalf("never-acked message idx %d delivered %d times, want 2", idxByID[id], len(ds))
		}
		if gap := ds[1].at.Sub(ds[0].at); gap < invisible-time.Second {
			r.mu.Unlock()
			t.Fatalf("never-acked message idx %d came back after %v, before its invisible time %v", idxByID[id], gap, invisible)
		}
	}
	r.mu.Unlock()

	// Everything is acked now (the changed ones had 15 s): nothing may come back.
	late := receiveUntil(t, c, r, 15*time.Second+reviveSlack, func() bool { return false }, func(mv *rmq.MessageView) error {
		return ack(c, mv)
	})
	if len(late) > 0 {
		var s []string
		for _, mv := range late {
			s = append(s, fmt.Sprintf("idx %d attempt %d", idxByID[mv.GetMessageId()], mv.GetDeliveryAttempt()))
		}
		t.Fatalf("acked messages came back: %v", s)
	}
}

func ack(c rmq.SimpleConsumer, mv *rmq.MessageView) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Ack(ctx, mv); err != nil {
		return fmt.Errorf("ack: %w", err)
	}
	return nil
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// Package grpcdirect runs the Apache RocketMQ v5 Go client
// (github.com/apache/rocketmq-clients/golang/v5) straight against popshim's
// own gRPC endpoint (--grpc-listen), with no rocketmq-proxy. It is its own
// module so the root go.mod does not compile the client's dependencies.
// Environment:
//
//	POPSHIM_GRPC_ENDPOINT  host:port of popshim's gRPC endpoint; the tests skip when it is unset
//	POPSHIM_GRPC_TLS       "true" to connect with TLS (the client does not verify the certificate), default plaintext
//	POPSHIM_GRPC_TOPIC     topic to use; default a fresh name per run (needs topic auto-creation)
//	POPSHIM_GRPC_TXN_TOPIC   a topic with +message.type=TRANSACTION: TestTransactionProducer skips without it
//	POPSHIM_GRPC_DELAY_TOPIC a topic with +message.type=DELAY: TestRecall skips without it (popshim needs --recall-message-enable)
//
// Run: cd testdata/interop/grpcdirect && POPSHIM_GRPC_ENDPOINT=127.0.0.1:8081 go test -count=1 -v .
package grpcdirect

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	rmq "github.com/apache/rocketmq-clients/golang/v5"
	"github.com/apache/rocketmq-clients/golang/v5/credentials"
)

const (
	n = 20
	// invisible is the receive invisible time (the proxy's floor is 10 s; popshim should accept it too).
	invisible = 10 * time.Second
	// bound turns a hang into a failure with what was seen so far; no assertion depends on speed.
	bound = 90 * time.Second
)

func init() {
	rmq.EnableSsl = os.Getenv("POPSHIM_GRPC_TLS") == "true"
	if os.Getenv("rocketmq.client.logRoot") == "" {
		_ = os.Setenv("rocketmq.client.logRoot", os.TempDir())
	}
	rmq.ResetLogger()
}

func endpoint(t *testing.T) string {
	e := os.Getenv("POPSHIM_GRPC_ENDPOINT")
	if e == "" {
		t.Skip("POPSHIM_GRPC_ENDPOINT is not set: start popshim with --grpc-listen and point this at it")
	}
	return e
}

func topicName() string {
	if t := os.Getenv("POPSHIM_GRPC_TOPIC"); t != "" {
		return t
	}
	return fmt.Sprintf("grpcdirect_%d", time.Now().UnixNano())
}

func config(ep, group string) *rmq.Config {
	// v5.1.4 sends no authorization header without credentials; empty ones keep older versions from crashing.
	return &rmq.Config{Endpoint: ep, ConsumerGroup: group, Credentials: &credentials.SessionCredentials{}}
}

func notFound(err error) bool {
	var e *rmq.ErrRpcStatus
	return errors.As(err, &e) && e.GetCode() == 40401 || strings.Contains(err.Error(), "MESSAGE_NOT_FOUND")
}

// TestProduceReceiveChangeAck: a Producer sends n messages (tag, two keys,
// a user property); a SimpleConsumer receives each once with its content and
// delivery attempt 1; even ones get ChangeInvisibleDuration then Ack with
// the new handle, odd ones a plain Ack. The last receive finds nothing.
func TestProduceReceiveChangeAck(t *testing.T) {
	ep := endpoint(t)
	topic := topicName()
	group := fmt.Sprintf("grpcdirect_cg_%d", time.Now().UnixNano())

	p, err := rmq.NewProducer(config(ep, ""), rmq.WithTopics(topic))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(); err != nil {
		t.Fatalf("producer start: %v", err)
	}
	defer p.GracefulStop()
	sent := map[string]int{}
	for i := 0; i < n; i++ {
		m := &rmq.Message{Topic: topic, Body: []byte("grpcdirect " + strconv.Itoa(i))}
		m.SetTag("Tag" + strconv.Itoa(i%2))
		m.SetKeys("key-"+strconv.Itoa(i), "k2")
		m.AddProperty("idx", strconv.Itoa(i))
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		rs, err := p.Send(ctx, m)
		cancel()
		if err != nil || len(rs) != 1 || rs[0].MessageID == "" {
			t.Fatalf("send %d: %v %+v", i, err, rs)
		}
		sent[rs[0].MessageID] = i
	}

	c, err := rmq.NewSimpleConsumer(config(ep, group), rmq.WithSimpleAwaitDuration(5*time.Second),
		rmq.WithSimpleSubscriptionExpressions(map[string]*rmq.FilterExpression{topic: rmq.SUB_ALL}))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(); err != nil {
		t.Fatalf("consumer start: %v", err)
	}
	defer c.GracefulStop()

	seen := map[string]bool{}
	deadline := time.Now().Add(bound)
	for len(seen) < n && time.Now().Before(deadline) {
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
			idx, ok := sent[mv.GetMessageId()]
			switch {
			case !ok:
				t.Fatalf("received %s, never sent", mv.GetMessageId())
			case seen[mv.GetMessageId()]:
				t.Fatalf("message %d delivered twice inside its invisible time", idx)
			case string(mv.GetBody()) != "grpcdirect "+strconv.Itoa(idx):
				t.Fatalf("message %d body %q", idx, mv.GetBody())
			case mv.GetTag() == nil || *mv.GetTag() != "Tag"+strconv.Itoa(idx%2):
				t.Fatalf("message %d tag %v", idx, mv.GetTag())
			case len(mv.GetKeys()) != 2 || mv.GetProperties()["idx"] != strconv.Itoa(idx):
				t.Fatalf("message %d keys %v properties %v", idx, mv.GetKeys(), mv.GetProperties())
			case mv.GetDeliveryAttempt() != 1:
				t.Fatalf("message %d delivery attempt %d", idx, mv.GetDeliveryAttempt())
			}
			seen[mv.GetMessageId()] = true
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			if idx%2 == 0 {
				if err := c.ChangeInvisibleDuration(mv, 15*time.Second); err != nil {
					t.Fatalf("change %d: %v", idx, err)
				}
			}
			// The Go client ignores a non-OK Ack status; the empty receive below checks it worked.
			if err := c.Ack(ctx, mv); err != nil {
				t.Fatalf("ack %d: %v", idx, err)
			}
			cancel()
		}
	}
	if len(seen) != n {
		t.Fatalf("received %d of %d messages", len(seen), n)
	}
	// Everything is acked: after the changed invisible time nothing comes back.
	end := time.Now().Add(15*time.Second + 8*time.Second)
	for time.Now().Before(end) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		mvs, err := c.Receive(ctx, 16, invisible)
		cancel()
		if err != nil && !notFound(err) {
			t.Fatalf("receive: %v", err)
		}
		if len(mvs) > 0 {
			t.Fatalf("acked message %d came back (attempt %d)", sent[mvs[0].GetMessageId()], mvs[0].GetDeliveryAttempt())
		}
	}
}

//go:build interop

package interop

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2"
	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"
	"github.com/apache/rocketmq-client-go/v2/rlog"
)

// TestGoClientWithCredentials runs the Go producer and push consumer with primitive.Credentials (the
// client's ACL interceptor signs every request, HEART_BEAT and the PULL path included) against popshim
// with --auth-enabled: 50 messages go through. A producer with a wrong secret gets no message in.
func TestGoClientWithCredentials(t *testing.T) {
	rlog.SetLogLevel("error")
	const ak, sk, n = "go-interop-root", "go-interop-secret", 50
	shim := startPopshim(t, "--auth-enabled", "--auth-admin-user", ak, "--auth-admin-password", sk)
	suffix := strconv.FormatInt(time.Now().UnixNano(), 36)
	topic := "go_auth_" + suffix
	ns := primitive.NewPassthroughResolver([]string{shim.namesrv})
	creds := primitive.Credentials{AccessKey: ak, SecretKey: sk}

	newProducer := func(c primitive.Credentials, name string) rocketmq.Producer {
		p, err := rocketmq.NewProducer(producer.WithNsResolver(ns), producer.WithGroupName("go_apg_"+name+suffix),
			producer.WithInstanceName("go_ap_"+name+suffix), producer.WithRetry(1),
			producer.WithSendMsgTimeout(10*time.Second), producer.WithCredentials(c))
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Start(); err != nil {
			t.Fatalf("producer start: %v", err)
		}
		t.Cleanup(func() { _ = p.Shutdown() })
		return p
	}
	p := newProducer(creds, "ok")
	for i := 0; i < n; i++ {
		m := primitive.NewMessage(topic, []byte("auth body "+strconv.Itoa(i)))
		m.WithProperty("idx", strconv.Itoa(i))
		r, err := p.SendSync(context.Background(), m)
		if err != nil || r.Status != primitive.SendOK {
			t.Fatalf("signed send %d: %v %v\n%s", i, r, err, shim.tail())
		}
	}
	bad := newProducer(primitive.Credentials{AccessKey: ak, SecretKey: "wrong"}, "bad")
	_, err := bad.SendSync(context.Background(), primitive.NewMessage(topic, []byte("must not arrive")))
	if err == nil {
		t.Fatalf("send with a wrong secret succeeded")
	}
	t.Logf("send with a wrong secret: %v", err)

	var mu sync.Mutex
	seen := map[string]int{}
	c, err := rocketmq.NewPushConsumer(consumer.WithNsResolver(ns), consumer.WithGroupName("go_acg_"+suffix),
		consumer.WithInstance("go_ac_"+suffix), consumer.WithConsumeFromWhere(consumer.ConsumeFromFirstOffset),
		consumer.WithCredentials(creds))
	if err != nil {
		t.Fatal(err)
	}
	err = c.Subscribe(topic, consumer.MessageSelector{}, func(_ context.Context, msgs ...*primitive.MessageExt) (consumer.ConsumeResult, error) {
		mu.Lock()
		defer mu.Unlock()
		for _, m := range msgs {
			seen[string(m.Body)]++
		}
		return consumer.ConsumeSuccess, nil
	})
	startPushConsumer(t, shim, c, err)
	deadline := time.Now().Add(60 * time.Second)
	for {
		mu.Lock()
		got := len(seen)
		_, leaked := seen["must not arrive"]
		mu.Unlock()
		if leaked {
			t.Fatalf("the message sent with a wrong secret was stored")
		}
		if got == n {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("signed push consumer got %d of %d messages in 60 s\n%s", got, n, shim.tail())
		}
		time.Sleep(100 * time.Millisecond)
	}
}
